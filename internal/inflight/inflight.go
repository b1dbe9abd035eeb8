// Package inflight counts the calls in progress on something that stops taking calls when it
// shuts down: once the Group is closed no call begins, and the calls already begun can be waited
// for within a deadline.
package inflight

import (
	"context"
	"sync"
)

// Group counts calls in progress. The zero value is open and ready to use.
type Group struct {
	mu     sync.RWMutex
	closed bool
	calls  sync.WaitGroup
}

// Begin registers a call and reports true, or reports false once g is closed. Every call Begin
// admits ends with End.
func (g *Group) Begin() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return false
	}
	g.calls.Add(1)
	return true
}

// End ends a call Begin admitted.
func (g *Group) End() { g.calls.Done() }

// Close makes every later Begin report false. Calls in progress go on; Wait waits for them.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// Wait waits until no call is in progress, or until ctx is done and then returns its error.
func (g *Group) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { g.calls.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
