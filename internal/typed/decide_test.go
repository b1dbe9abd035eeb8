package typed_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// allTyped is one well-formed event of every typed type.
func allTyped() map[string]*ahpv1.Event {
	return map[string]*ahpv1.Event{
		"idle":             idleEvent(30000),
		"intent_detection": intentEvent("where is the auth function?", "/repo"),
		"context_perception": perceptionEvent(&ahpv1.ContextPerceptionPayload{
			SessionId: "s", Intent: ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNDERSTAND,
			Target:  entityTarget("AhpServer", "struct"),
			Context: &ahpv1.PerceptionContext{Workspace: "/repo"},
		}),
		"memory_recall": memoryEvent("auth bug", 5),
		"planning":      planningEvent("fix failing tests", known(ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP)),
		"reasoning":     reasoningEvent(reasoningType(ahpv1.ReasoningKind_REASONING_KIND_RE_ACT)),
		"rate_limit":    rateLimitEvent(1500),
		"confirmation":  confirmationEvent(confirmationType(ahpv1.ConfirmationKind_CONFIRMATION_KIND_COST_CONFIRM)),
	}
}

func TestDecideRejectsEventsThatAreNotTyped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		d     *ahpv1.Decision
		ev    *ahpv1.Event
		is    error
		field string
	}{
		{"nil decision", nil, idleEvent(1), nil, "decision"},
		{"nil event", &ahpv1.Decision{}, nil, typed.ErrNotTyped, "event"},
		{"tool.before", &ahpv1.Decision{}, &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE}, typed.ErrNotTyped, "event.type"},
		{"contract event", &ahpv1.Decision{}, &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE}, typed.ErrNotTyped, "event.type"},
		{"missing payload", &ahpv1.Decision{}, &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_IDLE}, typed.ErrMissingPayload, "event.body.idle"},
		{"payload of another type", &ahpv1.Decision{}, &ahpv1.Event{
			Type: ahpv1.EventType_EVENT_TYPE_PLANNING,
			Body: &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{}},
		}, typed.ErrMissingPayload, "event.body.planning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := typed.Decide(tt.d, tt.ev, policy.Result{}, nil, policy.Settings{}, now)
			if err == nil {
				t.Fatal("Decide succeeded, want an error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %q", err, tt.field)
			}
			if tt.d != nil && tt.d.Typed != nil {
				t.Errorf("decision was changed: %s", js(tt.d))
			}
		})
	}
}

func TestIsTypedAndActions(t *testing.T) {
	t.Parallel()
	typedTypes := map[ahpv1.EventType][]string{
		ahpv1.EventType_EVENT_TYPE_IDLE:               {"allow", "defer"},
		ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION:   {"allow", "block"},
		ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION: {"allow", "block", "refine"},
		ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL:      {"allow", "block"},
		ahpv1.EventType_EVENT_TYPE_PLANNING:           {"allow", "block", "modify"},
		ahpv1.EventType_EVENT_TYPE_REASONING:          {"allow", "block"},
		ahpv1.EventType_EVENT_TYPE_RATE_LIMIT:         {"retry", "queue", "skip"},
		ahpv1.EventType_EVENT_TYPE_CONFIRMATION:       {"escalate", "approve", "reject"},
	}
	for v := range ahpv1.EventType_name {
		et := ahpv1.EventType(v)
		want, isTyped := typedTypes[et]
		equal(t, typed.IsTyped(et), isTyped, "IsTyped("+et.String()+")")
		if got := typed.Actions(et); !slices.Equal(got, want) {
			t.Errorf("Actions(%s) = %v, want %v", et, got, want)
		}
	}
	// Actions hands out a copy.
	a := typed.Actions(ahpv1.EventType_EVENT_TYPE_IDLE)
	a[0] = "changed"
	equal(t, typed.Actions(ahpv1.EventType_EVENT_TYPE_IDLE)[0], "allow", "Actions after caller's change")
}

// TestEveryArmIsReachable drives each of the twenty typed decision variants and checks the verdict
// that goes with it.
func TestEveryArmIsReachable(t *testing.T) {
	t.Parallel()
	ans := func(a policy.TypedAnswer) policy.Result { a.RuleID = "r1"; return typedResult(a) }
	broad := perceptionEvent(&ahpv1.ContextPerceptionPayload{
		SessionId: "s", Intent: ahpv1.PerceptionIntent_PERCEPTION_INTENT_EXPLORE,
		Target: locationTarget("."), Context: &ahpv1.PerceptionContext{Workspace: "/repo"},
	})
	ev := allTyped()
	tests := []struct {
		arm     string
		ev      *ahpv1.Event
		res     policy.Result
		verdict ahpv1.Verdict
	}{
		{"idle.allow", ev["idle"], policy.Result{}, ahpv1.Verdict_VERDICT_ALLOW},
		{"idle.defer", idleEvent(100), policy.Result{}, ahpv1.Verdict_VERDICT_DEFER},
		{"intent_detection.allow", ev["intent_detection"], policy.Result{}, ahpv1.Verdict_VERDICT_ALLOW},
		{"intent_detection.block", ev["intent_detection"], ans(policy.TypedAnswer{Action: "block"}), ahpv1.Verdict_VERDICT_DENY},
		{"context_perception.allow", ev["context_perception"], policy.Result{}, ahpv1.Verdict_VERDICT_ALLOW},
		{"context_perception.block", ev["context_perception"], ans(policy.TypedAnswer{Action: "block"}), ahpv1.Verdict_VERDICT_DENY},
		{"context_perception.refine", broad, policy.Result{}, ahpv1.Verdict_VERDICT_MODIFY},
		{"memory_recall.allow", ev["memory_recall"], policy.Result{}, ahpv1.Verdict_VERDICT_ALLOW},
		{"memory_recall.block", ev["memory_recall"], ans(policy.TypedAnswer{Action: "block"}), ahpv1.Verdict_VERDICT_DENY},
		{"planning.allow", ev["planning"], policy.Result{}, ahpv1.Verdict_VERDICT_ALLOW},
		{"planning.block", ev["planning"], ans(policy.TypedAnswer{Action: "block"}), ahpv1.Verdict_VERDICT_DENY},
		{"planning.modify", ev["planning"], ans(policy.TypedAnswer{Action: "modify", Task: "t"}), ahpv1.Verdict_VERDICT_MODIFY},
		{"reasoning.allow", ev["reasoning"], policy.Result{}, ahpv1.Verdict_VERDICT_ALLOW},
		{"reasoning.block", ev["reasoning"], ans(policy.TypedAnswer{Action: "block"}), ahpv1.Verdict_VERDICT_DENY},
		{"rate_limit.retry", ev["rate_limit"], policy.Result{}, ahpv1.Verdict_VERDICT_DEFER},
		{"rate_limit.queue", ev["rate_limit"], ans(policy.TypedAnswer{Action: "queue"}), ahpv1.Verdict_VERDICT_DEFER},
		{"rate_limit.skip", ev["rate_limit"], ans(policy.TypedAnswer{Action: "skip"}), ahpv1.Verdict_VERDICT_DENY},
		{"confirmation.escalate", ev["confirmation"], policy.Result{}, ahpv1.Verdict_VERDICT_ESCALATE},
		{"confirmation.approve", ev["confirmation"], ans(policy.TypedAnswer{Action: "approve"}), ahpv1.Verdict_VERDICT_ALLOW},
		{"confirmation.reject", ev["confirmation"], ans(policy.TypedAnswer{Action: "reject"}), ahpv1.Verdict_VERDICT_DENY},
	}
	for _, tt := range tests {
		t.Run(tt.arm, func(t *testing.T) {
			t.Parallel()
			d := decide(t, tt.ev, tt.res, nil, policy.Settings{})
			equal(t, arm(d), tt.arm, "arm")
			equal(t, d.GetVerdict(), tt.verdict, "verdict")
		})
	}
}

// TestDenyBeatsTypedAnswer: a generic deny refuses every typed event with its own refusal, even
// when a rule also gave a typed answer, and names the denying rule where the variant has metadata.
func TestDenyBeatsTypedAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, arm, answer string
		hasMetadata      bool
	}{
		{"idle", "idle.defer", "allow", false},
		{"intent_detection", "intent_detection.block", "allow", true},
		{"context_perception", "context_perception.block", "allow", true},
		{"memory_recall", "memory_recall.block", "allow", true},
		{"planning", "planning.block", "allow", true},
		{"reasoning", "reasoning.block", "allow", true},
		{"rate_limit", "rate_limit.skip", "retry", false},
		{"confirmation", "confirmation.reject", "approve", false},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			t.Parallel()
			res := denyResult("no-typed", "not in this session")
			res.Typed = &policy.TypedAnswer{RuleID: "typed-rule", Action: tt.answer}
			d := decide(t, allTyped()[tt.typ], res, nil, policy.Settings{})
			equal(t, arm(d), tt.arm, "arm")
			equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_DENY, "verdict")
			equal(t, refusalReason(d), "denied by policy: not in this session", "reason")
			want := ""
			if tt.hasMetadata {
				want = "no-typed"
			}
			equal(t, metaString(d, typed.RuleIDKey), want, "rule id metadata")
			equal(t, d.GetSynthetic(), false, "synthetic")
		})
	}
}

// refusalReason is the reason of whichever refusal variant d holds.
func refusalReason(d *ahpv1.Decision) string {
	switch {
	case d.GetIdle().GetDefer() != nil:
		return d.GetIdle().GetDefer().GetReason()
	case d.GetIntentDetection().GetBlock() != nil:
		return d.GetIntentDetection().GetBlock().GetReason()
	case d.GetContextPerception().GetBlock() != nil:
		return d.GetContextPerception().GetBlock().GetReason()
	case d.GetMemoryRecall().GetBlock() != nil:
		return d.GetMemoryRecall().GetBlock().GetReason()
	case d.GetPlanning().GetBlock() != nil:
		return d.GetPlanning().GetBlock().GetReason()
	case d.GetReasoning().GetBlock() != nil:
		return d.GetReasoning().GetBlock().GetReason()
	case d.GetRateLimit().GetSkip() != nil:
		return d.GetRateLimit().GetSkip().GetReason()
	case d.GetConfirmation().GetReject() != nil:
		return d.GetConfirmation().GetReject().GetReason()
	}
	return ""
}

func TestAskBecomesEscalateOrRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, arm string
		verdict  ahpv1.Verdict
		fallback bool
	}{
		{"confirmation", "confirmation.escalate", ahpv1.Verdict_VERDICT_ASK, false},
		{"idle", "idle.defer", ahpv1.Verdict_VERDICT_DENY, true},
		{"intent_detection", "intent_detection.block", ahpv1.Verdict_VERDICT_DENY, true},
		{"context_perception", "context_perception.block", ahpv1.Verdict_VERDICT_DENY, true},
		{"memory_recall", "memory_recall.block", ahpv1.Verdict_VERDICT_DENY, true},
		{"planning", "planning.block", ahpv1.Verdict_VERDICT_DENY, true},
		{"reasoning", "reasoning.block", ahpv1.Verdict_VERDICT_DENY, true},
		{"rate_limit", "rate_limit.skip", ahpv1.Verdict_VERDICT_DENY, true},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			t.Parallel()
			res := askResult("review", "spending needs a human")
			res.Typed = &policy.TypedAnswer{RuleID: "typed-rule", Action: "approve"}
			d := decide(t, allTyped()[tt.typ], res, nil, policy.Settings{})
			equal(t, arm(d), tt.arm, "arm")
			equal(t, d.GetVerdict(), tt.verdict, "verdict")
			equal(t, d.GetSynthetic(), tt.fallback, "synthetic")
			if !tt.fallback {
				equal(t, len(d.GetFallbacks()), 0, "fallbacks")
				return
			}
			equal(t, refusalReason(d), "approval required: spending needs a human", "reason")
			if len(d.GetFallbacks()) != 1 {
				t.Fatalf("fallbacks = %d, want 1", len(d.GetFallbacks()))
			}
			fb := d.GetFallbacks()[0]
			equal(t, fb.GetRuleId(), "review", "fallback rule")
			equal(t, fb.GetWanted().GetAsk().GetReason(), "spending needs a human", "fallback wanted")
			equal(t, fb.GetSent().GetDeny().GetReason(), "approval required: spending needs a human", "fallback sent")
		})
	}
	t.Run("escalate effect", func(t *testing.T) {
		t.Parallel()
		res := policy.Result{Verdict: ahpv1.Verdict_VERDICT_ESCALATE, Effects: []*ahpv1.Effect{{
			RuleId: "oncall", Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Reason: "r", Target: "oncall"}},
		}}}
		d := decide(t, allTyped()["confirmation"], res, nil, policy.Settings{})
		equal(t, arm(d), "confirmation.escalate", "arm")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_ESCALATE, "verdict")
	})
}

func TestDeferBecomesLaterOrRefusal(t *testing.T) {
	t.Parallel()
	t.Run("idle defers with the reason", func(t *testing.T) {
		t.Parallel()
		d := decide(t, idleEvent(60000), deferResult("quiet-hours", "busy", 2000), nil, policy.Settings{})
		equal(t, arm(d), "idle.defer", "arm")
		equal(t, d.GetIdle().GetDefer().GetReason(), "deferred by policy: busy (retry after 2000ms)", "reason")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_DEFER, "verdict")
	})
	t.Run("rate_limit retries after the policy's delay", func(t *testing.T) {
		t.Parallel()
		d := decide(t, rateLimitEvent(1500), deferResult("slow-down", "", 7000), nil, policy.Settings{})
		equal(t, d.GetRateLimit().GetRetry().GetRetryAfterMs(), uint64(7000), "retry_after_ms")
		equal(t, metaString(d, typed.RuleIDKey), "slow-down", "rule id")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_DEFER, "verdict")
	})
	t.Run("rate_limit without a delay uses the backoff", func(t *testing.T) {
		t.Parallel()
		d := decide(t, rateLimitEvent(1500), deferResult("slow-down", "", 0), nil, policy.Settings{})
		equal(t, d.GetRateLimit().GetRetry().GetRetryAfterMs(), uint64(3000), "retry_after_ms")
	})
	t.Run("reasoning cannot wait and refuses", func(t *testing.T) {
		t.Parallel()
		d := decide(t, allTyped()["reasoning"], deferResult("later", "busy", 500), nil, policy.Settings{})
		equal(t, arm(d), "reasoning.block", "arm")
		equal(t, refusalReason(d), "deferred by policy: busy (retry after 500ms)", "reason")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_DENY, "verdict")
		equal(t, len(d.GetFallbacks()), 1, "fallbacks")
		equal(t, d.GetFallbacks()[0].GetWanted().GetDefer().GetRetryAfterMs(), uint64(500), "fallback wanted")
	})
	t.Run("confirmation rejects", func(t *testing.T) {
		t.Parallel()
		d := decide(t, allTyped()["confirmation"], deferResult("later", "", 0), nil, policy.Settings{})
		equal(t, arm(d), "confirmation.reject", "arm")
		equal(t, refusalReason(d), "deferred by policy", "reason")
	})
}

func TestGenericVerdictEdgeCases(t *testing.T) {
	t.Parallel()
	t.Run("verdict without effects", func(t *testing.T) {
		t.Parallel()
		d := decide(t, allTyped()["planning"], policy.Result{Verdict: ahpv1.Verdict_VERDICT_DENY}, nil, policy.Settings{})
		equal(t, refusalReason(d), "denied by policy", "reason")
		equal(t, meta(d) == nil, true, "no metadata without a rule")
	})
	t.Run("a deny effect beats an allow summary", func(t *testing.T) {
		t.Parallel()
		res := denyResult("r", "x")
		res.Verdict = ahpv1.Verdict_VERDICT_ALLOW
		d := decide(t, allTyped()["memory_recall"], res, nil, policy.Settings{})
		equal(t, arm(d), "memory_recall.block", "arm")
	})
	t.Run("deny wins over an earlier ask", func(t *testing.T) {
		t.Parallel()
		res := policy.Result{Verdict: ahpv1.Verdict_VERDICT_DENY, Effects: []*ahpv1.Effect{
			{RuleId: "a", Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "ask"}}},
			{RuleId: "d", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "deny"}}},
		}}
		d := decide(t, allTyped()["confirmation"], res, nil, policy.Settings{})
		equal(t, refusalReason(d), "denied by policy: deny", "reason")
	})
	t.Run("allow, modify and message effects fall through to the built-in answer", func(t *testing.T) {
		t.Parallel()
		res := policy.Result{Verdict: ahpv1.Verdict_VERDICT_MODIFY, Effects: []*ahpv1.Effect{
			{RuleId: "m", Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{}}},
			{RuleId: "t", Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "hi"}}},
		}}
		d := decide(t, rateLimitEvent(1500), res, nil, policy.Settings{})
		equal(t, d.GetRateLimit().GetRetry().GetRetryAfterMs(), uint64(3000), "retry_after_ms")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_DEFER, "verdict")
	})
	t.Run("a fallback without an effect describes the verdict", func(t *testing.T) {
		t.Parallel()
		for v, wanted := range map[ahpv1.Verdict]string{
			ahpv1.Verdict_VERDICT_ASK:   "ask",
			ahpv1.Verdict_VERDICT_DEFER: "defer",
		} {
			d := decide(t, allTyped()["planning"], policy.Result{Verdict: v}, nil, policy.Settings{})
			fb := d.GetFallbacks()[0]
			f := fb.GetWanted().ProtoReflect()
			equal(t, string(f.WhichOneof(f.Descriptor().Oneofs().ByName("effect")).Name()), wanted, "wanted effect")
			equal(t, fb.GetReason(), "planning "+map[string]string{"ask": "cannot ask for approval", "defer": "cannot be deferred"}[wanted]+"; answered with its refusal", "reason")
		}
	})
	t.Run("existing fallbacks are kept", func(t *testing.T) {
		t.Parallel()
		d := &ahpv1.Decision{Fallbacks: []*ahpv1.Fallback{{RuleId: "earlier"}}}
		if err := typed.Decide(d, allTyped()["planning"], askResult("a", ""), nil, policy.Settings{}, now); err != nil {
			t.Fatal(err)
		}
		equal(t, len(d.GetFallbacks()), 2, "fallbacks")
		equal(t, refusalReason(d), "approval required", "reason")
	})
}

// TestTypedAnswerBeatsBuiltin: a legal rule answer replaces the built-in one and is attributed.
func TestTypedAnswerBeatsBuiltin(t *testing.T) {
	t.Parallel()
	ev := allTyped()
	tests := []struct {
		typ     string
		answer  policy.TypedAnswer
		arm     string
		check   func(t *testing.T, d *ahpv1.Decision)
		hasMeta bool
	}{
		{"idle", policy.TypedAnswer{Action: "defer", Reason: "night"}, "idle.defer", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetIdle().GetDefer().GetReason(), "night", "reason")
		}, false},
		{"intent_detection", policy.TypedAnswer{Intent: "track", Confidence: 0.7}, "intent_detection.allow", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetIntentDetection().GetAllow().GetDetectedIntent(), "track", "intent")
			equal(t, d.GetIntentDetection().GetAllow().GetConfidence(), float32(0.7), "confidence")
		}, false},
		{"memory_recall", policy.TypedAnswer{Facts: []string{"policy fact"}}, "memory_recall.allow", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetMemoryRecall().GetAllow().GetInjectedFacts()[0].GetSource(), "policy", "source")
		}, true},
		{"planning", policy.TypedAnswer{Action: "modify", Task: "write a failing test first", Hints: []string{"small steps"}}, "planning.modify", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetPlanning().GetModify().GetModifiedTask(), "write a failing test first", "task")
			equal(t, d.GetPlanning().GetModify().GetHints().GetValues()[0], "small steps", "hint")
		}, false},
		{"reasoning", policy.TypedAnswer{Hints: []string{"cite the log line"}}, "reasoning.allow", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetReasoning().GetAllow().GetHints().GetValues()[0], "cite the log line", "hint")
		}, true},
		{"rate_limit", policy.TypedAnswer{Action: "retry", RetryAfterMs: 42}, "rate_limit.retry", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetRateLimit().GetRetry().GetRetryAfterMs(), uint64(42), "retry_after_ms")
		}, true},
		{"confirmation", policy.TypedAnswer{Action: "reject", Reason: "cost above budget"}, "confirmation.reject", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, d.GetConfirmation().GetReject().GetReason(), "cost above budget", "reason")
		}, false},
		{"context_perception", policy.TypedAnswer{Action: "block"}, "context_perception.block", func(t *testing.T, d *ahpv1.Decision) {
			equal(t, refusalReason(d), "blocked by rule r7", "reason")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			t.Parallel()
			tt.answer.RuleID = "r7"
			d := decide(t, ev[tt.typ], typedResult(tt.answer), nil, policy.Settings{})
			equal(t, arm(d), tt.arm, "arm")
			tt.check(t, d)
			want := ""
			if tt.hasMeta {
				want = "r7"
			}
			equal(t, metaString(d, typed.RuleIDKey), want, "rule id metadata")
		})
	}
}

// TestIllegalTypedActionIsIgnored: an action the event type does not have is dropped, the
// built-in answer stands, and the metadata says why where the variant has metadata.
func TestIllegalTypedActionIsIgnored(t *testing.T) {
	t.Parallel()
	ev := allTyped()
	tests := []struct {
		typ, action, arm string
		noted            bool
	}{
		{"planning", "approve", "planning.allow", true},
		{"memory_recall", "refine", "memory_recall.allow", true},
		{"reasoning", "retry", "reasoning.allow", true},
		{"rate_limit", "allow", "rate_limit.retry", true},
		{"idle", "block", "idle.allow", false},
		{"confirmation", "allow", "confirmation.escalate", false},
		{"intent_detection", "deny", "intent_detection.allow", false},
		{"context_perception", "modify", "context_perception.allow", true},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.action, func(t *testing.T) {
			t.Parallel()
			d := decide(t, ev[tt.typ], typedResult(policy.TypedAnswer{RuleID: "bad", Action: tt.action}), nil, policy.Settings{})
			equal(t, arm(d), tt.arm, "arm")
			equal(t, metaString(d, typed.RuleIDKey), "", "rule id (the rule did not decide)")
			note := metaString(d, typed.NoteKey)
			if tt.noted && !strings.Contains(note, `ignored typed answer "`+tt.action+`" of rule bad`) {
				t.Errorf("note = %q", note)
			}
		})
	}
}

func TestBuiltinAnswersCarryNoMetadata(t *testing.T) {
	t.Parallel()
	for typ, ev := range allTyped() {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			d := decide(t, ev, policy.Result{}, nil, policy.Settings{})
			for k := range meta(d).GetFields() {
				if k != typed.HitsKey {
					t.Errorf("built-in %s has metadata key %q", arm(d), k)
				}
			}
		})
	}
}

func TestDecideLeavesOtherFieldsAlone(t *testing.T) {
	t.Parallel()
	d := &ahpv1.Decision{DecisionId: "id-1", MatchedRuleIds: []string{"r"}, LatencyUs: 7}
	if err := typed.Decide(d, rateLimitEvent(1500), policy.Result{}, nil, policy.Settings{}, now); err != nil {
		t.Fatal(err)
	}
	equal(t, d.GetDecisionId(), "id-1", "decision_id")
	equal(t, d.GetLatencyUs(), uint64(7), "latency_us")
	equal(t, len(d.GetMatchedRuleIds()), 1, "matched rules")
}
