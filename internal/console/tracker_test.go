package console_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/console"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/types/known/structpb"
)

func publishDecision(h *hub.Hub, eventID, session, decisionID string) {
	h.Publish(hub.Item{
		Event:    testkit.ShellEvent(eventID, "rm -rf /", testkit.Session(session), testkit.Agent("agent-"+session)),
		Decision: &ahpv1.Decision{DecisionId: decisionID, Verdict: ahpv1.Verdict_VERDICT_DENY, MatchedRuleIds: []string{"deny-rm-rf-root"}},
		Time:     time.Now(),
	})
}

// waitSubscribed waits until someone (the console's tracker) subscribes to h.
func waitSubscribed(t *testing.T, h *hub.Hub) {
	t.Helper()
	waitFor(t, func() bool { return h.Stats().Subscribers > 0 })
}

// waitFor polls cond (a hub has no signal for a new subscription) for at most
// testkit.WaitTimeout.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testkit.WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		<-time.After(time.Millisecond)
	}
}

// waitRecorded waits until cond holds, looking again each time tr records an item.
func waitRecorded(t *testing.T, tr *console.Tracker, cond func() bool) {
	t.Helper()
	timeout := time.After(testkit.WaitTimeout)
	for {
		changed := tr.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatal("condition not met in time")
		}
	}
}

func record(tr *console.Tracker, i int, session string, payload int) {
	ev := testkit.ShellEvent(fmt.Sprint("e", i), "ls", testkit.Session(session))
	if payload > 0 {
		ev.Tool.Input.Fields["blob"] = structString(payload)
	}
	tr.Record(hub.Item{Event: ev, Decision: &ahpv1.Decision{DecisionId: fmt.Sprint("d", i), Verdict: ahpv1.Verdict_VERDICT_ALLOW}, Time: time.Now()})
}

func TestTrackerKeepsTheNewestItemsBoundedInCountAndBytes(t *testing.T) {
	t.Parallel()
	tr := console.NewTracker(console.TrackerOptions{Items: 10, ItemBytes: 20 << 10, Sessions: 3, SessionEvents: 2})
	for i := range 25 {
		record(tr, i, fmt.Sprint("s", i%5), 0)
	}
	record(tr, 25, "s4", 0) // s4 has three events now, of which two are kept
	record(tr, 26, "s4", 0)
	items, _ := tr.Recent(100)
	if len(items) != 10 || items[0].Decision.GetDecisionId() != "d26" || items[9].Decision.GetDecisionId() != "d17" {
		t.Fatalf("kept %d items, newest %q", len(items), items[0].Decision.GetDecisionId())
	}
	if _, _, ok := tr.Decision("d16"); ok {
		t.Error("d16 should have been dropped")
	}
	if _, _, ok := tr.Decision("d20"); !ok {
		t.Error("d20 should be remembered")
	}
	sessions := tr.Sessions()
	// Five sessions took turns; only the three most recently active are kept.
	if len(sessions) != 3 || sessions[0].ID != "s4" || sessions[1].ID != "s3" || sessions[2].ID != "s2" ||
		sessions[0].Events != 3 || len(sessions[0].Last) != 2 || sessions[0].Last[0].DecisionID != "d26" || sessions[0].Last[1].DecisionID != "d25" {
		t.Fatalf("sessions %+v", sessions)
	}
	// Large items: the byte bound, not the count, limits what is kept.
	for i := 100; i < 110; i++ {
		record(tr, i, "big", 8<<10)
	}
	items, _ = tr.Recent(100)
	if len(items) >= 3 || len(items) == 0 {
		t.Fatalf("kept %d items of 8 KiB under a 20 KiB bound", len(items))
	}
	if st := tr.Stats(); st.Seen != 37 || st.Kept != len(items) {
		t.Errorf("stats %+v", st)
	}
}

func TestTrackerNumbersPolicyRevisions(t *testing.T) {
	t.Parallel()
	a := policy.Default()
	b, err := policy.Parse([]byte(testkit.PolicyYAML("other", "")), "other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	current := a
	tr := console.NewTracker(console.TrackerOptions{Policy: func() *policy.Policy { return current }})
	record(tr, 1, "s", 0)
	current = b
	record(tr, 2, "s", 0)
	_, r1, _ := tr.Decision("d1")
	_, r2, _ := tr.Decision("d2")
	if r1.Revision != 1 || r1.Digest != a.Digest() || r2.Revision != 2 || r2.Digest != b.Digest() {
		t.Errorf("revisions %+v and %+v", r1, r2)
	}
	if h := tr.PolicyHistory(); len(h) != 2 {
		t.Errorf("history %+v", h)
	}
}

// A tracker that falls behind is cut off by the hub like any watcher; it subscribes again and
// counts the gap.
func TestTrackerResubscribesAfterACutOff(t *testing.T) {
	t.Parallel()
	h := hub.New(4096, hub.WithBatchWindow(0))
	defer h.Close()
	tr := console.NewTracker(console.TrackerOptions{Buffer: 1, Hub: h, IdleAfter: -1})
	tr.Touch()
	if n := h.Stats().Subscribers; n != 1 {
		t.Fatalf("%d subscribers after Touch, want 1", n)
	}
	// With a buffer of one item the tracker cannot take a burst delivered in one batch.
	for i := range 200 {
		publishDecision(h, fmt.Sprint("e", i), "s", fmt.Sprint("d", i))
	}
	waitFor(t, func() bool { return tr.Stats().Gaps > 0 })
	// The rest of the burst may still be queued and cut the new subscription off again (the hub
	// hands a new subscriber what was queued before it subscribed): publish until one item
	// published after a re-subscription is recorded.
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("no item recorded after 100 re-subscriptions")
		}
		waitFor(t, func() bool { return h.Stats().Subscribers == 1 })
		cut := h.Stats().CutOff
		id := fmt.Sprint("d-late-", i)
		publishDecision(h, fmt.Sprint("late-", i), "s", id)
		recorded := false
		waitFor(t, func() bool {
			_, _, recorded = tr.Decision(id)
			return recorded || h.Stats().CutOff > cut
		})
		if recorded {
			break
		}
	}
	h.Close()
	waitFor(t, func() bool { return !tr.Stats().Watching })
}

// Without console requests for IdleAfter the tracker unsubscribes, so that a server nobody
// watches pays nothing for its console; the next request subscribes it again at once.
func TestTrackerStopsWatchingWhenNoConsoleIsOpen(t *testing.T) {
	t.Parallel()
	h := hub.New(64)
	defer h.Close()
	// The tracker's clock moves only when the test moves it, so a slow machine cannot make the
	// tracker idle between a Touch and the check after it.
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	const idle = 20 * time.Millisecond
	tr := console.NewTracker(console.TrackerOptions{Hub: h, IdleAfter: idle, Now: clock})
	if n := h.Stats().Subscribers; n != 0 {
		t.Fatalf("%d subscribers before any console request", n)
	}
	tr.Touch()
	if n := h.Stats().Subscribers; n != 1 || !tr.Stats().Watching {
		t.Fatalf("%d subscribers after Touch, want 1", n)
	}
	now.Add(int64(2 * idle))
	waitFor(t, func() bool { return h.Stats().Subscribers == 0 })
	if st := tr.Stats(); st.Watching || st.Paused == nil || st.Paused.To != nil {
		t.Errorf("stats after going idle %+v", st)
	}
	tr.Touch()
	if st := tr.Stats(); !st.Watching || st.Paused == nil || st.Paused.To == nil {
		t.Errorf("stats after a new request %+v", st)
	}
	publishDecision(h, "e1", "s", "d1")
	waitRecorded(t, tr, func() bool { _, _, ok := tr.Decision("d1"); return ok })
}

func structString(n int) *structpb.Value {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return structpb.NewStringValue(string(b))
}
