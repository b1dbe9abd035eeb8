package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

var testPolicy = testkit.PolicyYAML("core-test", `  - id: explode
    on: [tool.before]
    when: 'has(input.boom) && input.boom.missing == 1'
    effect: {deny: {reason: "unreachable"}}
  - id: skip-cost
    on: [confirmation]
    when: 'payload.confirmation_type == "cost_confirm"'
    effect: {typed: {action: reject, reason: "over budget"}}
`)

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

// intercept decides ev for a caller without capabilities and fails the test on an error, naming
// what was decided.
func (f *fixture) intercept(t *testing.T, what string, ev *ahpv1.Event) *ahpv1.Decision {
	t.Helper()
	d, err := f.core.Intercept(context.Background(), ev, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return d
}

// syntheticDeny fails unless d is a synthetic denial, and returns its deny effect.
func syntheticDeny(t *testing.T, d *ahpv1.Decision) *ahpv1.DenyEffect {
	t.Helper()
	if !d.GetSynthetic() {
		t.Fatalf("decision not marked synthetic: %v", d)
	}
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("verdict %v, want deny: %v", d.GetVerdict(), d)
	}
	deny := d.GetEffects()[0].GetDeny()
	if deny == nil {
		t.Fatalf("first effect is no deny: %v", d)
	}
	return deny
}

func TestInterceptDeniesAndAllows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d := f.intercept(t, "rm", testkit.ShellEvent("e1", "rm -rf build"))
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("decision: d.GetVerdict() = %v, want VERDICT_DENY in %v", d.GetVerdict(), d)
	}
	if d.GetEffects()[0].GetDeny().GetReason() != "no rm" {
		t.Fatalf("decision: d.GetEffects()[0].GetDeny().GetReason() = %v, want \"no rm\" in %v", d.GetEffects()[0].GetDeny().GetReason(), d)
	}
	if d.GetDecisionId() == "" {
		t.Fatalf("decision id / rules: d.GetDecisionId() == \"\"")
	}
	if len(d.GetMatchedRuleIds()) != 1 {
		t.Fatalf("decision id / rules: len(d.GetMatchedRuleIds()) = %v, want 1", len(d.GetMatchedRuleIds()))
	}
	if d.GetMatchedRuleIds()[0] != "deny-rm" {
		t.Fatalf("decision id / rules: d.GetMatchedRuleIds()[0] = %v, want \"deny-rm\"", d.GetMatchedRuleIds()[0])
	}
	d = f.intercept(t, "ls", testkit.ShellEvent("e2", "ls"))
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("ls: d.GetVerdict() = %v, want VERDICT_ALLOW", d.GetVerdict())
	}
	if len(d.GetEffects()) != 0 {
		t.Fatalf("ls: len(d.GetEffects()) = %v, want 0", len(d.GetEffects()))
	}
}

func TestRetriedEventReplaysSameDecision(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	first := f.intercept(t, "first", testkit.ShellEvent("e1", "rm x"))
	again := f.intercept(t, "retry", testkit.ShellEvent("e1", "rm x"))
	if !again.GetReplayed() {
		t.Fatalf("replay: again.GetReplayed() is false")
	}
	if again.GetDecisionId() != first.GetDecisionId() {
		t.Fatalf("replay: again.GetDecisionId() = %v, want %v", again.GetDecisionId(), first.GetDecisionId())
	}
	other := testkit.ShellEvent("e1", "rm x")
	other.Source = "urn:other" // a different source is a different event
	d, _ := f.core.Intercept(context.Background(), other, nil)
	if d.GetReplayed() {
		t.Fatalf("a different source must not replay: d.GetReplayed() is true")
	}
	if d.GetDecisionId() == first.GetDecisionId() {
		t.Fatalf("a different source must not replay: d.GetDecisionId() == first.GetDecisionId()")
	}
}

func TestHooksCallerGetsDenyInsteadOfAsk(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ev := testkit.ShellEvent("e1", "git push origin main", testkit.HooksOrigin())
	d := f.intercept(t, "hooks caller", ev)
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("hooks caller: d.GetVerdict() = %v, want VERDICT_DENY in %v", d.GetVerdict(), d)
	}
	if len(d.GetFallbacks()) != 1 {
		t.Fatalf("hooks caller: len(d.GetFallbacks()) = %v, want 1 in %v", len(d.GetFallbacks()), d)
	}
	for _, e := range d.GetEffects() {
		if e.GetDeny() == nil {
			t.Fatalf("hooks caller received a non-deny effect: %v", e)
		}
	}
	// A caller that can ask gets the ask.
	ev2 := testkit.ShellEvent("e2", "git push origin main")
	d, err := f.core.Intercept(context.Background(), ev2, &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_ASK, ahpv1.EffectKind_EFFECT_KIND_DENY}})
	if err != nil {
		t.Fatalf("ask-capable caller: %v", err)
	}
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_ASK {
		t.Fatalf("ask-capable caller: d.GetVerdict() = %v, want VERDICT_ASK", d.GetVerdict())
	}
}

func TestRuleEvaluationErrorFailsClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ev := testkit.ShellEvent("e1", "ls")
	ev.Tool.Input.Fields["boom"] = structpb.NewStringValue("not a map")
	d := f.intercept(t, "failing rule", ev)
	if reason := syntheticDeny(t, d).GetReason(); !strings.Contains(reason, `"explode"`) {
		t.Fatalf("reason %q does not name the rule \"explode\"", reason)
	}
}

type panicky struct{}

func (panicky) EvaluateContext(context.Context, policy.Input) policy.Result { panic("boom") }
func (panicky) Settings() policy.Settings                                   { return policy.Settings{} }

func TestPanicIsAnErrorForThatCallOnly(t *testing.T) {
	t.Parallel()
	c := core.New(core.Config{Policy: func() core.Policy { return panicky{} }, Typed: typed.Decide, Logger: testkit.Discard()})
	_, err := c.Intercept(context.Background(), testkit.ShellEvent("e1", "ls"), nil)
	ce, ok := core.AsError(err)
	if !ok {
		t.Fatalf("not a core error: %v", err)
	}
	if ce.Code != core.CodeInternal {
		t.Fatalf("ce.Code = %v, want core.CodeInternal", ce.Code)
	}
	// The batch turns the same failure into a labelled block and carries on.
	ds, err := c.Batch(context.Background(), []*ahpv1.Event{testkit.ShellEvent("e2", "ls"), testkit.ShellEvent("e3", "ls")}, nil)
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(ds) != 2 {
		t.Fatalf("batch: len(ds) = %v, want 2", len(ds))
	}
	for _, d := range ds {
		if reason := syntheticDeny(t, d).GetReason(); !strings.HasPrefix(reason, "Handler error: ") {
			t.Fatalf("batch decision reason %q, want it to begin \"Handler error: \"", reason)
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
		if !ok {
			t.Errorf("%s: not a core error: %v", tc.name, err)
		} else if ce.Code != core.CodeInvalidArgument {
			t.Errorf("%s: ce.Code = %v, want core.CodeInvalidArgument", tc.name, ce.Code)
		} else if ce.Field != tc.field {
			t.Errorf("%s: ce.Field = %v, want %v", tc.name, ce.Field, tc.field)
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
		if err != nil {
			t.Fatalf("observe #%d: %v", i, err)
		}
		if dup != wantDup {
			t.Fatalf("observe #%d: dup = %v, want %v", i, dup, wantDup)
		}
	}
	// The hub keeps publish order: had the duplicate been published, it would come before o2.
	if _, err := f.core.Observe(context.Background(), testkit.Event("o2", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"o1", "o2"} {
		it := testkit.Receive(t, sub.Items(), "observation "+want+" not published")
		if it.Event.GetId() != want {
			t.Fatalf("published %s, want %s (a duplicate was published)", it.Event.GetId(), want)
		}
		if it.Decision != nil {
			t.Fatalf("observation %s published with a decision: %v", want, it.Decision)
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
	if err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	if len(ds) != 0 {
		t.Fatalf("empty batch: len(ds) = %v, want 0", len(ds))
	}
	after := &ahpv1.Event{Id: "p", Type: ahpv1.EventType_EVENT_TYPE_TOOL_AFTER}
	ds, err = f.core.Batch(ctx, []*ahpv1.Event{testkit.ShellEvent("q", "rm y"), after}, nil)
	if err != nil {
		t.Fatalf("mixed batch: %v", err)
	}
	if ds[0].GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("mixed batch: ds[0].GetVerdict() = %v, want VERDICT_DENY", ds[0].GetVerdict())
	}
	if ds[1].GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("mixed batch: ds[1].GetVerdict() = %v, want VERDICT_ALLOW", ds[1].GetVerdict())
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
	if err != nil {
		t.Fatalf("rule answer: %v", err)
	}
	if d.GetConfirmation().GetReject().GetReason() != "over budget" {
		t.Fatalf("rule answer: d.GetConfirmation().GetReject().GetReason() = %v, want \"over budget\"", d.GetConfirmation().GetReject().GetReason())
	}
	d, err = f.core.Typed(context.Background(), confirm("c2", ahpv1.ConfirmationKind_CONFIRMATION_KIND_SAFETY_CONFIRM), ahpv1.EventType_EVENT_TYPE_CONFIRMATION)
	if err != nil {
		t.Fatalf("built-in answer: %v", err)
	}
	if d.GetConfirmation().GetEscalate() == nil {
		t.Fatalf("built-in answer: d.GetConfirmation().GetEscalate() is nil")
	}
	// The type may be left out; the call names it.
	ev := confirm("c3", ahpv1.ConfirmationKind_CONFIRMATION_KIND_USER_CONFIRM)
	ev.Type = ahpv1.EventType_EVENT_TYPE_UNSPECIFIED
	if _, err := f.core.Typed(context.Background(), ev, ahpv1.EventType_EVENT_TYPE_CONFIRMATION); err != nil {
		t.Fatal(err)
	}
	_, err = f.core.Typed(context.Background(), confirm("c4", 0), ahpv1.EventType_EVENT_TYPE_PLANNING)
	if ce, ok := core.AsError(err); !ok {
		t.Fatalf("wrong type: not a core error: %v", err)
	} else if ce.Field != "event.type" {
		t.Fatalf("wrong type: ce.Field = %v, want \"event.type\"", ce.Field)
	}
}

func TestHandshakeVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, v := range []string{"2", "2.0", "2.4", "2.99.1"} {
		resp, err := f.core.Handshake(context.Background(), &ahpv1.HandshakeRequest{ProtocolVersion: v, AgentInfo: &ahpv1.AgentInfo{}})
		if err != nil {
			t.Errorf("%q: %v", v, err)
		} else if resp.GetProtocolVersion() != "2.4" {
			t.Errorf("%q: resp.GetProtocolVersion() = %v, want \"2.4\"", v, resp.GetProtocolVersion())
		} else if resp.GetConfig().GetBatchSize() != 3 {
			t.Errorf("%q: resp.GetConfig().GetBatchSize() = %v, want 3", v, resp.GetConfig().GetBatchSize())
		}
	}
	for _, v := range []string{"3.0", "02.4", "", "1.9"} {
		_, err := f.core.Handshake(context.Background(), &ahpv1.HandshakeRequest{ProtocolVersion: v})
		ce, ok := core.AsError(err)
		if !ok {
			t.Errorf("%q: not a core error: %v", v, err)
		} else if ce.Code != core.CodeFailedPrecondition {
			t.Errorf("%q: ce.Code = %v, want core.CodeFailedPrecondition", v, ce.Code)
		} else if ce.Reason != "Unsupported protocol version: "+v {
			t.Errorf("%q: ce.Reason = %v, want %v", v, ce.Reason, "Unsupported protocol version: "+v)
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
	if resp.GetAnswer().GetBoolValue() {
		t.Fatalf("should_i_proceed rm: resp.GetAnswer().GetBoolValue() is true in %v", resp)
	}
	if resp.GetReason() != "no rm" {
		t.Fatalf("should_i_proceed rm: resp.GetReason() = %v, want \"no rm\" in %v", resp.GetReason(), resp)
	}
	payload, _ = structpb.NewValue(map[string]any{"question": "Should I delete this file?", "file_path": "/workspace/important.txt"})
	resp, err = f.core.Query(context.Background(), &ahpv1.QueryRequest{QueryType: "should_i_proceed", Payload: payload})
	if err != nil {
		t.Fatalf("harmless question: %v", err)
	}
	if !resp.GetAnswer().GetBoolValue() {
		t.Fatalf("harmless question: resp.GetAnswer().GetBoolValue() is false")
	}
	resp, err = f.core.Query(context.Background(), &ahpv1.QueryRequest{QueryType: "policy_status", Payload: structpb.NewNullValue()})
	if err != nil {
		t.Fatalf("other query: %v", err)
	}
	if resp.GetAnswer().GetStructValue().GetFields()["verdict"].GetStringValue() != "allow" {
		t.Fatalf("other query: resp.GetAnswer().GetStructValue().GetFields()[\"verdict\"].GetStringValue() = %v, want \"allow\"", resp.GetAnswer().GetStructValue().GetFields()["verdict"].GetStringValue())
	}
}

func TestCapabilitiesListTypes(t *testing.T) {
	t.Parallel()
	caps := newFixture(t).core.Capabilities()
	if caps.GetHarnessProtocolVersion() != "2.4" {
		t.Fatalf("caps: caps.GetHarnessProtocolVersion() = %v, want \"2.4\" in %v", caps.GetHarnessProtocolVersion(), caps)
	}
	if len(caps.GetHooksProtocolVersions()) != 2 {
		t.Fatalf("caps: len(caps.GetHooksProtocolVersions()) = %v, want 2 (0.1 and draft) in %v", len(caps.GetHooksProtocolVersions()), caps)
	}
	has := func(list []ahpv1.EventType, t ahpv1.EventType) bool {
		for _, x := range list {
			if x == t {
				return true
			}
		}
		return false
	}
	if !has(caps.GetInterceptableEventTypes(), ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE) {
		t.Fatalf("interceptable types wrong: has(caps.GetInterceptableEventTypes(), EVENT_TYPE_TOOL_BEFORE) is false")
	}
	if has(caps.GetInterceptableEventTypes(), ahpv1.EventType_EVENT_TYPE_TOOL_ERROR) {
		t.Fatalf("interceptable types wrong: has(caps.GetInterceptableEventTypes(), EVENT_TYPE_TOOL_ERROR) is true")
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
	if len(d2.GetEffects()) != 1 {
		t.Fatalf("replay: len(d2.GetEffects()) = %v, want 1 in %v", len(d2.GetEffects()), d2)
	}
	if proto.Equal(d1, d2) {
		t.Fatalf("replay: proto.Equal(d1, d2) is true in %v", d2)
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
	if err != nil {
		t.Fatalf("decision: %v", err)
	}
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("decision: d.GetVerdict() = %v, want VERDICT_ALLOW", d.GetVerdict())
	}
	if d.GetSynthetic() {
		t.Fatalf("decision: d.GetSynthetic() is true")
	}
}

// TestUndefinedEnumsAreRefused: an enum number its enum does not define (binary protobuf keeps
// them) is refused with the path of the field, at any depth, and a valid event passes.
func TestUndefinedEnumsAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.core.Intercept(ctx, testkit.ShellEvent("ok", "ls"), nil); err != nil {
		t.Fatalf("a valid event: %v", err)
	}
	for _, tc := range []struct {
		field string
		ev    *ahpv1.Event
	}{
		{"event.tool.kind", testkit.ShellEvent("k", "ls", testkit.Tool("Bash", ahpv1.ToolKind(99)))},
		{"event.origin.dialect", testkit.ShellEvent("o", "ls", func(ev *ahpv1.Event) {
			ev.Origin = &ahpv1.Origin{Dialect: ahpv1.Dialect(42)}
		})},
	} {
		_, err := f.core.Intercept(ctx, tc.ev, nil)
		if e, ok := core.AsError(err); !ok || e.Code != core.CodeInvalidArgument || e.Field != tc.field {
			t.Errorf("%s: got %v, want an invalid-argument error for %s", tc.field, err, tc.field)
		}
	}
	// In a repeated message field, below a oneof body.
	ev := testkit.Event("t", ahpv1.EventType_EVENT_TYPE_TASK_LIST)
	ev.Body = &ahpv1.Event_TaskList{TaskList: &ahpv1.TaskList{Tasks: []*ahpv1.TaskItem{
		{Title: "a", Status: ahpv1.TaskStatus_TASK_STATUS_COMPLETED}, {Title: "b", Status: ahpv1.TaskStatus(77)},
	}}}
	_, err := f.core.Observe(ctx, ev)
	if e, ok := core.AsError(err); !ok || e.Field != "event.task_list.tasks.status" {
		t.Errorf("task status: got %v, want an error for event.task_list.tasks.status", err)
	}
}

// TestRulesReadRecentEventsOfLazyViews: session memory hands the core its recent events
// unconverted (session.LazyViewer); a rule reading session.recent still sees the events before
// this one.
func TestRulesReadRecentEventsOfLazyViews(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte(testkit.PolicyYAML("recent", `  - id: second-shell-call
    on: [tool.before]
    when: 'session.recent.exists(r, r.type == "tool.before" && r.tool_name == "Bash" && r.tool_kind == "shell")'
    effect: {deny: {reason: "one shell call per session"}}
`)), "recent")
	if err != nil {
		t.Fatal(err)
	}
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard()})
	ctx := context.Background()
	for i, want := range []ahpv1.Verdict{ahpv1.Verdict_VERDICT_ALLOW, ahpv1.Verdict_VERDICT_DENY} {
		d, err := c.Intercept(ctx, testkit.ShellEvent(fmt.Sprintf("r%d", i), "ls"), nil)
		if err != nil || d.GetVerdict() != want {
			t.Fatalf("call %d: %v %v, want %v", i, d.GetVerdict(), err, want)
		}
	}
}
