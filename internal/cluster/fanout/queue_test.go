package fanout_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// The outbound queue is bounded in bytes, not only in items: while the publisher is held, large
// items queue up to QueueBytes and the rest are dropped for the other replicas (counted); every
// item accepted is sent, in order, once the publisher goes on.
func TestQueueIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	const limit = 64 << 10
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a := onServer(t, srv.URL(), "a", fanout.Options{QueueBytes: limit, Transform: func(it hub.Item) hub.Item {
		once.Do(func() { close(entered); <-release })
		return it
	}})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before a's Close, which waits for the publisher, on a failure too
	b := onServer(t, srv.URL(), "b", fanout.Options{})
	w := b.hub.Subscribe(hub.Filter{}, 4096)

	a.f.Publish(item("held"))
	<-entered // the publisher holds this one; what follows waits in the queue
	big := strings.Repeat("x", 8<<10)
	var accepted []string
	for i := range 40 { // 40 × ~8 KiB: five times the bound
		id := fmt.Sprintf("big-%d", i)
		dropped := a.f.Stats().Dropped
		a.f.Publish(hub.Item{Event: testkit.ShellEvent(id, big), Time: time.Now()})
		if a.f.Stats().Dropped == dropped {
			accepted = append(accepted, id)
		}
		if q := a.f.Stats().QueuedBytes; q > limit {
			t.Fatalf("after %s the queue holds %d bytes, over its bound of %d", id, q, limit)
		}
	}
	if n := len(accepted); n < 5 || n > 8 { // 64 KiB of ~8.1 KiB items
		t.Fatalf("%d items of ~8 KiB accepted under a %d-byte bound, want 5 to 8", n, limit)
	}
	if got, want := a.f.Stats().Dropped, uint64(40-len(accepted)); got != want {
		t.Fatalf("dropped %d, want %d", got, want)
	}
	releaseOnce()
	a.f.Publish(item("end"))
	got := receiveUntil(t, w, "end")
	if want := append([]string{"held"}, accepted...); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("b received %v, want every accepted item once, in order: %v", got, want)
	}
	waitFor(t, "the queue to empty", func() bool { return a.f.Stats().QueuedBytes == 0 })
}

// An item counts at the event size its publisher gave (hub.Item.EventBytes), measured only when
// it gave none.
func TestQueueCountsTheGivenEventSize(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := onServer(t, srv.URL(), "a", fanout.Options{QueueBytes: 1024})
	small := item("small")
	small.EventBytes = 4096 // what the publisher says: over the bound, whatever the event
	a.f.Publish(small)
	if got := a.f.Stats().Dropped; got != 1 {
		t.Fatalf("an item given as 4 KiB under a 1 KiB bound: dropped %d, want 1", got)
	}
	a.f.Publish(item("measured")) // no size given: measured, well under the bound
	if got := a.f.Stats().Dropped; got != 1 {
		t.Fatalf("a small item with no size given was dropped (dropped %d)", got)
	}
}
