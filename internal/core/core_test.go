package core_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

const testPolicy = `
version: 1
name: core-test
rules:
  - id: deny-rm
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.startsWith("rm ")'
    effect: {deny: {reason: "no rm", code: dev.ahpgateway.test.rm}}
  - id: ask-push
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("git push")'
    effect: {ask: {reason: "pushing needs a human"}}
  - id: explode
    on: [tool.before]
    when: 'has(input.boom) && input.boom.missing == 1'
    effect: {deny: {reason: "unreachable"}}
  - id: skip-cost
    on: [confirmation]
    when: 'payload.confirmation_type == "cost_confirm"'
    effect: {typed: {action: reject, reason: "over budget"}}
`

type fixture struct {
	core *core.Core
	hub  *hub.Hub
	ids  atomic.Int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	p, err := policy.Parse([]byte(testPolicy), "core-test")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{hub: hub.New(1024)}
	t.Cleanup(f.hub.Close)
	f.core = core.New(core.Config{
		Policy: func() core.Policy { return p },
		Typed:  typed.Decide,
		Hub:    f.hub,
		NewID:  func() string { return "d" + string(rune('0'+f.ids.Add(1)%10)) },
		Limits: core.HarnessLimits{BatchSize: 3, MaxDepth: 2},
		Logger: testkit.Discard(),
	})
	return f
}

func TestInterceptDeniesAndAllows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d, err := f.core.Intercept(context.Background(), testkit.ShellEvent("e1", "rm -rf build"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || d.GetEffects()[0].GetDeny().GetReason() != "no rm" {
		t.Fatalf("decision = %v", d)
	}
	if d.GetDecisionId() == "" || len(d.GetMatchedRuleIds()) != 1 || d.GetMatchedRuleIds()[0] != "deny-rm" {
		t.Fatalf("decision id / rules = %q %v", d.GetDecisionId(), d.GetMatchedRuleIds())
	}
	d, err = f.core.Intercept(context.Background(), testkit.ShellEvent("e2", "ls"), nil)
	if err != nil || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || len(d.GetEffects()) != 0 {
		t.Fatalf("ls: %v %v", d, err)
	}
}

func TestRetriedEventReplaysSameDecision(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first, err := f.core.Intercept(context.Background(), testkit.ShellEvent("e1", "rm x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.core.Intercept(context.Background(), testkit.ShellEvent("e1", "rm x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !again.GetReplayed() || again.GetDecisionId() != first.GetDecisionId() {
		t.Fatalf("replay = %v, first = %v", again, first)
	}
	other := testkit.ShellEvent("e1", "rm x")
	other.Source = "urn:other" // a different source is a different event
	d, _ := f.core.Intercept(context.Background(), other, nil)
	if d.GetReplayed() || d.GetDecisionId() == first.GetDecisionId() {
		t.Fatal("a different source must not replay")
	}
}

func TestHooksCallerGetsDenyInsteadOfAsk(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ev := testkit.ShellEvent("e1", "git push origin main", testkit.HooksOrigin())
	d, err := f.core.Intercept(context.Background(), ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || len(d.GetFallbacks()) != 1 {
		t.Fatalf("hooks caller: %v", d)
	}
	for _, e := range d.GetEffects() {
		if e.GetDeny() == nil {
			t.Fatalf("hooks caller received a non-deny effect: %v", e)
		}
	}
	// A caller that can ask gets the ask.
	ev2 := testkit.ShellEvent("e2", "git push origin main")
	d, err = f.core.Intercept(context.Background(), ev2, &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_ASK, ahpv1.EffectKind_EFFECT_KIND_DENY}})
	if err != nil || d.GetVerdict() != ahpv1.Verdict_VERDICT_ASK {
		t.Fatalf("ask-capable caller: %v %v", d, err)
	}
}

func TestRuleEvaluationErrorFailsClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ev := testkit.ShellEvent("e1", "ls")
	ev.Tool.Input.Fields["boom"] = structpb.NewStringValue("not a map")
	d, err := f.core.Intercept(context.Background(), ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.GetSynthetic() || d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || !strings.Contains(d.GetEffects()[0].GetDeny().GetReason(), `"explode"`) {
		t.Fatalf("decision = %v", d)
	}
}

type panicky struct{}

func (panicky) Evaluate(policy.Input) policy.Result { panic("boom") }
func (panicky) Settings() policy.Settings           { return policy.Settings{} }

func TestPanicIsAnErrorForThatCallOnly(t *testing.T) {
	t.Parallel()
	c := core.New(core.Config{Policy: func() core.Policy { return panicky{} }, Typed: typed.Decide, Logger: testkit.Discard()})
	_, err := c.Intercept(context.Background(), testkit.ShellEvent("e1", "ls"), nil)
	ce, ok := core.AsError(err)
	if !ok || ce.Code != core.CodeInternal {
		t.Fatalf("err = %v", err)
	}
	// The batch turns the same failure into a labelled block and carries on.
	ds, err := c.Batch(context.Background(), []*ahpv1.Event{testkit.ShellEvent("e2", "ls"), testkit.ShellEvent("e3", "ls")}, nil)
	if err != nil || len(ds) != 2 {
		t.Fatalf("batch: %v %v", ds, err)
	}
	for _, d := range ds {
		if !d.GetSynthetic() || !strings.HasPrefix(d.GetEffects()[0].GetDeny().GetReason(), "Handler error: ") {
			t.Fatalf("batch decision = %v", d)
		}
	}
}

func TestInterceptRejectsObserveOnlyAndBadEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name  string
		ev    *ahpv1.Event
		field string
	}{
		{"observe-only", &ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_TOOL_ERROR}, "event.type"},
		{"nil", nil, "event"},
		{"no id", &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE}, "event.id"},
		{"typed without payload", &ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_IDLE}, "event.idle"},
		{"payload of another type", &ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_PLANNING, Body: &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{}}}, "event.body"},
		{"too deep", &ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Harness: &ahpv1.HarnessEnvelope{Depth: 3}}, "event.harness.depth"},
	}
	for _, tc := range cases {
		_, err := f.core.Intercept(context.Background(), tc.ev, nil)
		ce, ok := core.AsError(err)
		if !ok || ce.Code != core.CodeInvalidArgument || ce.Field != tc.field {
			t.Errorf("%s: err = %v, want invalid argument on %s", tc.name, err, tc.field)
		}
	}
}

func TestObserveCountsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sub := f.hub.Subscribe(hub.Filter{}, 16)
	defer sub.Close()
	ev := testkit.Event("o1", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)
	for i, wantDup := range []bool{false, true} {
		dup, err := f.core.Observe(context.Background(), ev)
		if err != nil || dup != wantDup {
			t.Fatalf("observe #%d: dup=%v err=%v", i, dup, err)
		}
	}
	// The hub keeps publish order: had the duplicate been published, it would come before o2.
	if _, err := f.core.Observe(context.Background(), testkit.Event("o2", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"o1", "o2"} {
		select {
		case it := <-sub.Items():
			if it.Event.GetId() != want {
				t.Fatalf("published %s, want %s (a duplicate was published)", it.Event.GetId(), want)
			}
			if it.Decision != nil {
				t.Fatalf("observation %s published with a decision: %v", want, it.Decision)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("observation %s not published", want)
		}
	}
	if _, err := f.core.Observe(context.Background(), &ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_RATE_LIMIT}); err == nil {
		t.Fatal("a typed event must not be accepted as an observation")
	}
	if _, err := f.core.Observe(context.Background(), &ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE}); err == nil {
		t.Fatal("run.lifecycle without its payload must be rejected")
	}
}

func TestBatchLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.core.Batch(ctx, []*ahpv1.Event{testkit.ShellEvent("a", "ls"), testkit.ShellEvent("b", "ls"), testkit.ShellEvent("c", "ls"), testkit.ShellEvent("d", "ls")}, nil)
	if err == nil || !strings.Contains(err.Error(), "Batch size 4 exceeds configured limit 3") {
		t.Fatalf("size: %v", err)
	}
	typedEv := &ahpv1.Event{Id: "t", Type: ahpv1.EventType_EVENT_TYPE_IDLE, Body: &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{}}}
	_, err = f.core.Batch(ctx, []*ahpv1.Event{testkit.ShellEvent("a", "rm x"), typedEv}, nil)
	if err == nil || !strings.Contains(err.Error(), "events[1].type: Event type idle cannot be batched") {
		t.Fatalf("typed in batch: %v", err)
	}
	// The invalid batch had no side effect: "a" was not decided, so deciding it now is not a replay.
	d, _ := f.core.Intercept(ctx, testkit.ShellEvent("a", "rm x"), nil)
	if d.GetReplayed() {
		t.Fatal("an invalid batch must not evaluate any event")
	}
	ds, err := f.core.Batch(ctx, []*ahpv1.Event{}, nil)
	if err != nil || len(ds) != 0 {
		t.Fatalf("empty batch: %v %v", ds, err)
	}
	after := &ahpv1.Event{Id: "p", Type: ahpv1.EventType_EVENT_TYPE_TOOL_AFTER}
	ds, err = f.core.Batch(ctx, []*ahpv1.Event{testkit.ShellEvent("q", "rm y"), after}, nil)
	if err != nil || ds[0].GetVerdict() != ahpv1.Verdict_VERDICT_DENY || ds[1].GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("mixed batch: %v %v", ds, err)
	}
}

func TestTypedRuleAndBuiltIn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	confirm := func(id string, k ahpv1.ConfirmationKind) *ahpv1.Event {
		return &ahpv1.Event{Id: id, Type: ahpv1.EventType_EVENT_TYPE_CONFIRMATION, Body: &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{
			SessionId: "s1", Message: "ok?", ConfirmationType: &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: k}},
		}}}
	}
	d, err := f.core.Typed(context.Background(), confirm("c1", ahpv1.ConfirmationKind_CONFIRMATION_KIND_COST_CONFIRM), ahpv1.EventType_EVENT_TYPE_CONFIRMATION)
	if err != nil || d.GetConfirmation().GetReject().GetReason() != "over budget" {
		t.Fatalf("rule answer: %v %v", d, err)
	}
	d, err = f.core.Typed(context.Background(), confirm("c2", ahpv1.ConfirmationKind_CONFIRMATION_KIND_SAFETY_CONFIRM), ahpv1.EventType_EVENT_TYPE_CONFIRMATION)
	if err != nil || d.GetConfirmation().GetEscalate() == nil {
		t.Fatalf("built-in answer: %v %v", d, err)
	}
	// The type may be left out; the call names it.
	ev := confirm("c3", ahpv1.ConfirmationKind_CONFIRMATION_KIND_USER_CONFIRM)
	ev.Type = ahpv1.EventType_EVENT_TYPE_UNSPECIFIED
	if _, err := f.core.Typed(context.Background(), ev, ahpv1.EventType_EVENT_TYPE_CONFIRMATION); err != nil {
		t.Fatal(err)
	}
	_, err = f.core.Typed(context.Background(), confirm("c4", 0), ahpv1.EventType_EVENT_TYPE_PLANNING)
	if ce, ok := core.AsError(err); !ok || ce.Field != "event.type" {
		t.Fatalf("wrong type: %v", err)
	}
}

func TestHandshakeVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, v := range []string{"2", "2.0", "2.4", "2.99.1"} {
		resp, err := f.core.Handshake(context.Background(), &ahpv1.HandshakeRequest{ProtocolVersion: v, AgentInfo: &ahpv1.AgentInfo{}})
		if err != nil || resp.GetProtocolVersion() != "2.4" || resp.GetConfig().GetBatchSize() != 3 {
			t.Errorf("%q: %v %v", v, resp, err)
		}
	}
	for _, v := range []string{"3.0", "02.4", "", "1.9"} {
		_, err := f.core.Handshake(context.Background(), &ahpv1.HandshakeRequest{ProtocolVersion: v})
		ce, ok := core.AsError(err)
		if !ok || ce.Code != core.CodeFailedPrecondition || ce.Reason != "Unsupported protocol version: "+v {
			t.Errorf("%q: err = %v", v, err)
		}
	}
}

func TestQueryUsesTheSameRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	payload, _ := structpb.NewValue(map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "rm -rf x"}})
	resp, err := f.core.Query(context.Background(), &ahpv1.QueryRequest{SessionId: "s1", AgentId: "a1", QueryType: "should_i_proceed", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetAnswer().GetBoolValue() || resp.GetReason() != "no rm" {
		t.Fatalf("should_i_proceed rm: %v", resp)
	}
	payload, _ = structpb.NewValue(map[string]any{"question": "Should I delete this file?", "file_path": "/workspace/important.txt"})
	resp, err = f.core.Query(context.Background(), &ahpv1.QueryRequest{QueryType: "should_i_proceed", Payload: payload})
	if err != nil || !resp.GetAnswer().GetBoolValue() {
		t.Fatalf("harmless question: %v %v", resp, err)
	}
	resp, err = f.core.Query(context.Background(), &ahpv1.QueryRequest{QueryType: "policy_status", Payload: structpb.NewNullValue()})
	if err != nil || resp.GetAnswer().GetStructValue().GetFields()["verdict"].GetStringValue() != "allow" {
		t.Fatalf("other query: %v %v", resp, err)
	}
}

func TestCapabilitiesListTypes(t *testing.T) {
	t.Parallel()
	caps := newFixture(t).core.Capabilities()
	if caps.GetHarnessProtocolVersion() != "2.4" || len(caps.GetHooksProtocolVersions()) != 1 {
		t.Fatalf("caps = %v", caps)
	}
	has := func(list []ahpv1.EventType, t ahpv1.EventType) bool {
		for _, x := range list {
			if x == t {
				return true
			}
		}
		return false
	}
	if !has(caps.GetInterceptableEventTypes(), ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE) || has(caps.GetInterceptableEventTypes(), ahpv1.EventType_EVENT_TYPE_TOOL_ERROR) {
		t.Fatal("interceptable types wrong")
	}
	if !has(caps.GetObservableEventTypes(), ahpv1.EventType_EVENT_TYPE_VERIFICATION) {
		t.Fatal("observable types wrong")
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newFixture(t).core.Intercept(ctx, testkit.ShellEvent("e", "ls"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestDecisionIsNotSharedWithReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d1, _ := f.core.Intercept(context.Background(), testkit.ShellEvent("e", "rm x"), nil)
	d1.Effects = nil // a caller mutating its answer must not change what replays see
	d2, _ := f.core.Intercept(context.Background(), testkit.ShellEvent("e", "rm x"), nil)
	if len(d2.GetEffects()) != 1 || proto.Equal(d1, d2) {
		t.Fatalf("replay = %v", d2)
	}
}

func TestDryRunRuleErrorDoesNotDeny(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte(`
version: 1
name: dry
rules:
  - id: shaky
    mode: dry-run
    on: [tool.before]
    when: 'input.boom.missing == 1'
    effect: {deny: {reason: r}}
`), "dry")
	if err != nil {
		t.Fatal(err)
	}
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard()})
	d, err := c.Intercept(context.Background(), testkit.ShellEvent("e", "ls"), nil)
	if err != nil || d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || d.GetSynthetic() {
		t.Fatalf("decision = %v, %v", d, err)
	}
}
