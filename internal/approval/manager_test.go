package approval_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func newManager(t *testing.T, opts approval.MemoryOptions, mod ...func(*approval.Config)) *approval.Manager {
	t.Helper()
	var n atomic.Uint64
	cfg := approval.Config{
		Store: approval.NewMemory(opts),
		NewID: func() string { return fmt.Sprintf("apv-%d", n.Add(1)) },
	}
	for _, f := range mod {
		f(&cfg)
	}
	m := approval.NewManager(cfg)
	t.Cleanup(m.Close)
	return m
}

func request(hold time.Duration, approvers ...string) *policy.Approval {
	a := &policy.Approval{
		RuleIDs: []string{"ask-rm"}, Kind: ahpv1.EffectKind_EFFECT_KIND_ASK, Reason: "deleting files",
		Hold: hold, TTL: time.Minute, OnTimeoutDeny: true,
	}
	if len(approvers) > 0 {
		a.Approvers = [][]string{approvers}
	}
	return a
}

type resolved struct {
	out approval.Outcome
	err error
}

func resolve(ctx context.Context, m *approval.Manager, ev *ahpv1.Event, pa *policy.Approval) <-chan resolved {
	ch := make(chan resolved, 1)
	go func() {
		out, err := m.Resolve(ctx, ev, pa)
		ch <- resolved{out, err}
	}()
	return ch
}

// requested waits for the next Requested change and returns its approval.
func requested(t *testing.T, w *approval.Watch) approval.Approval {
	t.Helper()
	for {
		c := testkit.Receive(t, w.C(), "no approval was requested")
		if c.Kind == approval.Requested {
			return c.Approval
		}
	}
}

func watch(t *testing.T, m *approval.Manager) *approval.Watch {
	t.Helper()
	w, err := m.Watch(64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func TestHeldCallApproved(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	w := watch(t, m)
	got := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), request(time.Hour, "alice"))
	a := requested(t, w)
	if a.State != approval.StatePending || a.Tool != "Bash" || a.Reason != "deleting files" || a.EventID != "e1" {
		t.Errorf("requested approval = %+v", a)
	}
	if _, err := m.Decide(a.ID, true, "alice", nil, "go ahead"); err != nil {
		t.Fatal(err)
	}
	r := testkit.Receive(t, got, "held call was not released")
	if r.err != nil || r.out.Result != approval.Granted {
		t.Fatalf("outcome = %v, %v; want granted", r.out.Result, r.err)
	}
	if r.out.Approval.DecidedBy != "alice" || r.out.Approval.Comment != "go ahead" || r.out.Approval.ConsumedAt.IsZero() {
		t.Errorf("approval = %+v, want decided by alice with the comment and consumed", r.out.Approval)
	}
}

func TestHeldCallDenied(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	w := watch(t, m)
	got := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), request(time.Hour))
	a := requested(t, w)
	if _, err := m.Decide(a.ID, false, "bob", nil, "not today"); err != nil {
		t.Fatal(err)
	}
	r := testkit.Receive(t, got, "held call was not released")
	if r.out.Result != approval.Denied || r.out.Approval.Comment != "not today" {
		t.Fatalf("outcome = %v %+v, want denied with the comment", r.out.Result, r.out.Approval)
	}
	// The first decision stands.
	if _, err := m.Decide(a.ID, true, "bob", nil, ""); !errors.Is(err, approval.ErrDecided) {
		t.Errorf("second decision: err = %v, want ErrDecided", err)
	}
	if cur, _ := m.Get(a.ID); cur.State != approval.StateDenied {
		t.Errorf("state after a second decision = %v, want denied", cur.State)
	}
}

func TestHoldEndsWithoutDecision(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	r := testkit.Receive(t, resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), request(20*time.Millisecond)), "hold did not end")
	if r.err != nil || r.out.Result != approval.TimedOut || r.out.Approval.State != approval.StateExpired {
		t.Fatalf("outcome = %v %v %v, want timed out and expired", r.out.Result, r.out.Approval.State, r.err)
	}
	if _, err := m.Decide(r.out.Approval.ID, true, "alice", nil, ""); !errors.Is(err, approval.ErrExpired) {
		t.Errorf("deciding an expired approval: err = %v, want ErrExpired", err)
	}
}

// shortDeadline is a caller that cannot wait: its deadline is inside the manager's margin.
func shortDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func TestGrantForCallerThatCannotWait(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	pa := request(time.Hour)
	out, err := m.Resolve(shortDeadline(t), testkit.ShellEvent("e1", "rm x"), pa)
	if err != nil || out.Result != approval.Pending {
		t.Fatalf("outcome = %v, %v; want pending", out.Result, err)
	}
	// A retry before the decision joins the same approval.
	again, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e2", "rm x"), pa)
	if again.Result != approval.Pending || again.Approval.ID != out.Approval.ID {
		t.Fatalf("retry = %v %s, want pending on %s", again.Result, again.Approval.ID, out.Approval.ID)
	}
	if _, err := m.Decide(out.Approval.ID, true, "alice", nil, ""); err != nil {
		t.Fatal(err)
	}
	// Another action is not let through by the grant.
	other, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e3", "rm y"), pa)
	if other.Result != approval.Pending || other.Approval.ID == out.Approval.ID {
		t.Fatalf("other action = %v on %s, want pending on a new approval", other.Result, other.Approval.ID)
	}
	// The same action with a new event id: let through once.
	retry, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e4", "rm x"), pa)
	if retry.Result != approval.Granted || retry.Approval.ID != out.Approval.ID {
		t.Fatalf("retry after approval = %v on %s, want granted on %s", retry.Result, retry.Approval.ID, out.Approval.ID)
	}
	// A retry of that same event (its answer was lost) gets it again; a new one does not.
	dup, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e4", "rm x"), pa)
	if dup.Result != approval.Granted {
		t.Errorf("retry of the event that used the grant = %v, want granted", dup.Result)
	}
	next, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e5", "rm x"), pa)
	if next.Result != approval.Pending || next.Approval.ID == out.Approval.ID {
		t.Errorf("after the grant was used = %v on %s, want pending on a new approval", next.Result, next.Approval.ID)
	}
}

func TestConcurrentRetriesConsumeGrantOnce(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	pa := request(time.Hour)
	out, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e0", "rm x"), pa)
	if _, err := m.Decide(out.Approval.ID, true, "alice", nil, ""); err != nil {
		t.Fatal(err)
	}
	const callers = 8
	var wg sync.WaitGroup
	var granted atomic.Int32
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			r, err := m.Resolve(ctx, testkit.ShellEvent(fmt.Sprintf("r%d", i), "rm x"), pa)
			if err == nil && r.Result == approval.Granted {
				granted.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := granted.Load(); n != 1 {
		t.Fatalf("%d of %d concurrent retries were granted, want exactly 1", n, callers)
	}
}

func TestRetriesOfHeldEventJoin(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	w := watch(t, m)
	pa := request(time.Hour)
	first := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), pa)
	a := requested(t, w)
	second := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), pa)
	waitHeld(t, m, 2)
	if _, err := m.Decide(a.ID, true, "alice", nil, ""); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan resolved{first, second} {
		r := testkit.Receive(t, ch, "held call was not released")
		if r.out.Result != approval.Granted || r.out.Approval.ID != a.ID {
			t.Errorf("outcome = %v on %s, want granted on %s", r.out.Result, r.out.Approval.ID, a.ID)
		}
	}
	if list := m.List(approval.Filter{}); len(list) != 1 {
		t.Errorf("%d approvals, want 1: a retry must not open a second", len(list))
	}
}

// waitHeld waits until n calls are held, watching Abandoned changes is not enough; poll the
// count on each change of the store instead of sleeping.
func waitHeld(t *testing.T, m *approval.Manager, n int) {
	t.Helper()
	deadline := time.Now().Add(testkit.WaitTimeout)
	for m.Held() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls held, want %d", m.Held(), n)
		}
		yield()
	}
}

func TestCallerGoneMarksAbandoned(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	w := watch(t, m)
	ctx, cancel := context.WithCancel(t.Context())
	got := resolve(ctx, m, testkit.ShellEvent("e1", "rm x"), request(time.Hour))
	a := requested(t, w)
	waitHeld(t, m, 1)
	cancel()
	r := testkit.Receive(t, got, "held call was not released when its caller went away")
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", r.err)
	}
	for {
		c := testkit.Receive(t, w.C(), "approval was not marked abandoned")
		if c.Kind == approval.Abandoned && c.Approval.ID == a.ID && c.Approval.Abandoned {
			break
		}
	}
	if m.Held() != 0 {
		t.Errorf("%d calls still held", m.Held())
	}
	if cur, _ := m.Get(a.ID); cur.State != approval.StatePending || !cur.Abandoned {
		t.Errorf("approval = %v abandoned %v, want still pending and abandoned", cur.State, cur.Abandoned)
	}
}

func TestCloseReleasesHeldCalls(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	w := watch(t, m)
	got := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), request(time.Hour))
	requested(t, w)
	waitHeld(t, m, 1)
	m.Close()
	if r := testkit.Receive(t, got, "Close did not release the held call"); r.out.Result != approval.Closing {
		t.Errorf("outcome = %v, want closing", r.out.Result)
	}
	if out, _ := m.Resolve(t.Context(), testkit.ShellEvent("e2", "rm x"), request(time.Hour)); out.Result != approval.Closing {
		t.Errorf("after Close: outcome = %v, want closing", out.Result)
	}
}

func TestHeldCallsCap(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{}, func(c *approval.Config) { c.MaxHeld = 1 })
	w := watch(t, m)
	held := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), request(time.Hour))
	requested(t, w)
	waitHeld(t, m, 1)
	out, err := m.Resolve(t.Context(), testkit.ShellEvent("e2", "rm y"), request(time.Hour))
	if err != nil || out.Result != approval.Pending {
		t.Fatalf("over the held cap: %v, %v; want pending at once", out.Result, err)
	}
	m.Close()
	testkit.Receive(t, held, "held call was not released")
}

func TestDecideChecksApproverAndComment(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	out, _ := m.Resolve(shortDeadline(t), testkit.ShellEvent("e1", "rm x"), request(time.Hour, "alice", "group:oncall"))
	id := out.Approval.ID
	for _, tc := range []struct {
		name    string
		by      string
		groups  []string
		comment string
		want    error
	}{
		{"unknown id", "alice", nil, "", approval.ErrNotFound},
		{"not listed", "mallory", []string{"dev"}, "", approval.ErrNotApprover},
		{"comment too long", "alice", nil, strings.Repeat("x", approval.MaxComment+1), approval.ErrComment},
		{"comment not UTF-8", "alice", nil, "\xff", approval.ErrComment},
	} {
		target := id
		if tc.name == "unknown id" {
			target = "nope"
		}
		if _, err := m.Decide(target, true, tc.by, tc.groups, tc.comment); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	a, err := m.Decide(id, true, "carol", []string{"oncall"}, "")
	if err != nil || a.DecidedBy != "carol" || a.State != approval.StateApproved {
		t.Errorf("a group member deciding: %+v, %v", a, err)
	}
}

func TestTwoHeldCallsOfOneActionShareOneGrant(t *testing.T) {
	t.Parallel()
	m := newManager(t, approval.MemoryOptions{})
	w := watch(t, m)
	pa := request(time.Hour)
	first := resolve(t.Context(), m, testkit.ShellEvent("e1", "rm x"), pa)
	a := requested(t, w)
	second := resolve(t.Context(), m, testkit.ShellEvent("e2", "rm x"), pa) // another call, same action: joins
	waitHeld(t, m, 2)
	if _, err := m.Decide(a.ID, true, "alice", nil, ""); err != nil {
		t.Fatal(err)
	}
	results := map[approval.Result]int{}
	for _, ch := range []<-chan resolved{first, second} {
		r := testkit.Receive(t, ch, "held call was not released")
		results[r.out.Result]++
	}
	if results[approval.Granted] != 1 || results[approval.Used] != 1 {
		t.Fatalf("results = %v, want one granted and one told the grant was used", results)
	}
}
