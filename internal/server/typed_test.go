package server_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// TestEveryTypedDecision calls each of the eight typed RPCs over the wire and checks that each
// gives a real answer of its own shape (never "not supported").
func TestEveryTypedDecision(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	c := ts.typed()
	ctx := context.Background()
	ev := func(id string) *ahpv1.Event {
		return &ahpv1.Event{Id: id, Session: &ahpv1.Session{Id: "typed"}, Harness: &ahpv1.HarnessEnvelope{AgentId: "a1"}}
	}
	cases := []struct {
		name  string
		call  func() (*ahpv1.Decision, error)
		check func(*ahpv1.Decision) bool
	}{
		{"idle", func() (*ahpv1.Decision, error) {
			e := ev("idle")
			e.Body = &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{IdleDurationMs: 30000, IdleReason: "no_activity"}}
			r, err := c.Idle(ctx, connect.NewRequest(&ahpv1.IdleRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return d.GetIdle().GetAllow() != nil }},
		{"intent_detection", func() (*ahpv1.Decision, error) {
			e := ev("intent")
			e.Body = &ahpv1.Event_IntentDetection{IntentDetection: &ahpv1.IntentDetectionPayload{SessionId: "typed", Prompt: "where is the auth function?", Workspace: "/repo"}}
			r, err := c.DetectIntent(ctx, connect.NewRequest(&ahpv1.DetectIntentRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return d.GetIntentDetection().GetAllow().GetDetectedIntent() == "locate" }},
		{"context_perception", func() (*ahpv1.Decision, error) {
			e := ev("perceive")
			e.Body = &ahpv1.Event_ContextPerception{ContextPerception: &ahpv1.ContextPerceptionPayload{
				SessionId: "typed", Intent: ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNDERSTAND,
				Target:  &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Location{Location: &ahpv1.LocationTarget{Path: ".", LocationType: "workspace"}}},
				Context: &ahpv1.PerceptionContext{Workspace: "/repo"},
			}}
			r, err := c.PerceiveContext(ctx, connect.NewRequest(&ahpv1.PerceiveContextRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return len(d.GetContextPerception().GetRefine().GetScopeHints()) > 0 }},
		{"memory_recall", func() (*ahpv1.Decision, error) {
			e := ev("recall")
			e.Body = &ahpv1.Event_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallPayload{SessionId: "typed", Query: "auth bug", MemoryType: "episodic", MaxResults: 5, WorkingDirectory: "/repo"}}
			r, err := c.RecallMemory(ctx, connect.NewRequest(&ahpv1.RecallMemoryRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return d.GetMemoryRecall().GetAllow() != nil }},
		{"planning", func() (*ahpv1.Decision, error) {
			e := ev("plan")
			e.Body = &ahpv1.Event_Planning{Planning: &ahpv1.PlanningPayload{SessionId: "typed", TaskDescription: "add a feature", AvailableStrategies: []*ahpv1.PlanningStrategy{
				{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_TREE_OF_THOUGHTS}},
				{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP}},
			}}}
			r, err := c.Plan(ctx, connect.NewRequest(&ahpv1.PlanRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool {
			return d.GetPlanning().GetAllow().GetSelectedStrategy().GetKnown() == ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP
		}},
		{"reasoning", func() (*ahpv1.Decision, error) {
			e := ev("reason")
			e.Body = &ahpv1.Event_Reasoning{Reasoning: &ahpv1.ReasoningPayload{SessionId: "typed", ProblemStatement: "why does the build fail?",
				ReasoningType: &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Known{Known: ahpv1.ReasoningKind_REASONING_KIND_RE_ACT}}}}
			r, err := c.Reason(ctx, connect.NewRequest(&ahpv1.ReasonRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return d.GetReasoning().GetAllow() != nil }},
		{"rate_limit", func() (*ahpv1.Decision, error) {
			e := ev("rate")
			e.Body = &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{SessionId: "typed", RetryAfterMs: 1500, CurrentUsage: "95%",
				LimitType: &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Custom{Custom: "gpu_minutes"}}}}
			r, err := c.HandleRateLimit(ctx, connect.NewRequest(&ahpv1.HandleRateLimitRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return d.GetRateLimit().GetRetry().GetRetryAfterMs() == 3000 }},
		{"confirmation", func() (*ahpv1.Decision, error) {
			e := ev("confirm")
			e.Body = &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{SessionId: "typed", Message: "Delete the branch?",
				ConfirmationType: &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: ahpv1.ConfirmationKind_CONFIRMATION_KIND_SAFETY_CONFIRM}}}}
			r, err := c.Confirm(ctx, connect.NewRequest(&ahpv1.ConfirmRequest{Event: e}))
			return r.Msg.GetDecision(), err
		}, func(d *ahpv1.Decision) bool { return d.GetConfirmation().GetEscalate() != nil }},
	}
	for _, tc := range cases {
		d, err := tc.call()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d.GetDecisionId() == "" {
			t.Errorf("%s: unexpected decision: d.GetDecisionId() == \"\" in %v", tc.name, d)
		} else if !tc.check(d) {
			t.Errorf("%s: unexpected decision: tc.check(d) is false in %v", tc.name, d)
		}
	}
	// A typed call with another type's payload is refused with the field named.
	e := ev("mismatch")
	e.Body = &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{}}
	_, err := c.Plan(ctx, connect.NewRequest(&ahpv1.PlanRequest{Event: e}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("mismatched payload: %v", err)
	}
}
