package typed_test

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestConfirmationBuiltin(t *testing.T) {
	t.Parallel()
	safety := confirmationType(ahpv1.ConfirmationKind_CONFIRMATION_KIND_SAFETY_CONFIRM)
	user := confirmationType(ahpv1.ConfirmationKind_CONFIRMATION_KIND_USER_CONFIRM)
	cost := confirmationType(ahpv1.ConfirmationKind_CONFIRMATION_KIND_COST_CONFIRM)
	deploy := &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Custom{Custom: "deploy_confirm"}}
	defaults := map[string]string{
		"user_confirm":   "approve",
		"cost_confirm":   "reject",
		"deploy_confirm": "escalate",
		"safety_confirm": "maybe", // not an answer: ignored
	}
	tests := []struct {
		name     string
		ct       *ahpv1.ConfirmationType
		defaults map[string]string
		arm      string
		reason   string
	}{
		{name: "safety escalates", ct: safety, arm: "confirmation.escalate"},
		{name: "user escalates", ct: user, arm: "confirmation.escalate"},
		{name: "cost escalates", ct: cost, arm: "confirmation.escalate"},
		{name: "custom escalates", ct: deploy, arm: "confirmation.escalate"},
		{name: "missing type escalates", arm: "confirmation.escalate"},
		{name: "configured approve", ct: user, defaults: defaults, arm: "confirmation.approve"},
		{name: "configured reject", ct: cost, defaults: defaults, arm: "confirmation.reject",
			reason: "rejected by default for cost_confirm confirmations"},
		{name: "configured custom", ct: deploy, defaults: defaults, arm: "confirmation.escalate"},
		{name: "unknown default value escalates", ct: safety, defaults: defaults, arm: "confirmation.escalate"},
		{name: "missing type ignores defaults", defaults: map[string]string{"": "approve"}, arm: "confirmation.escalate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := policy.Settings{Confirmation: policy.ConfirmationSettings{Default: tt.defaults}}
			d := decide(t, confirmationEvent(tt.ct), policy.Result{}, nil, s)
			equal(t, arm(d), tt.arm, "arm")
			equal(t, d.GetConfirmation().GetReject().GetReason(), tt.reason, "reason")
		})
	}
}

func TestConfirmationRuleAnswers(t *testing.T) {
	t.Parallel()
	cost := confirmationEvent(confirmationType(ahpv1.ConfirmationKind_CONFIRMATION_KIND_COST_CONFIRM))
	s := policy.Settings{Confirmation: policy.ConfirmationSettings{Default: map[string]string{"cost_confirm": "approve"}}}
	tests := []struct {
		action, arm string
		verdict     ahpv1.Verdict
	}{
		{"approve", "confirmation.approve", ahpv1.Verdict_VERDICT_ALLOW},
		{"reject", "confirmation.reject", ahpv1.Verdict_VERDICT_DENY},
		{"escalate", "confirmation.escalate", ahpv1.Verdict_VERDICT_ESCALATE},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			t.Parallel()
			d := decide(t, cost, typedResult(policy.TypedAnswer{RuleID: "r", Action: tt.action}), nil, s)
			equal(t, arm(d), tt.arm, "arm")
			equal(t, d.GetVerdict(), tt.verdict, "verdict")
		})
	}
}
