package policy

// WithPollHook makes a Watcher built from o call polled after each check Run makes.
func WithPollHook(o WatchOptions, polled func()) WatchOptions {
	o.polled = polled
	return o
}

// Poll makes one check of w's file, as Run does on each tick.
func Poll(w *Watcher) error { return w.check(false) }
