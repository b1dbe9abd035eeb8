package policy_test

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestHooksCallerGetsDenyFallbackForAsk(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: ask-push
    effect: {ask: {reason: force push to main}}
`)
	in := shell(t, "git push -f origin main")
	in.Capabilities = hooksCaps()
	res := p.Evaluate(in)
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	wantStrings(t, "effects", effectKinds(res), []string{"deny"})
	d := res.Effects[0]
	if d.GetRuleId() != "ask-push" || d.GetDeny().GetCode() != policy.CodeFallback {
		t.Errorf("deny = %v", d)
	}
	wantContains(t, "reason", d.GetDeny().GetReason(), "approval required: force push to main (ask is not supported by this caller)")
	if len(res.Fallbacks) != 1 {
		t.Fatalf("fallbacks = %v", res.Fallbacks)
	}
	fb := res.Fallbacks[0]
	if fb.GetRuleId() != "ask-push" || fb.GetWanted().GetAsk() == nil || fb.GetSent().GetDeny() == nil {
		t.Errorf("fallback = %v", fb)
	}
	wantContains(t, "fallback reason", fb.GetReason(), "rule fallback is deny")
}

func TestHooksCallerNeverReceivesUnadvertisedEffects(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: allow
    effect: {allow: {}}
  - id: msg
    effect: {message: {text: hi}}
  - id: modify
    on: [tool.before]
    fallback: no-effect
    effect: {modify: {merge: {a: 1}}}
  - id: defer
    fallback: no-effect
    effect: {defer: {retry_after_ms: 3}}
  - id: escalate
    fallback: no-effect
    effect: {escalate: {target: x}}
`)
	in := shell(t, "ls")
	in.Capabilities = hooksCaps()
	res := p.Evaluate(in)
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_ALLOW)
	if res.Effects != nil {
		t.Errorf("effects = %v, want none", effectKinds(res))
	}
	var fb []string
	for _, f := range res.Fallbacks {
		fb = append(fb, f.GetRuleId())
		if f.GetSent() != nil {
			t.Errorf("fallback %s sent %v, want nothing", f.GetRuleId(), f.GetSent())
		}
	}
	// allow is not recorded: an unsent allow means what no effect means.
	wantStrings(t, "fallbacks", fb, []string{"msg", "modify", "defer", "escalate"})
	wantStrings(t, "messages", res.Messages, []string{"hi"})
}

func TestFallbackNoEffectDropsAndRecords(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: soft-ask
    fallback: no-effect
    effect: {ask: {reason: maybe}}
`)
	in := shell(t, "ls")
	in.Capabilities = hooksCaps()
	res := p.Evaluate(in)
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_ALLOW)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"soft-ask"})
	if len(res.Fallbacks) != 1 || res.Fallbacks[0].GetSent() != nil || res.Fallbacks[0].GetWanted().GetAsk().GetReason() != "maybe" {
		t.Fatalf("fallbacks = %v", res.Fallbacks)
	}
	wantContains(t, "reason", res.Fallbacks[0].GetReason(), "rule fallback is no-effect")
}

func TestFallbackReasonsSayWhatWasWanted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ effect, want string }{
		{"{ask: {}}", `approval required: rule "r" (ask is not supported by this caller)`},
		{"{escalate: {reason: risky, target: sec}}", "escalation to sec required: risky (escalate is not supported by this caller)"},
		{"{defer: {retry_after_ms: 2000, reason: busy}}", "retry in 2000ms: busy (defer is not supported by this caller)"},
		{"{modify: {merge: {a: 1}, reason: add a}}", "input must be changed: add a (modify is not supported by this caller)"},
	} {
		p := mustParse(t, "version: 1\nrules:\n  - id: r\n    on: [tool.before]\n    effect: "+tc.effect+"\n")
		in := shell(t, "ls")
		in.Capabilities = hooksCaps()
		res := p.Evaluate(in)
		if len(res.Effects) != 1 || res.Effects[0].GetDeny().GetReason() != tc.want {
			t.Errorf("%s: effects = %v, want a deny saying %q", tc.effect, res.Effects, tc.want)
		}
	}
}

func TestFallbackDenyCompetesWithRealDenies(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: ask-first
    effect: {ask: {reason: approve}}
  - id: deny-second
    effect: {deny: {reason: policy says no}}
`)
	in := shell(t, "ls")
	in.Capabilities = hooksCaps()
	res := p.Evaluate(in)
	// The fallback deny came from the earlier rule, so it is the first deny.
	if len(res.Effects) != 1 || res.Effects[0].GetRuleId() != "ask-first" {
		t.Errorf("effects = %v", res.Effects)
	}
	// A caller that can ask gets the real deny: deny beats ask.
	res = p.Evaluate(shell(t, "ls"))
	if len(res.Effects) != 1 || res.Effects[0].GetRuleId() != "deny-second" {
		t.Errorf("effects = %v", res.Effects)
	}
}

func TestMessagesShownOnlyToCallersThatAdvertiseThem(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: note
    effect: {message: {text: careful}}
  - id: no
    effect: {deny: {reason: no}}
`)
	in := shell(t, "ls")
	in.Capabilities = caps(ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_MESSAGE)
	res := p.Evaluate(in)
	wantStrings(t, "effects", effectKinds(res), []string{"message", "deny"})

	in.Capabilities = hooksCaps()
	res = p.Evaluate(in)
	wantStrings(t, "effects", effectKinds(res), []string{"deny"})
	wantStrings(t, "messages", res.Messages, []string{"careful"})
	if len(res.Fallbacks) != 1 || res.Fallbacks[0].GetRuleId() != "note" || res.Fallbacks[0].GetSent() != nil {
		t.Errorf("fallbacks = %v, want the dropped message recorded", res.Fallbacks)
	}
}

func TestCallerWithoutDenyGetsNothingAndEveryDropIsRecorded(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: no
    effect: {deny: {reason: no}}
  - id: ask
    effect: {ask: {}}
`)
	in := shell(t, "ls")
	in.Capabilities = caps(ahpv1.EffectKind_EFFECT_KIND_ALLOW)
	res := p.Evaluate(in)
	if res.Effects != nil || len(res.Fallbacks) != 2 {
		t.Fatalf("effects %v, fallbacks %v", res.Effects, res.Fallbacks)
	}
	wantContains(t, "reason", res.Fallbacks[0].GetReason(), "deny is not supported by this caller")
	wantContains(t, "reason", res.Fallbacks[1].GetReason(), "nor is the deny fallback")
}

func TestNilCapabilitiesAcceptEverything(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: ask
    effect: {ask: {reason: a}}
  - id: note
    effect: {message: {text: m}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantStrings(t, "effects", effectKinds(res), []string{"ask", "message"})
	if res.Fallbacks != nil {
		t.Errorf("fallbacks = %v", res.Fallbacks)
	}
}

func TestVerdictOf(t *testing.T) {
	t.Parallel()
	deny := &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "x"}}}
	ask := &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{}}}
	esc := &ahpv1.Effect{Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{}}}
	def := &ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{}}}
	mod := &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{}}}
	msg := &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{}}}
	for _, tc := range []struct {
		effects []*ahpv1.Effect
		want    ahpv1.Verdict
	}{
		{nil, ahpv1.Verdict_VERDICT_ALLOW},
		{[]*ahpv1.Effect{msg}, ahpv1.Verdict_VERDICT_ALLOW},
		{[]*ahpv1.Effect{msg, mod}, ahpv1.Verdict_VERDICT_MODIFY},
		{[]*ahpv1.Effect{mod, def}, ahpv1.Verdict_VERDICT_DEFER},
		{[]*ahpv1.Effect{esc, ask, def}, ahpv1.Verdict_VERDICT_ESCALATE},
		{[]*ahpv1.Effect{ask, esc}, ahpv1.Verdict_VERDICT_ASK},
		{[]*ahpv1.Effect{ask, deny, msg}, ahpv1.Verdict_VERDICT_DENY},
	} {
		if got := policy.VerdictOf(tc.effects); got != tc.want {
			t.Errorf("VerdictOf(%v) = %v, want %v", tc.effects, got, tc.want)
		}
	}
}
