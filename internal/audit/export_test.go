package audit

import "time"

// File is the writer's view of the active file, for fault injection.
type File = file

// WithOpenFile makes the log open its active file with open.
func WithOpenFile(c Config, open func(path string) (File, error)) Config {
	c.openFile = open
	return c
}

// OpenAppend is the default opener.
func OpenAppend(path string) (File, error) { return openAppend(path) }

// WithTicker makes the log take the ticks of FsyncInterval from tick, which the writer calls once,
// with Config.FsyncInterval, when it starts.
func WithTicker(c Config, tick func(time.Duration) <-chan time.Time) Config {
	c.tickEvery = func(d time.Duration) (<-chan time.Time, func()) { return tick(d), func() {} }
	return c
}

// WithStateSignal makes the log send on the returned channel after each change of its writer's
// failure state. The send never blocks: a signal not yet received stands for all later ones.
func WithStateSignal(c Config) (Config, <-chan struct{}) {
	ch := make(chan struct{}, 1)
	c.changed = func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return c, ch
}
