package transporttest

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/ahp-gateway/ahp/internal/testkit"
)

// AwaitCalls waits until Handle has seen at least n messages, and fails the test after
// testkit.WaitTimeout.
func (h *Handler) AwaitCalls(t testing.TB, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if err := h.WaitCalls(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// WaitCalls waits until Handle has seen at least n messages, or ctx ends.
func (h *Handler) WaitCalls(ctx context.Context, n int64) error {
	for {
		h.mu.Lock()
		if h.calls.Load() >= n {
			h.mu.Unlock()
			return nil
		}
		if h.called == nil {
			h.called = make(chan struct{})
		}
		called := h.called
		h.mu.Unlock()
		select {
		case <-called:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d messages reached the handler: %w", h.calls.Load(), n, ctx.Err())
		}
	}
}

// Unblock releases every MethodBlock message, those waiting and those to come.
func (h *Handler) Unblock() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.unblockedChan():
	default:
		close(h.unblocked)
	}
}

// unblockedChan is the channel Unblock closes; h.mu must be held.
func (h *Handler) unblockedChan() chan struct{} {
	if h.unblocked == nil {
		h.unblocked = make(chan struct{})
	}
	return h.unblocked
}

// MaxInFlight reports the most messages Handle has had in progress at once.
func (h *Handler) MaxInFlight() int64 { return h.maxInFlight.Load() }

// HoldThroughShutdown keeps a MethodBlock message in flight through a server's shutdown: once h
// has seen it, it calls stop, which must start the shutdown without waiting for it, waits until
// the server at network/addr refuses connections and then releases the message.
func (h *Handler) HoldThroughShutdown(ctx context.Context, stop func(), network, addr string) error {
	if err := h.WaitCalls(ctx, 1); err != nil {
		return err
	}
	stop()
	err := AwaitRefused(ctx, network, addr)
	h.Unblock()
	if err != nil {
		return fmt.Errorf("still accepting after the stop: %w", err)
	}
	return nil
}

// AwaitRefused dials network/addr until a dial fails, which is how a server's shutdown shows
// from outside: it closes its listener first. It fails when ctx ends first.
func AwaitRefused(ctx context.Context, network, addr string) error {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return ctx.Err() // nil: refused
		}
		c.Close()
	}
}
