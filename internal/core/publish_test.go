package core_test

import (
	"context"
	"sync"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/proto"
)

type recordingPublisher struct {
	mu    sync.Mutex
	items []hub.Item
}

func (r *recordingPublisher) Publish(it hub.Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, it)
}

// The items the core publishes carry the size of the event's encoding, which it computed for the
// idempotency key, so a consumer bounding them in bytes (the cluster fan-out) need not measure
// the event again on the decision path.
func TestPublishedItemsCarryTheEventSize(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte(testPolicy), "core-test")
	if err != nil {
		t.Fatal(err)
	}
	rec := new(recordingPublisher)
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Hub: rec, Logger: testkit.Discard()})
	decided := testkit.ShellEvent("size-1", "ls -la /tmp")
	if _, err := c.Intercept(context.Background(), decided, nil); err != nil {
		t.Fatal(err)
	}
	observed := testkit.ShellEvent("size-2", "echo a longer command than the first one")
	observed.Type = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	if _, err := c.Observe(context.Background(), observed); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.items) != 2 {
		t.Fatalf("%d items published, want 2", len(rec.items))
	}
	for i, ev := range []*ahpv1.Event{decided, observed} {
		if got, want := rec.items[i].EventBytes, proto.Size(ev); got != want || got == 0 {
			t.Errorf("item %d (%s): EventBytes %d, want the encoding's size %d", i, ev.GetId(), got, want)
		}
	}
}
