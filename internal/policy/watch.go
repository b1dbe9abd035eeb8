package policy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWatchInterval is how often a Watcher looks at its file when no interval is given.
const DefaultWatchInterval = 500 * time.Millisecond

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Interval between checks of the file; DefaultWatchInterval when zero.
	Interval time.Duration
	// OnReload is called with each new policy after it replaced the old one.
	OnReload func(*Policy)
	// OnRecover is called, with the policy in force, when the file loads again after a reported
	// failure and holds that same policy (it was restored); OnReload is called instead when it
	// holds a new one.
	OnRecover func(*Policy)
	// OnError is called when the file cannot be read or does not parse; the old policy stays.
	// A file that stays broken is reported once, not on every check.
	OnError func(error)

	// polled, when set, is called after each check Run makes; tests count polls with it.
	polled func()
}

// Watcher keeps a policy in step with its file. It polls the file's size, modification time and
// identity (a cheap stat, so no file-notification dependency is needed and editors that replace
// files by renaming are handled). A changed file is loaded only once it has settled: when two
// consecutive polls see the same identity, size, modification time and content hash, so a file
// still being written in place is not loaded half-way. A file renamed into place settles at
// once and is loaded on the poll after the one that saw it. The new policy is parsed in full and
// swapped in only when valid. Readers call Policy, which is a single atomic load.
type Watcher struct {
	path      string
	interval  time.Duration
	onReload  func(*Policy)
	onRecover func(*Policy)
	onError   func(error)
	polled    func()

	current atomic.Pointer[Policy]

	mu      sync.Mutex // serialises checks; guards the fields below
	last    os.FileInfo
	pending *sighting // a change seen by the last poll, not yet loaded
	lastErr string
}

// sighting is the file as one poll saw it.
type sighting struct {
	info os.FileInfo
	sum  [sha256.Size]byte
}

// NewWatcher loads the policy at path and returns a Watcher serving it. A file that does not load
// is an error here: there is no old policy to keep.
func NewWatcher(path string, opts WatchOptions) (*Watcher, error) {
	w := &Watcher{
		path: path, interval: opts.Interval, onReload: opts.OnReload, onRecover: opts.OnRecover,
		onError: opts.OnError, polled: opts.polled,
	}
	if w.interval <= 0 {
		w.interval = DefaultWatchInterval
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	p, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	w.current.Store(p)
	w.last = info
	return w, nil
}

// Policy returns the current policy.
func (w *Watcher) Policy() *Policy { return w.current.Load() }

// Run checks the file every interval until ctx is done, then returns ctx.Err().
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			w.check(false)
			if w.polled != nil {
				w.polled()
			}
		}
	}
}

// Reload reads the file now, whether or not it looks changed or has settled (for SIGHUP and
// admin endpoints: the operator says the file is complete). It reports through OnReload,
// OnRecover and OnError like a polled reload and also returns the error.
func (w *Watcher) Reload() error { return w.check(true) }

func (w *Watcher) check(force bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	info, err := os.Stat(w.path)
	if err != nil {
		return w.fail(fmt.Errorf("policy reload: %w (keeping policy %s)", err, w.current.Load().Digest()), force)
	}
	if !force && w.last != nil && sameFile(w.last, info) {
		w.pending = nil // back to what was loaded
		return nil
	}
	data, err := os.ReadFile(w.path)
	if err != nil {
		return w.fail(fmt.Errorf("policy reload: %w (keeping policy %s)", err, w.current.Load().Digest()), force)
	}
	seen := &sighting{info: info, sum: sha256.Sum256(data)}
	if !force && (w.pending == nil || !sameFile(w.pending.info, info) || w.pending.sum != seen.sum) {
		w.pending = seen // changed since the last poll: load it when the next one sees it unchanged
		return nil
	}
	w.pending, w.last = nil, info
	old := w.current.Load()
	p, err := Parse(data, w.path)
	if err != nil {
		return w.fail(fmt.Errorf("policy reload: %w (keeping policy %s)", err, old.Digest()), force)
	}
	recovered := w.lastErr != ""
	w.lastErr = ""
	if p.Digest() == old.Digest() {
		if recovered && w.onRecover != nil {
			w.onRecover(old) // restored to the policy in force
		}
		return nil // touched, not changed
	}
	w.current.Store(p)
	if w.onReload != nil {
		w.onReload(p)
	}
	return nil
}

// fail reports err unless it repeats the last report (a file that stays broken, or stays
// missing, is reported once). Forced reloads always report.
func (w *Watcher) fail(err error, force bool) error {
	if msg := err.Error(); force || msg != w.lastErr {
		w.lastErr = msg
		if w.onError != nil {
			w.onError(err)
		}
	}
	return err
}

// sameFile reports whether a and b describe the same, unchanged file.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
