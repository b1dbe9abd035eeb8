package core_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
)

func approvalCore(t *testing.T, hold string) (*core.Core, *approval.Manager, *approval.Watch) {
	t.Helper()
	p, err := policy.Parse([]byte(testkit.PolicyYAML("approvals", `  - id: ask-rm
    on: [tool.before, confirmation]
    effect:
      ask:
        reason: deleting files
        approval: {hold: `+hold+`, approvers: [alice]}
`)), "approvals")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	m := approval.NewManager(approval.Config{Store: approval.NewMemory(approval.MemoryOptions{}), NewID: func() string { return fmt.Sprint("apv-", n.Add(1)) }})
	t.Cleanup(m.Close)
	w, err := m.Watch(16)
	if err != nil {
		t.Fatal(err)
	}
	c := core.New(core.Config{
		Policy: func() core.Policy { return p }, Typed: typed.Decide, Approvals: m, Logger: testkit.Discard(),
	})
	return c, m, w
}

type decided struct {
	d   *ahpv1.Decision
	err error
}

func interceptAsync(ctx context.Context, c *core.Core, ev *ahpv1.Event) <-chan decided {
	ch := make(chan decided, 1)
	go func() {
		d, err := c.Intercept(ctx, ev, nil)
		ch <- decided{d, err}
	}()
	return ch
}

func nextRequested(t *testing.T, w *approval.Watch) approval.Approval {
	t.Helper()
	for {
		if c := testkit.Receive(t, w.C(), "no approval requested"); c.Kind == approval.Requested {
			return c.Approval
		}
	}
}

func TestHeldInterceptApprovedHooks(t *testing.T) {
	t.Parallel()
	c, m, w := approvalCore(t, "1h")
	got := interceptAsync(t.Context(), c, testkit.ShellEvent("e1", "deploy x", testkit.HooksOrigin()))
	a := nextRequested(t, w)
	if _, err := m.Decide(a.ID, true, "alice", nil, "fine"); err != nil {
		t.Fatal(err)
	}
	r := testkit.Receive(t, got, "held Intercept not answered")
	if r.err != nil || r.d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || len(r.d.GetEffects()) != 0 {
		t.Fatalf("decision = %v, %v; want allow without effects for a Hooks caller", r.d, r.err)
	}
	if r.d.GetApprovalId() != a.ID || len(r.d.GetFallbacks()) != 0 {
		t.Errorf("approval id %q fallbacks %v, want %q and none", r.d.GetApprovalId(), r.d.GetFallbacks(), a.ID)
	}
	// A retry of the same event replays the answer.
	if d, _ := c.Intercept(t.Context(), testkit.ShellEvent("e1", "deploy x", testkit.HooksOrigin()), nil); !d.GetReplayed() || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Errorf("retry = %v, want the replayed allow", d)
	}
}

func TestHeldInterceptDeniedWithComment(t *testing.T) {
	t.Parallel()
	c, m, w := approvalCore(t, "1h")
	got := interceptAsync(t.Context(), c, testkit.ShellEvent("e1", "deploy x"))
	a := nextRequested(t, w)
	m.Decide(a.ID, false, "alice", nil, "use git clean")
	r := testkit.Receive(t, got, "held Intercept not answered")
	deny := r.d.GetEffects()[0].GetDeny()
	if deny.GetReason() != "denied by alice: use git clean" || deny.GetCode() != core.CodeApprovalDenied {
		t.Fatalf("decision = %v, want the approver's denial", r.d)
	}
}

func TestHeldInterceptTimesOut(t *testing.T) {
	t.Parallel()
	c, _, _ := approvalCore(t, "20ms")
	d, err := c.Intercept(t.Context(), testkit.ShellEvent("e1", "deploy x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if deny := d.GetEffects()[0].GetDeny(); deny.GetReason() != "approval timed out" || deny.GetCode() != core.CodeApprovalTimeout {
		t.Fatalf("decision = %v, want approval timed out", d)
	}
}

func TestCallerThatCannotWaitGetsDeferThenGrant(t *testing.T) {
	t.Parallel()
	c, m, _ := approvalCore(t, "1h")
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	d, err := c.Intercept(short(), testkit.ShellEvent("e1", "deploy x", testkit.HarnessOrigin()), nil)
	if err != nil {
		t.Fatal(err)
	}
	def := d.GetEffects()[0].GetDefer()
	if def == nil || def.GetRetryAfterMs() == 0 || !strings.Contains(def.GetReason(), d.GetApprovalId()) || !strings.Contains(def.GetReason(), "ahp-server approvals approve") {
		t.Fatalf("decision = %v, want a defer naming the approval and where to decide", d)
	}
	// The pending answer is not remembered: a retry of the same event finds the approval again.
	again, _ := c.Intercept(short(), testkit.ShellEvent("e1", "deploy x", testkit.HarnessOrigin()), nil)
	if again.GetReplayed() || again.GetApprovalId() != d.GetApprovalId() {
		t.Fatalf("retry = %v, want a fresh answer on the same approval", again)
	}
	// Hooks callers get a deny naming it.
	hooks, _ := c.Intercept(short(), testkit.ShellEvent("h1", "deploy x", testkit.HooksOrigin()), nil)
	if hooks.GetEffects()[0].GetDeny().GetCode() != core.CodeApprovalPending {
		t.Fatalf("hooks caller = %v, want a pending denial", hooks)
	}
	if _, err := m.Decide(d.GetApprovalId(), true, "alice", nil, ""); err != nil {
		t.Fatal(err)
	}
	ok, _ := c.Intercept(short(), testkit.ShellEvent("e2", "deploy x", testkit.HarnessOrigin()), nil)
	if ok.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || ok.GetApprovalId() != d.GetApprovalId() {
		t.Fatalf("retry after approval = %v, want allow on the grant", ok)
	}
}

func TestHeldConfirmApproved(t *testing.T) {
	t.Parallel()
	c, m, w := approvalCore(t, "1h")
	ev := testkit.Event("c1", ahpv1.EventType_EVENT_TYPE_CONFIRMATION, testkit.HarnessOrigin())
	ev.Body = &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{}}
	got := make(chan decided, 1)
	go func() {
		d, err := c.Typed(t.Context(), ev, ahpv1.EventType_EVENT_TYPE_CONFIRMATION)
		got <- decided{d, err}
	}()
	a := nextRequested(t, w)
	m.Decide(a.ID, true, "alice", nil, "")
	r := testkit.Receive(t, got, "held Confirm not answered")
	if r.err != nil || r.d.GetConfirmation().GetApprove() == nil {
		t.Fatalf("confirmation = %v, %v; want approve", r.d, r.err)
	}
}

func TestHeldBatchEntry(t *testing.T) {
	t.Parallel()
	c, m, w := approvalCore(t, "1h")
	got := make(chan []*ahpv1.Decision, 1)
	go func() {
		ds, err := c.Batch(t.Context(), []*ahpv1.Event{
			testkit.ShellEvent("b1", "deploy x", testkit.HarnessOrigin()),
			testkit.ShellEvent("b2", "ls", testkit.HarnessOrigin()),
		}, nil)
		if err != nil {
			t.Error(err)
		}
		got <- ds
	}()
	// The policy asks about every tool call: each entry is held in turn.
	m.Decide(nextRequested(t, w).ID, false, "alice", nil, "")
	m.Decide(nextRequested(t, w).ID, true, "alice", nil, "")
	ds := testkit.Receive(t, got, "held batch not answered")
	if len(ds) != 2 || ds[0].GetEffects()[0].GetDeny().GetCode() != core.CodeApprovalDenied || ds[1].GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("batch = %v, want the first entry denied and the second allowed", ds)
	}
}

func TestPendingCapDeniesAtOnce(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte(testkit.PolicyYAML("approvals", `  - id: ask-all
    on: [tool.before]
    effect: {ask: {approval: {hold: 1h}}}
`)), "approvals")
	if err != nil {
		t.Fatal(err)
	}
	m := approval.NewManager(approval.Config{Store: approval.NewMemory(approval.MemoryOptions{MaxPending: 1}), NewID: func() string { return fmt.Sprint(time.Now().UnixNano()) }})
	t.Cleanup(m.Close)
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Approvals: m, Logger: testkit.Discard()})
	short, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if d, _ := c.Intercept(short, testkit.ShellEvent("p1", "one"), nil); d.GetEffects()[0].GetDefer() == nil && d.GetEffects()[0].GetDeny().GetCode() != core.CodeApprovalPending {
		t.Fatalf("first = %v, want pending", d)
	}
	d, err := c.Intercept(t.Context(), testkit.ShellEvent("p2", "two"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if deny := d.GetEffects()[0].GetDeny(); deny.GetCode() != core.CodeApprovalFull || !d.GetSynthetic() {
		t.Fatalf("over the pending cap = %v, want a synthetic denial", d)
	}
}

// downStore is a shared approval store that cannot reach its cluster.
type downStore struct{ *approval.Memory }

func (downStore) Open(approval.Approval, time.Time) (approval.Approval, bool, error) {
	return approval.Approval{}, false, fmt.Errorf("%w: nats: timeout", approval.ErrUnavailable)
}

func TestUnavailableStoreDeniesLabelled(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte(testkit.PolicyYAML("approvals", `  - id: ask-all
    on: [tool.before]
    effect: {ask: {approval: {hold: 1h}}}
`)), "approvals")
	if err != nil {
		t.Fatal(err)
	}
	m := approval.NewManager(approval.Config{Store: downStore{approval.NewMemory(approval.MemoryOptions{})}, NewID: func() string { return "id" }})
	t.Cleanup(m.Close)
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Approvals: m, Logger: testkit.Discard()})
	d, err := c.Intercept(t.Context(), testkit.ShellEvent("u1", "one"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if deny := d.GetEffects()[0].GetDeny(); deny.GetCode() != core.CodeApprovalStore || !d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("decision = %v, want a labelled synthetic denial", d)
	}
}
