package policy_test

import (
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

const approvalPolicy = `
version: 1
rules:
  - id: note
    on: [tool.before]
    effect: {message: {text: "watched"}}
  - id: ask-rm
    on: [tool.before]
    when: input.command.startsWith("rm ")
    effect:
      ask:
        reason: deleting files
        approval:
          hold: 90s
          ttl: 10m
          approvers: [alice, "group:oncall"]
          notifiers: [ops]
  - id: escalate-rm-rf
    on: [tool.before]
    when: input.command.contains("-rf")
    effect:
      escalate:
        target: security
        approval: {hold: 30s, approvers: [bob, alice], notifiers: [ops, sec], on_timeout: no-effect}
  - id: deny-root
    on: [tool.before]
    when: input.command == "rm /"
    effect: {deny: {reason: never}}
`

func TestApprovalBlockGivesApproval(t *testing.T) {
	t.Parallel()
	p := mustParse(t, approvalPolicy)
	in := shell(t, "rm build.log")
	in.Capabilities = hooksCaps()
	res := p.Evaluate(in)
	wantNoErrors(t, res)
	// What the caller gets without a decision is unchanged: the fallback deny.
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	a := res.Approval
	if a == nil {
		t.Fatal("Approval = nil, want one for ask-rm")
	}
	wantStrings(t, "rule ids", a.RuleIDs, []string{"ask-rm"})
	if a.Hold != 90*time.Second || a.TTL != 10*time.Minute || !a.OnTimeoutDeny || a.Kind != ahpv1.EffectKind_EFFECT_KIND_ASK {
		t.Errorf("approval = %+v", a)
	}
	wantContains(t, "reason", a.Reason, "deleting files")
	// Once approved: what the other rules say (a message the Hooks caller cannot show: nothing).
	if a.ApprovedVerdict != ahpv1.Verdict_VERDICT_ALLOW || len(a.Approved) != 0 {
		t.Errorf("approved = %v %v, want allow without effects", a.ApprovedVerdict, a.Approved)
	}
	if !a.MayDecide("alice", nil) || !a.MayDecide("carol", []string{"oncall"}) || a.MayDecide("bob", nil) {
		t.Error("MayDecide does not follow approvers [alice, group:oncall]")
	}
}

func TestApprovalRulesCombine(t *testing.T) {
	t.Parallel()
	p := mustParse(t, approvalPolicy)
	res := p.Evaluate(shell(t, "rm -rf build"))
	a := res.Approval
	if a == nil {
		t.Fatal("Approval = nil")
	}
	wantStrings(t, "rule ids", a.RuleIDs, []string{"ask-rm", "escalate-rm-rf"})
	wantStrings(t, "notifiers", a.Notifiers, []string{"ops", "sec"})
	if a.Hold != 30*time.Second || !a.OnTimeoutDeny {
		t.Errorf("hold %v on_timeout deny %v, want the shortest hold and deny when any rule says so", a.Hold, a.OnTimeoutDeny)
	}
	// alice is in both lists; bob only in one; an oncall member only in one.
	if !a.MayDecide("alice", nil) || a.MayDecide("bob", nil) || a.MayDecide("carol", []string{"oncall"}) {
		t.Error("a decider must be listed by every approval rule")
	}
	// The message rule survives approval for a caller that shows messages.
	if len(a.Approved) != 1 || a.Approved[0].GetMessage().GetText() != "watched" {
		t.Errorf("approved effects = %v, want the message", a.Approved)
	}
}

func TestApprovalNotOfferedWhenAnotherRuleDenies(t *testing.T) {
	t.Parallel()
	res := mustParse(t, approvalPolicy).Evaluate(shell(t, "rm /"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	if res.Approval != nil {
		t.Errorf("Approval = %+v, want none: deny-root stops the call whatever a person says", res.Approval)
	}
}

func TestWithoutApprovalBlockNothingChanges(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `
version: 1
rules:
  - id: ask-rm
    on: [tool.before]
    effect: {ask: {reason: deleting files}}
`)
	res := p.Evaluate(shell(t, "rm x"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_ASK)
	if res.Approval != nil {
		t.Errorf("Approval = %+v, want nil without an approval block", res.Approval)
	}
}

func TestApprovalBlockErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ block, want string }{
		{`{hold: soon}`, "effect.ask.approval.hold: want a duration"},
		{`{hold: -1s}`, "effect.ask.approval.hold: must be positive"},
		{`{ttl: 48h}`, "effect.ask.approval.ttl: must be at most 24h0m0s"},
		{`{on_timeout: allow}`, `effect.ask.approval.on_timeout: want deny or no-effect, got "allow"`},
		{`{approvers: ["a b"]}`, "effect.ask.approval.approvers[0]: want a principal name"},
		{`{notifiers: [Ops!]}`, "effect.ask.approval.notifiers[0]: want a notifier name"},
		{`{hodl: 1s}`, `unknown field "hodl" in approval`},
	} {
		got := parseErr(t, "version: 1\nrules:\n  - id: r\n    effect: {ask: {approval: "+tc.block+"}}\n")
		wantContains(t, tc.block, got, tc.want)
	}
}
