package policy_test

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestStopReason(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		effect *ahpv1.Effect
		reason string
		ok     bool
	}{
		{"deny", &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}}}, "no", true},
		{"ask", &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "sure?"}}}, "sure?", true},
		{"escalate", &ahpv1.Effect{Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Reason: "ops"}}}, "ops", true},
		{"defer", &ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{Reason: "later"}}}, "later", true},
		{"deny without a reason", &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{}}}, "", true},
		{"allow", &ahpv1.Effect{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{Reason: "fine"}}}, "", false},
		{"message", &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "hi"}}}, "", false},
		{"none", &ahpv1.Effect{}, "", false},
	} {
		reason, ok := policy.StopReason(tt.effect)
		if ok != tt.ok {
			t.Errorf("%s: ok = %v, want %v", tt.name, ok, tt.ok)
		}
		if reason != tt.reason {
			t.Errorf("%s: reason = %q, want %q", tt.name, reason, tt.reason)
		}
	}
}
