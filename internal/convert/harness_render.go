package convert

// Rendering a canonical decision for a Harness caller (DESIGN.md, "One canonical decision,
// rendered per caller").

import (
	"errors"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Metadata keys under which rendered Harness decisions carry what the generic Decision has no
// field for. They live in the project namespace so they cannot clash with a harness's own keys.
// Only allow, block and modify have metadata on the wire; defer and escalate drop it.
const (
	// HarnessMetadataDecisionID holds the canonical decision_id (a string).
	HarnessMetadataDecisionID = Namespace + "/decision_id"
	// HarnessMetadataRuleIDs holds the matched rule ids, in evaluation order (a list of strings).
	HarnessMetadataRuleIDs = Namespace + "/rule_ids"
	// HarnessMetadataSynthetic is true when the system, not a policy rule, made the decision
	// (fail-closed denials, fallbacks); absent otherwise.
	HarnessMetadataSynthetic = Namespace + "/synthetic"
	// HarnessMetadataMessages holds the texts of message effects (a list of strings).
	HarnessMetadataMessages = Namespace + "/messages"
)

// harnessOutcomeKind is the one answer a generic Decision can give, by precedence.
type harnessOutcomeKind int

const (
	harnessAllow harnessOutcomeKind = iota
	harnessModify
	harnessDefer
	harnessEscalate
	harnessDeny
)

// harnessOutcome is a canonical decision reduced to what a Harness answer can express.
type harnessOutcome struct {
	kind     harnessOutcomeKind
	reason   string
	target   string // escalation target
	retry    uint64 // defer's retry_after_ms
	mods     []*ahpv1.ModifyEffect
	metadata *structpb.Struct
}

// harnessOutcomeOf picks the effect that wins (deny > ask/escalate > defer > modify > allow; the
// first of each kind), falling back to the verdict when no effect decides. A nil decision is a
// synthetic denial: failing closed is the only safe reading of "no answer".
func harnessOutcomeOf(d *ahpv1.Decision) harnessOutcome {
	if d == nil {
		return harnessOutcome{kind: harnessDeny, reason: "no decision", metadata: harnessMetadata(nil, nil, true)}
	}
	var (
		best     = harnessOutcome{kind: harnessAllow}
		messages []string
		found    = map[harnessOutcomeKind]bool{}
	)
	pick := func(o harnessOutcome) {
		if !found[o.kind] && o.kind > best.kind {
			best = o
		}
		found[o.kind] = true
	}
	for _, e := range d.GetEffects() {
		switch x := e.GetEffect().(type) {
		case *ahpv1.Effect_Deny:
			pick(harnessOutcome{kind: harnessDeny, reason: harnessOr(x.Deny.GetReason(), "denied by policy")})
		case *ahpv1.Effect_Ask:
			pick(harnessOutcome{kind: harnessEscalate, reason: harnessOr(x.Ask.GetReason(), "approval required")})
		case *ahpv1.Effect_Escalate:
			pick(harnessOutcome{kind: harnessEscalate, reason: harnessOr(x.Escalate.GetReason(), "escalated"), target: x.Escalate.GetTarget()})
		case *ahpv1.Effect_Defer:
			pick(harnessOutcome{kind: harnessDefer, reason: x.Defer.GetReason(), retry: x.Defer.GetRetryAfterMs()})
		case *ahpv1.Effect_Modify:
			best.mods = append(best.mods, x.Modify)
			if best.kind < harnessModify {
				best.kind = harnessModify
			}
		case *ahpv1.Effect_Message:
			messages = append(messages, x.Message.GetText())
		}
	}
	if best.kind != harnessModify {
		best.mods = nil
	}
	if len(d.GetEffects()) == 0 || best.kind == harnessAllow {
		switch d.GetVerdict() {
		case ahpv1.Verdict_VERDICT_DENY:
			best = harnessOutcome{kind: harnessDeny, reason: "denied by policy"}
		case ahpv1.Verdict_VERDICT_ASK, ahpv1.Verdict_VERDICT_ESCALATE:
			best = harnessOutcome{kind: harnessEscalate, reason: "approval required"}
		case ahpv1.Verdict_VERDICT_DEFER:
			best = harnessOutcome{kind: harnessDefer}
		}
	}
	best.metadata = harnessMetadata(d, messages, d.GetSynthetic())
	return best
}

// harnessMetadata builds the namespaced metadata of a rendered decision; nil when there is none.
func harnessMetadata(d *ahpv1.Decision, messages []string, synthetic bool) *structpb.Struct {
	m := map[string]any{}
	if id := d.GetDecisionId(); id != "" {
		m[HarnessMetadataDecisionID] = id
	}
	if ids := d.GetMatchedRuleIds(); len(ids) > 0 {
		m[HarnessMetadataRuleIDs] = harnessStringsJSON(ids)
	}
	if synthetic {
		m[HarnessMetadataSynthetic] = true
	}
	if len(messages) > 0 {
		m[HarnessMetadataMessages] = harnessStringsJSON(messages)
	}
	if len(m) == 0 {
		return nil
	}
	return harnessToStruct(m)
}

func harnessOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// RenderHarnessDecision renders a canonical decision as the generic Harness Decision for ev (the
// event it answers):
//   - no deciding effect, or allow -> allow;
//   - deny -> block{reason};
//   - ask or escalate -> escalate{reason, escalation_target};
//   - defer -> defer{retry_after_ms, reason};
//   - modify -> modify{modified_payload} in the caller's payload shape: for a tool event the
//     payload it sent ({tool_name, arguments} plus its other fields) with arguments replaced
//     (operation replace) or merge-patched (operation merge) by each input modify in order; for
//     other events, or other modify targets, the whole payload replaced or merge-patched;
//   - message effects -> metadata (HarnessMetadataMessages).
//
// With several effects the strongest wins: deny > ask/escalate > defer > modify > allow. With no
// deciding effect the verdict decides (deny, ask/escalate, defer). decision_id, matched rule ids
// and the synthetic flag travel in metadata under the HarnessMetadata* keys. A nil decision
// renders as a synthetic block. Effects the generic Decision cannot express (return, flow,
// inject) are ignored: the server falls back for them before a decision reaches the renderer.
func RenderHarnessDecision(d *ahpv1.Decision, ev *ahpv1.Event) *ahpv1.HarnessDecision {
	o := harnessOutcomeOf(d)
	switch o.kind {
	case harnessDeny:
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Block_{Block: &ahpv1.HarnessDecision_Block{Reason: o.reason, Metadata: o.metadata}}}
	case harnessEscalate:
		x := &ahpv1.HarnessDecision_Escalate{Reason: o.reason}
		if o.target != "" {
			x.EscalationTarget = &o.target
		}
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Escalate_{Escalate: x}}
	case harnessDefer:
		x := &ahpv1.HarnessDecision_Defer{RetryAfterMs: o.retry}
		if o.reason != "" {
			x.Reason = &o.reason
		}
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Defer_{Defer: x}}
	case harnessModify:
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Modify_{Modify: &ahpv1.HarnessDecision_Modify{
			ModifiedPayload: harnessModifiedPayload(ev, o.mods),
			Metadata:        o.metadata,
		}}}
	}
	return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Allow_{Allow: &ahpv1.HarnessDecision_Allow{Metadata: o.metadata}}}
}

// harnessModifiedPayload applies modify effects to the payload ev was sent with.
func harnessModifiedPayload(ev *ahpv1.Event, mods []*ahpv1.ModifyEffect) *structpb.Value {
	var payload any
	if name, err := harnessWireName(ev); err == nil {
		payload, _ = harnessPayloadJSON(ev, name)
	} else {
		payload = fromValue(ev.GetPayload())
	}
	obj, isObj := payload.(map[string]any)
	tool := ev.GetTool() != nil && isObj
	for _, m := range mods {
		input := m.GetTarget() == ahpv1.ModifyTarget_MODIFY_TARGET_UNSPECIFIED || m.GetTarget() == ahpv1.ModifyTarget_MODIFY_TARGET_INPUT
		if tool && input {
			obj["arguments"] = harnessApplyModify(obj["arguments"], m)
			continue
		}
		payload = harnessApplyModify(payload, m)
		obj, isObj = payload.(map[string]any)
		tool = tool && isObj
	}
	return harnessToValue(payload)
}

// harnessApplyModify replaces orig with the effect's value, or merge-patches it (RFC 7386).
func harnessApplyModify(orig any, m *ahpv1.ModifyEffect) any {
	value := fromValue(m.GetValue())
	if m.GetOperation() == ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE {
		return harnessMergePatch(orig, value)
	}
	return value
}

// harnessMergePatch applies an RFC 7386 JSON merge patch.
func harnessMergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	out := map[string]any{}
	if ok {
		for k, v := range t {
			out[k] = v
		}
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = harnessMergePatch(out[k], v)
	}
	return out
}

// harnessTypedUnsupported is the reference's default handler message for a typed event nobody
// answered.
var harnessTypedUnsupported = map[string]string{
	"context_perception": "Context perception not supported",
	"memory_recall":      "Memory recall not supported",
	"planning":           "Planning not supported",
	"reasoning":          "Reasoning not supported",
	"rate_limit":         "Rate limit decisions not supported",
	"confirmation":       "Confirmation not supported",
	"intent_detection":   "Intent detection not supported",
}

// ErrHarnessNoTypedAnswer is matched (errors.Is) by the RenderHarnessTyped error for a typed event
// that the decision neither answers nor refuses. Its message is the reference's default handler
// text, which the bridge sends as -32603 "Handler error: " + message.
var ErrHarnessNoTypedAnswer = errors.New("no typed answer")

// RenderHarnessTyped renders a canonical decision as the typed decision JSON that answers a typed
// event of type eventType. The decision's typed answer (d.typed) is written as is. Without one,
// the effects decide, failing closed:
//   - deny, ask or escalate -> the type's refusal: block{reason} (with metadata where the variant
//     has it), idle defer{reason}, rate_limit skip{reason}, confirmation reject{reason} (escalate
//     for ask/escalate);
//   - defer -> idle defer{reason}, rate_limit retry{retry_after_ms}, other types block{reason};
//   - otherwise idle is allowed, as by the reference's default handler, and the other types fail
//     with ErrHarnessNoTypedAnswer and the reference's default handler text, e.g. "Capability not
//     supported: Planning not supported".
func RenderHarnessTyped(d *ahpv1.Decision, eventType string) ([]byte, error) {
	if !HarnessUsesTypedDecision(eventType) {
		return nil, fmt.Errorf("convert: harness event type %q has no typed decision", eventType)
	}
	if name, m := harnessTyped(d); m != nil {
		if name != eventType {
			return nil, fmt.Errorf("convert: typed decision %s cannot answer a %s event", name, eventType)
		}
		return EncodeHarnessTypedDecision(m)
	}
	o := harnessOutcomeOf(d)
	var out map[string]any
	switch {
	case o.kind == harnessDefer && eventType == "rate_limit":
		out = map[string]any{"decision": "retry", "retry_after_ms": harnessU64JSON(o.retry)}
	case o.kind == harnessEscalate && eventType == "confirmation":
		out = map[string]any{"decision": "escalate"}
	case o.kind >= harnessDefer:
		out = harnessTypedRefusal(eventType, o)
	case eventType == "idle":
		out = map[string]any{"decision": "allow"}
	default:
		return nil, &FieldError{Message: "Capability not supported: " + harnessTypedUnsupported[eventType], Err: ErrHarnessNoTypedAnswer}
	}
	return marshalJSON(out)
}

// harnessTypedRefusal is the variant of each typed decision that refuses, with a reason.
func harnessTypedRefusal(eventType string, o harnessOutcome) map[string]any {
	reason := harnessOr(o.reason, "deferred")
	switch eventType {
	case "idle":
		out := map[string]any{"decision": "defer"}
		if o.reason != "" {
			out["reason"] = o.reason
		}
		return out
	case "rate_limit":
		return map[string]any{"decision": "skip", "reason": reason}
	case "confirmation":
		return map[string]any{"decision": "reject", "reason": reason}
	case "intent_detection":
		return map[string]any{"decision": "block", "reason": reason}
	}
	out := map[string]any{"decision": "block", "reason": reason}
	harnessPutMap(out, "metadata", o.metadata)
	return out
}
