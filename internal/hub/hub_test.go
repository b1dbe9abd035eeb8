package hub_test

import (
	"errors"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
)

func event(session string, typ ahpv1.EventType, kind ahpv1.ToolKind) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: typ, Session: &ahpv1.Session{Id: session}, Tool: &ahpv1.Tool{Kind: kind}}
}

func receive(t *testing.T, s *hub.Subscription) hub.Item {
	t.Helper()
	select {
	case it := <-s.Items():
		return it
	case <-time.After(5 * time.Second):
		t.Fatal("no item delivered")
		return hub.Item{}
	}
}

func TestFilters(t *testing.T) {
	t.Parallel()
	before := event("s1", ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, ahpv1.ToolKind_TOOL_KIND_SHELL)
	after := event("s2", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, ahpv1.ToolKind_TOOL_KIND_FILE_READ)
	decided := hub.Item{Event: before, Decision: &ahpv1.Decision{DecisionId: "d"}}
	observed := hub.Item{Event: after}
	cases := []struct {
		name          string
		filter        hub.Filter
		decided, obsd bool
	}{
		{"everything", hub.Filter{}, true, true},
		{"session", hub.Filter{SessionID: "s2"}, false, true},
		{"event type", hub.Filter{EventTypes: []ahpv1.EventType{ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE}}, true, false},
		{"tool kind", hub.Filter{ToolKinds: []ahpv1.ToolKind{ahpv1.ToolKind_TOOL_KIND_FILE_READ}}, false, true},
		{"decisions only", hub.Filter{DecisionsOnly: true}, true, false},
	}
	for _, tc := range cases {
		if got := tc.filter.Match(decided); got != tc.decided {
			t.Errorf("%s: Match(decision) = %v, want %v", tc.name, got, tc.decided)
		}
		if got := tc.filter.Match(observed); got != tc.obsd {
			t.Errorf("%s: Match(observation) = %v, want %v", tc.name, got, tc.obsd)
		}
	}
}

func TestDeliversInOrder(t *testing.T) {
	t.Parallel()
	h := hub.New(64)
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 16)
	defer s.Close()
	for i := range 10 {
		ev := event("s", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, 0)
		ev.Id = string(rune('a' + i))
		h.Publish(hub.Item{Event: ev})
	}
	for i := range 10 {
		if got, want := receive(t, s).Event.GetId(), string(rune('a'+i)); got != want {
			t.Fatalf("item %d = %q, want %q", i, got, want)
		}
	}
}

func TestSlowSubscriberIsCutOff(t *testing.T) {
	t.Parallel()
	h := hub.New(1024)
	defer h.Close()
	slow := h.Subscribe(hub.Filter{}, 2)
	fast := h.Subscribe(hub.Filter{}, 1024)
	defer fast.Close()
	for range 10 {
		h.Publish(hub.Item{Event: event("s", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, 0)})
	}
	select {
	case <-slow.Ended():
	case <-time.After(5 * time.Second):
		t.Fatal("slow subscriber was not cut off")
	}
	if !errors.Is(slow.Err(), hub.ErrSlowSubscriber) {
		t.Fatalf("Err = %v, want ErrSlowSubscriber", slow.Err())
	}
	for range 10 { // the fast one still gets everything
		receive(t, fast)
	}
	if got := h.Stats().CutOff; got != 1 {
		t.Errorf("CutOff = %d, want 1", got)
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	t.Parallel()
	h := hub.New(4)
	s := h.Subscribe(hub.Filter{}, 4)
	h.Close()
	<-s.Ended()
	if !errors.Is(s.Err(), hub.ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", s.Err())
	}
	late := h.Subscribe(hub.Filter{}, 4)
	<-late.Ended()
	if h.Stats().Subscribers != 0 {
		t.Fatal("subscribers left after Close")
	}
}

func BenchmarkPublishNoSubscribers(b *testing.B) {
	h := hub.New(1024)
	defer h.Close()
	it := hub.Item{Event: event("s", ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, 0)}
	for b.Loop() {
		h.Publish(it)
	}
}

func TestTransformRunsBeforeWatchersSeeItems(t *testing.T) {
	t.Parallel()
	h := hub.New(8, hub.WithTransform(func(it hub.Item) hub.Item {
		ev := &ahpv1.Event{Id: "[REDACTED]", Type: it.Event.GetType()}
		return hub.Item{Event: ev, Decision: it.Decision, Time: it.Time}
	}))
	defer h.Close()
	s := h.Subscribe(hub.Filter{}, 4)
	defer s.Close()
	orig := event("s", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, 0)
	orig.Id = "secret"
	h.Publish(hub.Item{Event: orig})
	if got := receive(t, s).Event.GetId(); got != "[REDACTED]" {
		t.Fatalf("watcher saw %q", got)
	}
	if orig.GetId() != "secret" {
		t.Fatal("the publisher's event was changed")
	}
}
