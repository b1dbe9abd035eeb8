package typed

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// confirmationKind answers confirmation: escalate (unit), approve (unit) or reject{reason}. It is
// the only typed event that can hand a decision to a human, so a policy ask or escalate lands here
// as an escalate.
var confirmationKind = &kind{
	name:     "confirmation",
	refuse:   setReject,
	escalate: setEscalate,
	decide:   decideConfirmation,
}

// decideConfirmation (a rule's reject is applied by Decide): a rule's approve or escalate wins.
// Built in, the answer is Settings.Confirmation.Default for the confirmation type (safety_confirm,
// user_confirm, cost_confirm or a custom name) when it is approve, reject or escalate, and
// escalate otherwise: the server never approves on its own unless a policy says so.
func decideConfirmation(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	switch action(ta) {
	case "approve":
		setApprove(d)
		return trace{ruleID: ta.RuleID}
	case "escalate":
		setEscalate(d)
		return trace{ruleID: ta.RuleID}
	}
	name := confirmationName(in.ev.GetConfirmation().GetConfirmationType())
	answer := ""
	if name != "" {
		answer = in.s.Confirmation.Default[name]
	}
	switch answer {
	case "approve":
		setApprove(d)
	case "reject":
		setReject(d, "rejected by default for "+name+" confirmations")
	default:
		setEscalate(d)
	}
	return trace{}
}

func setEscalate(d *ahpv1.Decision) {
	d.Typed = &ahpv1.Decision_Confirmation{Confirmation: &ahpv1.ConfirmationDecision{
		Decision: &ahpv1.ConfirmationDecision_Escalate_{Escalate: &ahpv1.ConfirmationDecision_Escalate{}},
	}}
}

func setApprove(d *ahpv1.Decision) {
	d.Typed = &ahpv1.Decision_Confirmation{Confirmation: &ahpv1.ConfirmationDecision{
		Decision: &ahpv1.ConfirmationDecision_Approve_{Approve: &ahpv1.ConfirmationDecision_Approve{}},
	}}
}

func setReject(d *ahpv1.Decision, reason string) {
	d.Typed = &ahpv1.Decision_Confirmation{Confirmation: &ahpv1.ConfirmationDecision{
		Decision: &ahpv1.ConfirmationDecision_Reject_{Reject: &ahpv1.ConfirmationDecision_Reject{Reason: reason}},
	}}
}
