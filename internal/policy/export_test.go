package policy

// WithPollHook makes a Watcher built from o call polled after each check Run makes.
func WithPollHook(o WatchOptions, polled func()) WatchOptions {
	o.polled = polled
	return o
}
