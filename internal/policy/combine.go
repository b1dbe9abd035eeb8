package policy

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// CodeFallback is the deny code of denials the engine sends in place of an effect the caller
// cannot express, so nobody mistakes them for a rule's own denial.
const CodeFallback = "dev.ahpgateway.policy.fallback"

// capSet is the set of effects a caller accepts, one bit per ahpv1.EffectKind.
type capSet uint64

const allCaps = ^capSet(0)

func capsOf(c *ahpv1.Capabilities) capSet {
	if c == nil {
		return allCaps
	}
	var s capSet
	for _, e := range c.GetEffects() {
		if e > 0 && e < 64 {
			s |= 1 << uint(e)
		}
	}
	return s
}

func (s capSet) has(k ahpv1.EffectKind) bool { return s&(1<<uint(k)) != 0 }

// candidate is an effect on its way into the Result, with the rule that produced it.
type candidate struct {
	rule   *rule
	effect *ahpv1.Effect
}

// combiner collects the effects of matching enforce rules, narrowed to the caller, and picks
// what the caller receives.
type combiner struct {
	caps capSet
	// res receives Messages, Fallbacks, Effects and Verdict (finish); a value, not a pointer to
	// the caller's Result, so neither escapes to the heap.
	res  Result
	keep bool // record adds (the policy has approval rules)

	deny, ask, deferral, allow *candidate // first of each (deferral: longest wait)
	modifies                   []candidate
	input                      *structpb.Struct // input after the last modify
	messages                   []candidate
	added                      []added     // every add, in order, kept only while approval rules may follow
	extras                     []candidate // return, flow, inject, modify of a draft target (draft_effects.go)
	draftTargets               bool        // the caller can take modify of a target other than input
}

// added is one call of combiner.add, to replay it into another combiner.
type added struct {
	rule   *rule
	effect *ahpv1.Effect
	input  *structpb.Struct
}

// add takes the effect of one enforce rule; input is the tool input after it.
func (c *combiner) add(r *rule, e *ahpv1.Effect, input *structpb.Struct) {
	if c.keep {
		c.added = append(c.added, added{r, e, input})
	}
	if c.addDraft(r, e) {
		return
	}
	kind := r.effect
	switch kind {
	case ahpv1.EffectKind_EFFECT_KIND_MESSAGE:
		c.res.Messages = append(c.res.Messages, e.GetMessage().GetText())
		if c.caps.has(kind) {
			c.messages = append(c.messages, candidate{r, e})
		} else {
			c.res.Fallbacks = append(c.res.Fallbacks, &ahpv1.Fallback{
				RuleId: r.info.ID, Wanted: e, Reason: "message is not supported by this caller; dropped",
			})
		}
		return
	case ahpv1.EffectKind_EFFECT_KIND_ALLOW:
		// An allow the caller cannot express means what no effect means; nothing to record.
		if c.caps.has(kind) && c.allow == nil {
			c.allow = &candidate{r, e}
		}
		return
	}
	if !c.caps.has(kind) {
		if e = c.fallback(r, e); e == nil {
			return
		}
		kind = ahpv1.EffectKind_EFFECT_KIND_DENY
	}
	switch kind {
	case ahpv1.EffectKind_EFFECT_KIND_DENY:
		if c.deny == nil {
			c.deny = &candidate{r, e}
		}
	case ahpv1.EffectKind_EFFECT_KIND_ASK, ahpv1.EffectKind_EFFECT_KIND_ESCALATE:
		if c.ask == nil {
			c.ask = &candidate{r, e}
		}
	case ahpv1.EffectKind_EFFECT_KIND_DEFER:
		if c.deferral == nil || e.GetDefer().GetRetryAfterMs() > c.deferral.effect.GetDefer().GetRetryAfterMs() {
			c.deferral = &candidate{r, e}
		}
	case ahpv1.EffectKind_EFFECT_KIND_MODIFY:
		c.modifies = append(c.modifies, candidate{r, e})
		c.input = input
	}
}

// fallback replaces an effect the caller cannot express, as the rule's `fallback:` says, records
// it, and returns the deny to send or nil.
func (c *combiner) fallback(r *rule, wanted *ahpv1.Effect) *ahpv1.Effect {
	name := names.EffectKindName(r.effect)
	fb := &ahpv1.Fallback{RuleId: r.info.ID, Wanted: cloneModify(wanted)}
	canDeny := c.caps.has(ahpv1.EffectKind_EFFECT_KIND_DENY)
	switch {
	case r.effect == ahpv1.EffectKind_EFFECT_KIND_DENY:
		fb.Reason = "deny is not supported by this caller; dropped"
	case !r.fallbackDeny:
		fb.Reason = name + " is not supported by this caller; rule fallback is no-effect"
	case !canDeny:
		fb.Reason = name + " is not supported by this caller, nor is the deny fallback; dropped"
	default:
		fb.Sent = &ahpv1.Effect{RuleId: r.info.ID, Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{
			Reason: fallbackReason(r, wanted),
			Code:   CodeFallback,
		}}}
		fb.Reason = name + " is not supported by this caller; rule fallback is deny"
	}
	c.res.Fallbacks = append(c.res.Fallbacks, fb)
	return fb.Sent
}

// fallbackReason says why a caller got a deny it did not see coming, in the caller's terms.
func fallbackReason(r *rule, wanted *ahpv1.Effect) string {
	var head, reason string
	switch e := wanted.GetEffect().(type) {
	case *ahpv1.Effect_Ask:
		head, reason = "approval required", e.Ask.GetReason()
	case *ahpv1.Effect_Escalate:
		head, reason = "escalation required", e.Escalate.GetReason()
		if t := e.Escalate.GetTarget(); t != "" {
			head = "escalation to " + t + " required"
		}
	case *ahpv1.Effect_Defer:
		head, reason = "retry later", e.Defer.GetReason()
		if ms := e.Defer.GetRetryAfterMs(); ms > 0 {
			head = fmt.Sprintf("retry in %dms", ms)
		}
	case *ahpv1.Effect_Modify:
		head, reason = "input must be changed", e.Modify.GetReason()
	}
	if reason == "" {
		reason = fmt.Sprintf("rule %q", r.info.ID)
	}
	return fmt.Sprintf("%s: %s (%s is not supported by this caller)", head, reason, names.EffectKindName(r.effect))
}

// finish picks the winning effect, adds the messages, and sets the verdict.
func (c *combiner) finish() {
	var win *candidate
	switch {
	case c.deny != nil:
		win = c.deny
	case c.ask != nil:
		win = c.ask
	case c.deferral != nil:
		win = c.deferral
	case len(c.modifies) > 0:
		win = c.combinedModify()
	case c.allow != nil:
		win = c.allow
	}
	out := c.messages
	// Supplied results, loop control, injections and draft-target edits go with everything but a
	// refusal or a hold: a deny, ask or defer ends the call, and they would not apply.
	if c.deny == nil && c.ask == nil && c.deferral == nil {
		out = append(slices.Clone(out), c.extras...)
	}
	if win != nil {
		out = append(out, *win)
	}
	if win != nil || len(out) > len(c.messages) {
		// Rule order: the winner (and any draft effect) goes where its rule is among the messages.
		slices.SortStableFunc(out, func(a, b candidate) int { return a.rule.index - b.rule.index })
	}
	if len(out) > 0 {
		c.res.Effects = make([]*ahpv1.Effect, len(out))
		for i, cd := range out {
			c.res.Effects[i] = cd.effect
		}
	}
	c.res.Verdict = VerdictOf(c.res.Effects)
}

// combinedModify is one MODIFY effect carrying the input after every modify rule, attributed to
// the first contributing rule; every contributor is in MatchedRuleIDs.
func (c *combiner) combinedModify() *candidate {
	first := c.modifies[0]
	var reasons []string
	for _, m := range c.modifies {
		if r := m.effect.GetModify().GetReason(); r != "" {
			reasons = append(reasons, r)
		}
	}
	return &candidate{first.rule, &ahpv1.Effect{
		RuleId: first.rule.info.ID,
		Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{
			Target:    ahpv1.ModifyTarget_MODIFY_TARGET_INPUT,
			Operation: ahpv1.ModifyOperation_MODIFY_OPERATION_REPLACE,
			// A private copy: the changed input may share values with the event.
			Value:  structpb.NewStructValue(proto.Clone(c.input).(*structpb.Struct)),
			Reason: strings.Join(reasons, "; "),
		}},
	}}
}

// VerdictOf summarises effects: deny wins over ask and escalate (the first of those two decides),
// which win over defer, over modify, over allow. Messages do not count; no effect is ALLOW.
func VerdictOf(effects []*ahpv1.Effect) ahpv1.Verdict {
	best := ahpv1.Verdict_VERDICT_ALLOW
	for _, e := range effects {
		if v := EffectVerdict(e); VerdictRank(v) > VerdictRank(best) {
			best = v
		}
	}
	return best
}

// VerdictRank orders verdicts as VerdictOf does: deny 4, ask and escalate 3, defer 2, modify 1,
// allow 0; any other value is -1.
func VerdictRank(v ahpv1.Verdict) int {
	switch v {
	case ahpv1.Verdict_VERDICT_DENY:
		return 4
	case ahpv1.Verdict_VERDICT_ASK, ahpv1.Verdict_VERDICT_ESCALATE:
		return 3
	case ahpv1.Verdict_VERDICT_DEFER:
		return 2
	case ahpv1.Verdict_VERDICT_MODIFY:
		return 1
	case ahpv1.Verdict_VERDICT_ALLOW:
		return 0
	}
	return -1
}

// EffectVerdict is the verdict effect e stands for; unspecified for messages and the Hooks draft
// effects, which decide nothing.
func EffectVerdict(e *ahpv1.Effect) ahpv1.Verdict {
	if k := names.EffectKindOf(e); int(k) < len(kindVerdicts) {
		return kindVerdicts[k]
	}
	return ahpv1.Verdict_VERDICT_UNSPECIFIED
}

// kindVerdicts maps the effect kinds that decide to their verdict (index: the EffectKind number).
var kindVerdicts = [...]ahpv1.Verdict{
	ahpv1.EffectKind_EFFECT_KIND_DENY:     ahpv1.Verdict_VERDICT_DENY,
	ahpv1.EffectKind_EFFECT_KIND_ASK:      ahpv1.Verdict_VERDICT_ASK,
	ahpv1.EffectKind_EFFECT_KIND_ESCALATE: ahpv1.Verdict_VERDICT_ESCALATE,
	ahpv1.EffectKind_EFFECT_KIND_DEFER:    ahpv1.Verdict_VERDICT_DEFER,
	ahpv1.EffectKind_EFFECT_KIND_MODIFY:   ahpv1.Verdict_VERDICT_MODIFY,
	ahpv1.EffectKind_EFFECT_KIND_ALLOW:    ahpv1.Verdict_VERDICT_ALLOW,
}

func isNull(v *structpb.Value) bool {
	_, ok := v.GetKind().(*structpb.Value_NullValue)
	return ok
}

// StopReason is the reason of an effect that stops the call as it is — deny, ask, escalate or
// defer — and ok is false for every other effect (allow, modify, message, …).
func StopReason(e *ahpv1.Effect) (reason string, ok bool) {
	switch x := e.GetEffect().(type) {
	case *ahpv1.Effect_Deny:
		return x.Deny.GetReason(), true
	case *ahpv1.Effect_Ask:
		return x.Ask.GetReason(), true
	case *ahpv1.Effect_Escalate:
		return x.Escalate.GetReason(), true
	case *ahpv1.Effect_Defer:
		return x.Defer.GetReason(), true
	}
	return "", false
}
