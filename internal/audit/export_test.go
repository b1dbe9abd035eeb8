package audit

// File is the writer's view of the active file, for fault injection.
type File = file

// WithOpenFile makes the log open its active file with open.
func WithOpenFile(c Config, open func(path string) (File, error)) Config {
	c.openFile = open
	return c
}

// OpenAppend is the default opener.
func OpenAppend(path string) (File, error) { return openAppend(path) }
