package typed_test

import (
	"fmt"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// now is the fixed clock of every test.
var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// equal fails the test when got != want.
func equal[T comparable](t *testing.T, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// protoEqual fails the test when two messages differ, showing both as JSON.
func protoEqual(t *testing.T, got, want proto.Message, what string) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s =\n  %s\nwant\n  %s", what, js(got), js(want))
	}
}

func js(m proto.Message) string {
	b, err := protojson.Marshal(m)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// decide runs typed.Decide on a fresh decision and fails the test on error.
func decide(t *testing.T, ev *ahpv1.Event, res policy.Result, view *policy.SessionView, s policy.Settings) *ahpv1.Decision {
	t.Helper()
	d := &ahpv1.Decision{}
	if err := typed.Decide(d, ev, res, view, s, now); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

// arm names the typed variant in d ("planning.modify"), for compact assertions.
func arm(d *ahpv1.Decision) string {
	m := d.ProtoReflect()
	f := m.WhichOneof(m.Descriptor().Oneofs().ByName("typed"))
	if f == nil {
		return "<none>"
	}
	inner := m.Get(f).Message()
	g := inner.WhichOneof(inner.Descriptor().Oneofs().ByName("decision"))
	if g == nil {
		return string(f.Name()) + ".<none>"
	}
	return string(f.Name()) + "." + string(g.Name())
}

// meta returns the metadata of the variant in d; nil when the variant has none or it is unset.
func meta(d *ahpv1.Decision) *structpb.Struct {
	m := d.ProtoReflect()
	f := m.WhichOneof(m.Descriptor().Oneofs().ByName("typed"))
	if f == nil {
		return nil
	}
	inner := m.Get(f).Message()
	g := inner.WhichOneof(inner.Descriptor().Oneofs().ByName("decision"))
	if g == nil {
		return nil
	}
	variant := inner.Get(g).Message()
	mf := variant.Descriptor().Fields().ByName("metadata")
	if mf == nil || !variant.Has(mf) {
		return nil
	}
	return variant.Get(mf).Message().Interface().(*structpb.Struct)
}

// metaString is the string metadata value under key, "" when absent.
func metaString(d *ahpv1.Decision, key string) string {
	return meta(d).GetFields()[key].GetStringValue()
}

// Event builders, one per typed payload.

func idleEvent(ms uint64) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_IDLE,
		Body: &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{IdleDurationMs: ms, IdleReason: "no_activity"}}}
}

func intentEvent(prompt, workspace string) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION,
		Body: &ahpv1.Event_IntentDetection{IntentDetection: &ahpv1.IntentDetectionPayload{
			SessionId: "s", Prompt: prompt, Workspace: workspace}}}
}

func perceptionEvent(p *ahpv1.ContextPerceptionPayload) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION,
		Body: &ahpv1.Event_ContextPerception{ContextPerception: p}}
}

func memoryEvent(query string, maxResults uint64) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL,
		Body: &ahpv1.Event_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallPayload{
			SessionId: "s", Query: query, MemoryType: "episodic", MaxResults: maxResults, WorkingDirectory: "/repo"}}}
}

func planningEvent(task string, strategies ...*ahpv1.PlanningStrategy) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_PLANNING,
		Body: &ahpv1.Event_Planning{Planning: &ahpv1.PlanningPayload{
			SessionId: "s", TaskDescription: task, AvailableStrategies: strategies}}}
}

func reasoningEvent(rt *ahpv1.ReasoningType) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_REASONING,
		Body: &ahpv1.Event_Reasoning{Reasoning: &ahpv1.ReasoningPayload{
			SessionId: "s", ReasoningType: rt, ProblemStatement: "why does the build fail?"}}}
}

func rateLimitEvent(retryAfterMs uint64) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_RATE_LIMIT,
		Body: &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{
			SessionId: "s", RetryAfterMs: retryAfterMs, CurrentUsage: "95000/100000 tokens",
			LimitType: &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Known{
				Known: ahpv1.RateLimitKind_RATE_LIMIT_KIND_LLM_TOKEN_LIMIT}}}}}
}

func confirmationEvent(ct *ahpv1.ConfirmationType) *ahpv1.Event {
	return &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_CONFIRMATION,
		Body: &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{
			SessionId: "s", ConfirmationType: ct, Message: "This will spend $12. Proceed?"}}}
}

// Small constructors for the typed enums.

func known(k ahpv1.PlanningStrategyKind) *ahpv1.PlanningStrategy {
	return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Known{Known: k}}
}

func custom(name string) *ahpv1.PlanningStrategy {
	return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Custom{Custom: name}}
}

func reasoningType(k ahpv1.ReasoningKind) *ahpv1.ReasoningType {
	return &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Known{Known: k}}
}

func confirmationType(k ahpv1.ConfirmationKind) *ahpv1.ConfirmationType {
	return &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: k}}
}

func fact(content string, confidence float32) *ahpv1.Fact {
	return &ahpv1.Fact{Content: content, Source: "session", Confidence: confidence}
}

// Policy results.

func denyResult(rule, reason string) policy.Result {
	return policy.Result{Verdict: ahpv1.Verdict_VERDICT_DENY, MatchedRuleIDs: []string{rule},
		Effects: []*ahpv1.Effect{{RuleId: rule, Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason}}}}}
}

func askResult(rule, reason string) policy.Result {
	return policy.Result{Verdict: ahpv1.Verdict_VERDICT_ASK, MatchedRuleIDs: []string{rule},
		Effects: []*ahpv1.Effect{{RuleId: rule, Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: reason}}}}}
}

func deferResult(rule, reason string, ms uint64) policy.Result {
	return policy.Result{Verdict: ahpv1.Verdict_VERDICT_DEFER, MatchedRuleIDs: []string{rule},
		Effects: []*ahpv1.Effect{{RuleId: rule, Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{Reason: reason, RetryAfterMs: ms}}}}}
}

func typedResult(a policy.TypedAnswer) policy.Result {
	return policy.Result{Verdict: ahpv1.Verdict_VERDICT_ALLOW, MatchedRuleIDs: []string{a.RuleID}, Typed: &a}
}

// resultOf is typedResult(*a), or an empty result (no rule matched) when a is nil.
func resultOf(a *policy.TypedAnswer) policy.Result {
	if a == nil {
		return policy.Result{}
	}
	return typedResult(*a)
}
