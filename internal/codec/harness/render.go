package harness

// Rendering a canonical decision for a Harness caller (DESIGN.md, "One canonical decision,
// rendered per caller").

import (
	"errors"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/types/known/structpb"
)

// Metadata keys under which rendered Harness decisions carry what the generic Decision has no
// field for. They live in the project namespace so they cannot clash with a harness's own keys.
// Only allow, block and modify have metadata on the wire; defer and escalate drop it.
const (
	// MetadataDecisionID holds the canonical decision_id (a string).
	MetadataDecisionID = names.Namespace + "/decision_id"
	// MetadataRuleIDs holds the matched rule ids, in evaluation order (a list of strings).
	MetadataRuleIDs = names.Namespace + "/rule_ids"
	// MetadataSynthetic is true when the system, not a policy rule, made the decision
	// (fail-closed denials, fallbacks); absent otherwise.
	MetadataSynthetic = names.Namespace + "/synthetic"
	// MetadataPolicyDigest holds the digest ("sha256:<hex>") of the policy source that made the
	// decision (a string); absent when the decision has none (a synthetic denial).
	MetadataPolicyDigest = names.Namespace + "/policy_digest"
	// MetadataPolicyRevision holds the cluster policy bucket's revision of that policy (a number,
	// exact: revisions are far below 2^53); absent for a policy loaded from a file or built in.
	MetadataPolicyRevision = names.Namespace + "/policy_revision"
	// MetadataMessages holds the texts of message effects (a list of strings).
	MetadataMessages = names.Namespace + "/messages"
)

// outcomeKind is the one answer a generic Decision can give, by precedence.
type outcomeKind int

const (
	outcomeAllow outcomeKind = iota
	outcomeModify
	outcomeDefer
	outcomeEscalate
	outcomeDeny
)

// outcome is a canonical decision reduced to what a Harness answer can express.
type outcome struct {
	kind     outcomeKind
	reason   string
	target   string // escalation target
	retry    uint64 // defer's retry_after_ms
	mods     []*ahpv1.ModifyEffect
	metadata *structpb.Struct
}

// outcomeOf picks the effect that wins (deny > ask/escalate > defer > modify > allow; the
// first of each kind), falling back to the verdict when no effect decides. A nil decision is a
// synthetic denial: failing closed is the only safe reading of "no answer".
func outcomeOf(d *ahpv1.Decision) outcome {
	if d == nil {
		return outcome{kind: outcomeDeny, reason: "no decision", metadata: decisionMetadata(nil, nil, true)}
	}
	var (
		best     = outcome{kind: outcomeAllow}
		messages []string
		found    = map[outcomeKind]bool{}
	)
	pick := func(o outcome) {
		if !found[o.kind] && o.kind > best.kind {
			best = o
		}
		found[o.kind] = true
	}
	for _, e := range d.GetEffects() {
		switch x := e.GetEffect().(type) {
		case *ahpv1.Effect_Deny:
			pick(outcome{kind: outcomeDeny, reason: orDefault(x.Deny.GetReason(), "denied by policy")})
		case *ahpv1.Effect_Ask:
			pick(outcome{kind: outcomeEscalate, reason: orDefault(x.Ask.GetReason(), "approval required")})
		case *ahpv1.Effect_Escalate:
			pick(outcome{kind: outcomeEscalate, reason: orDefault(x.Escalate.GetReason(), "escalated"), target: x.Escalate.GetTarget()})
		case *ahpv1.Effect_Defer:
			pick(outcome{kind: outcomeDefer, reason: x.Defer.GetReason(), retry: x.Defer.GetRetryAfterMs()})
		case *ahpv1.Effect_Modify:
			best.mods = append(best.mods, x.Modify)
			if best.kind < outcomeModify {
				best.kind = outcomeModify
			}
		case *ahpv1.Effect_Message:
			messages = append(messages, x.Message.GetText())
		}
	}
	if best.kind != outcomeModify {
		best.mods = nil
	}
	if len(d.GetEffects()) == 0 || best.kind == outcomeAllow {
		switch d.GetVerdict() {
		case ahpv1.Verdict_VERDICT_DENY:
			best = outcome{kind: outcomeDeny, reason: "denied by policy"}
		case ahpv1.Verdict_VERDICT_ASK, ahpv1.Verdict_VERDICT_ESCALATE:
			best = outcome{kind: outcomeEscalate, reason: "approval required"}
		case ahpv1.Verdict_VERDICT_DEFER:
			best = outcome{kind: outcomeDefer}
		}
	}
	best.metadata = decisionMetadata(d, messages, d.GetSynthetic())
	return best
}

// decisionMetadata builds the namespaced metadata of a rendered decision; nil when there is none.
func decisionMetadata(d *ahpv1.Decision, messages []string, synthetic bool) *structpb.Struct {
	m := map[string]any{}
	if id := d.GetDecisionId(); id != "" {
		m[MetadataDecisionID] = id
	}
	if ids := d.GetMatchedRuleIds(); len(ids) > 0 {
		m[MetadataRuleIDs] = stringsJSON(ids)
	}
	if synthetic {
		m[MetadataSynthetic] = true
	}
	if dg := d.GetPolicyDigest(); dg != "" {
		m[MetadataPolicyDigest] = dg
	}
	if rev := d.GetPolicyRevision(); rev > 0 {
		m[MetadataPolicyRevision] = float64(rev)
	}
	if len(messages) > 0 {
		m[MetadataMessages] = stringsJSON(messages)
	}
	if len(m) == 0 {
		return nil
	}
	return mustStruct(m)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// RenderDecision renders a canonical decision as the generic Harness Decision for ev (the
// event it answers):
//   - no deciding effect, or allow -> allow;
//   - deny -> block{reason};
//   - ask or escalate -> escalate{reason, escalation_target};
//   - defer -> defer{retry_after_ms, reason};
//   - modify -> modify{modified_payload} in the caller's payload shape: for a tool event the
//     payload it sent ({tool_name, arguments} plus its other fields) with arguments replaced
//     (operation replace) or merge-patched (operation merge) by each input modify in order; for
//     other events, or other modify targets, the whole payload replaced or merge-patched;
//   - message effects -> metadata (MetadataMessages).
//
// With several effects the strongest wins: deny > ask/escalate > defer > modify > allow. With no
// deciding effect the verdict decides (deny, ask/escalate, defer). decision_id, matched rule ids
// and the synthetic flag travel in metadata under the HarnessMetadata* keys. A nil decision
// renders as a synthetic block. Effects the generic Decision cannot express (return, flow,
// inject) are ignored: the server falls back for them before a decision reaches the renderer.
func RenderDecision(d *ahpv1.Decision, ev *ahpv1.Event) *ahpv1.HarnessDecision {
	o := outcomeOf(d)
	switch o.kind {
	case outcomeDeny:
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Block_{Block: &ahpv1.HarnessDecision_Block{Reason: o.reason, Metadata: o.metadata}}}
	case outcomeEscalate:
		x := &ahpv1.HarnessDecision_Escalate{Reason: o.reason}
		if o.target != "" {
			x.EscalationTarget = &o.target
		}
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Escalate_{Escalate: x}}
	case outcomeDefer:
		x := &ahpv1.HarnessDecision_Defer{RetryAfterMs: o.retry}
		if o.reason != "" {
			x.Reason = &o.reason
		}
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Defer_{Defer: x}}
	case outcomeModify:
		return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Modify_{Modify: &ahpv1.HarnessDecision_Modify{
			ModifiedPayload: modifiedPayload(ev, o.mods),
			Metadata:        o.metadata,
		}}}
	}
	return &ahpv1.HarnessDecision{Decision: &ahpv1.HarnessDecision_Allow_{Allow: &ahpv1.HarnessDecision_Allow{Metadata: o.metadata}}}
}

// modifiedPayload applies modify effects to the payload ev was sent with.
func modifiedPayload(ev *ahpv1.Event, mods []*ahpv1.ModifyEffect) *structpb.Value {
	var payload any
	if name, err := wireName(ev); err == nil {
		payload, _ = payloadJSON(ev, name)
	} else {
		payload = jsonwire.FromValue(ev.GetPayload())
	}
	obj, isObj := payload.(map[string]any)
	tool := ev.GetTool() != nil && isObj
	for _, m := range mods {
		input := m.GetTarget() == ahpv1.ModifyTarget_MODIFY_TARGET_UNSPECIFIED || m.GetTarget() == ahpv1.ModifyTarget_MODIFY_TARGET_INPUT
		if tool && input {
			obj["arguments"] = applyModify(obj["arguments"], m)
			continue
		}
		payload = applyModify(payload, m)
		obj, isObj = payload.(map[string]any)
		tool = tool && isObj
	}
	return mustValue(payload)
}

// applyModify replaces orig with the effect's value, or merge-patches it (RFC 7386).
func applyModify(orig any, m *ahpv1.ModifyEffect) any {
	value := jsonwire.FromValue(m.GetValue())
	if m.GetOperation() == ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE {
		return mergePatch(orig, value)
	}
	return value
}

// mergePatch applies an RFC 7386 JSON merge patch.
func mergePatch(target, patch any) any {
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
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// typedUnsupported is the reference's default handler message for a typed event nobody
// answered.
var typedUnsupported = map[string]string{
	"context_perception": "Context perception not supported",
	"memory_recall":      "Memory recall not supported",
	"planning":           "Planning not supported",
	"reasoning":          "Reasoning not supported",
	"rate_limit":         "Rate limit decisions not supported",
	"confirmation":       "Confirmation not supported",
	"intent_detection":   "Intent detection not supported",
}

// ErrNoTypedAnswer is matched (errors.Is) by the RenderTyped error for a typed event
// that the decision neither answers nor refuses. Its message is the reference's default handler
// text, which the bridge sends as -32603 "Handler error: " + message.
var ErrNoTypedAnswer = errors.New("no typed answer")

// RenderTyped renders a canonical decision as the typed decision JSON that answers a typed
// event of type eventType. The decision's typed answer (d.typed) is written as is. Without one,
// the effects decide, failing closed:
//   - deny, ask or escalate -> the type's refusal: block{reason} (with metadata where the variant
//     has it), idle defer{reason}, rate_limit skip{reason}, confirmation reject{reason} (escalate
//     for ask/escalate);
//   - defer -> idle defer{reason}, rate_limit retry{retry_after_ms}, other types block{reason};
//   - otherwise idle is allowed, as by the reference's default handler, and the other types fail
//     with ErrNoTypedAnswer and the reference's default handler text, e.g. "Capability not
//     supported: Planning not supported".
func RenderTyped(d *ahpv1.Decision, eventType string) ([]byte, error) {
	if !UsesTypedDecision(eventType) {
		return nil, fmt.Errorf("convert: harness event type %q has no typed decision", eventType)
	}
	if name, m := whichOneof(d, "typed"); m != nil {
		if name != eventType {
			return nil, fmt.Errorf("convert: typed decision %s cannot answer a %s event", name, eventType)
		}
		return EncodeTypedDecision(m)
	}
	o := outcomeOf(d)
	var out map[string]any
	switch {
	case o.kind == outcomeDefer && eventType == "rate_limit":
		out = map[string]any{"decision": "retry", "retry_after_ms": u64JSON(o.retry)}
	case o.kind == outcomeEscalate && eventType == "confirmation":
		out = map[string]any{"decision": "escalate"}
	case o.kind >= outcomeDefer:
		out = typedRefusal(eventType, o)
	case eventType == "idle":
		out = map[string]any{"decision": "allow"}
	default:
		return nil, &jsonwire.FieldError{Message: "Capability not supported: " + typedUnsupported[eventType], Err: ErrNoTypedAnswer}
	}
	return jsonwire.Marshal(out)
}

// typedRefusal is the variant of each typed decision that refuses, with a reason.
func typedRefusal(eventType string, o outcome) map[string]any {
	reason := orDefault(o.reason, "deferred")
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
	putMap(out, "metadata", o.metadata)
	return out
}
