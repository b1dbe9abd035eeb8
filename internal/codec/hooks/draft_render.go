package hooks

import (
	"slices"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// FallbackCode is the deny code of denials the renderer sends in place of an effect the caller did
// not advertise (the policy engine's dev.ahpgateway.policy.fallback, for the same reason).
const FallbackCode = "dev.ahpgateway.policy.fallback"

// RenderDraftResult renders a canonical decision for a "draft" caller whose request advertised
// offer. Every effect of the decision is expressed as itself when the offer allows it exactly
// (effect name, modify target and operation, flow operation, inject delivery time) and its value
// has the shape the target takes at that event (content at user.elicitation.result: the answer
// object of an accepted form elicitation; at user.message.outbound: assistant messages);
// otherwise it falls back, and the fallback is returned:
//
//   - deny without deny advertised becomes flow stop when stop is, else it is dropped;
//   - ask, escalate, defer, return, modify and flow stop that cannot be expressed become a
//     labelled deny (code FallbackCode), or flow stop, or are dropped when neither is advertised;
//   - allow, message, inject and flow continue that cannot be expressed are dropped (they never
//     refuse anything); continue is also dropped when no continuation remains;
//   - at most one deny is sent, and a deny removes allow and ask (deny wins);
//   - decision_id, rule ids, the synthetic flag, the policy that decided and the fallbacks go
//     under extensions[dev.ahpgateway] as {"decisionId", "ruleIds", "synthetic", "policyDigest",
//     "policyRevision", "fallbacks"}.
//
// The result always decodes with DecodeDraftResult (FuzzRenderDraftResult holds it to that).
func RenderDraftResult(d *ahpv1.Decision, offer *Offer) (*ahpv1.HooksInterceptResult, []*ahpv1.Fallback) {
	r := &renderer{offer: offer}
	for _, e := range d.GetEffects() {
		r.add(e)
	}
	out := &ahpv1.HooksInterceptResult{ProtocolVersion: string(Draft)}
	if r.denied {
		for _, e := range r.effects {
			if e.GetType() != "allow" && e.GetType() != "ask" {
				out.Effects = append(out.Effects, e)
			}
		}
	} else {
		out.Effects = r.effects
	}
	meta := resultMeta(d)
	if len(r.fallbacks) > 0 {
		list := &structpb.ListValue{}
		for _, f := range r.fallbacks {
			entry := map[string]*structpb.Value{"reason": structpb.NewStringValue(f.GetReason())}
			if f.GetRuleId() != "" {
				entry["ruleId"] = structpb.NewStringValue(f.GetRuleId())
			}
			list.Values = append(list.Values, structpb.NewStructValue(&structpb.Struct{Fields: entry}))
		}
		meta["fallbacks"] = structpb.NewListValue(list)
	}
	if len(meta) > 0 {
		out.Extensions = &structpb.Struct{Fields: map[string]*structpb.Value{
			names.Namespace: structpb.NewStructValue(&structpb.Struct{Fields: meta}),
		}}
	}
	return out, r.fallbacks
}

// resultMeta is the decision's identity under the project namespace, the keys RenderResult and
// RenderDraftResult share, each only when set: "decisionId", "ruleIds", "synthetic" (true),
// "policyDigest" (the digest of the policy source that decided, "sha256:<hex>") and
// "policyRevision" (the cluster policy bucket's revision, a JSON number, only when > 0; revisions
// are KV sequence numbers, far below 2^53, so the number is exact).
func resultMeta(d *ahpv1.Decision) map[string]*structpb.Value {
	meta := map[string]*structpb.Value{}
	if id := d.GetDecisionId(); id != "" {
		meta["decisionId"] = structpb.NewStringValue(id)
	}
	if ids := d.GetMatchedRuleIds(); len(ids) > 0 {
		list := &structpb.ListValue{Values: make([]*structpb.Value, len(ids))}
		for i, id := range ids {
			list.Values[i] = structpb.NewStringValue(id)
		}
		meta["ruleIds"] = structpb.NewListValue(list)
	}
	if d.GetSynthetic() {
		meta["synthetic"] = structpb.NewBoolValue(true)
	}
	if dg := d.GetPolicyDigest(); dg != "" {
		meta["policyDigest"] = structpb.NewStringValue(dg)
	}
	if rev := d.GetPolicyRevision(); rev > 0 {
		meta["policyRevision"] = structpb.NewNumberValue(float64(rev))
	}
	return meta
}

type renderer struct {
	offer     *Offer
	effects   []*ahpv1.HooksEffect
	fallbacks []*ahpv1.Fallback
	denied    bool
	stopped   bool
}

func (r *renderer) add(e *ahpv1.Effect) {
	switch x := e.GetEffect().(type) {
	case *ahpv1.Effect_Deny:
		if r.offer.Has("deny") {
			r.deny(renderDeny(x.Deny, e.GetRuleId()))
			return
		}
		r.refuse(e, x.Deny.GetReason(), "deny is not advertised")
	case *ahpv1.Effect_Allow:
		if r.offer.Has("allow") {
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "allow"})
		}
	case *ahpv1.Effect_Ask:
		if r.offer.Has("ask") {
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "ask"})
			return
		}
		r.refuse(e, "approval required: "+orRule(x.Ask.GetReason(), e), "ask is not advertised")
	case *ahpv1.Effect_Escalate:
		if r.offer.Has("ask") {
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "ask"})
			return
		}
		r.refuse(e, "escalation required: "+orRule(x.Escalate.GetReason(), e), "escalate has no draft form and ask is not advertised")
	case *ahpv1.Effect_Defer:
		r.refuse(e, "retry later: "+orRule(x.Defer.GetReason(), e), "defer has no draft form")
	case *ahpv1.Effect_Message:
		if r.offer.Has("message") && x.Message.GetText() != "" {
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "message", UnknownFields: fields("text", structpb.NewStringValue(x.Message.GetText()))})
			return
		}
		r.record(e, nil, "message is not advertised or empty; dropped")
	case *ahpv1.Effect_Modify:
		r.modify(e, x.Modify)
	case *ahpv1.Effect_Return:
		v := x.Return.GetValue()
		if r.offer.Has("return") && v != nil && returnValueValid(v) {
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "return", UnknownFields: fields("value", proto.CloneOf(v))})
			return
		}
		r.refuse(e, "a supplied result was required: "+orRule("", e), "return is not advertised or its value is not valid content")
	case *ahpv1.Effect_Flow:
		r.flow(e, x.Flow)
	case *ahpv1.Effect_Inject:
		r.inject(e, x.Inject)
	}
}

func (r *renderer) deny(eff *ahpv1.HooksEffect) {
	if r.denied {
		return // deny is terminal; one is enough
	}
	r.denied = true
	r.effects = append(r.effects, eff)
}

// refuse expresses an effect that must not silently vanish: a labelled deny, or flow stop, or, when
// the caller can express neither, nothing, recorded.
func (r *renderer) refuse(e *ahpv1.Effect, reason, why string) {
	if reason == "" {
		reason = defaultDenyReason
	}
	switch {
	case e.GetDeny() == nil && r.offer.Has("deny"):
		r.deny(&ahpv1.HooksEffect{Type: "deny", Reason: reason, Code: FallbackCode})
		r.record(e, r.effects[len(r.effects)-1], why+"; sent a labelled deny")
	case r.canFlow("stop"):
		if !r.stopped {
			r.stopped = true
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "flow", Reason: reason, UnknownFields: fields("operation", structpb.NewStringValue("stop"))})
		}
		r.record(e, nil, why+"; sent flow stop")
	default:
		r.record(e, nil, why+", nor is a deny or flow stop; dropped")
	}
}

func (r *renderer) record(wanted *ahpv1.Effect, _ *ahpv1.HooksEffect, reason string) {
	r.fallbacks = append(r.fallbacks, &ahpv1.Fallback{RuleId: wanted.GetRuleId(), Wanted: wanted, Reason: reason})
}

func (r *renderer) canFlow(op string) bool {
	return r.offer.Has("flow") && slices.Contains(r.offer.FlowOps, op)
}

// modifyTargetNames maps canonical targets to their wire names.
var modifyTargetNames = map[ahpv1.ModifyTarget]string{
	ahpv1.ModifyTarget_MODIFY_TARGET_INPUT: "input", ahpv1.ModifyTarget_MODIFY_TARGET_OUTPUT: "output",
	ahpv1.ModifyTarget_MODIFY_TARGET_PROMPT: "prompt", ahpv1.ModifyTarget_MODIFY_TARGET_REQUEST: "request",
	ahpv1.ModifyTarget_MODIFY_TARGET_RESPONSE: "response", ahpv1.ModifyTarget_MODIFY_TARGET_CONTENT: "content",
	ahpv1.ModifyTarget_MODIFY_TARGET_INSTRUCTIONS: "instructions", ahpv1.ModifyTarget_MODIFY_TARGET_SUMMARY: "summary",
	ahpv1.ModifyTarget_MODIFY_TARGET_WORKSPACE: "workspace",
}

func (r *renderer) modify(e *ahpv1.Effect, m *ahpv1.ModifyEffect) {
	target := modifyTargetNames[m.GetTarget()]
	if target == "" { // unspecified: the event's own target, when it has exactly one
		if t := allowedEffects[r.offer.Event].targets; len(t) == 1 {
			target = t[0]
		}
	}
	op := "replace"
	if m.GetOperation() == ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE {
		op = "merge"
	}
	ops, ok := r.offer.Modify[target]
	switch {
	case !r.offer.Has("modify") || !ok:
		r.refuse(e, "input must be changed: "+orRule(m.GetReason(), e), "modify of this target is not advertised")
	case op == "replace" && !ops.Replace, op == "merge" && !ops.Merge:
		r.refuse(e, "input must be changed: "+orRule(m.GetReason(), e), "this modify operation is not advertised")
	case m.GetValue() == nil || checkModifyValue("value", target, op, jsonwire.FromValue(m.GetValue())) != nil ||
		checkModifyAt("value", r.offer.Event, r.offer.ElicitationMode, r.offer.ElicitationAction, target, jsonwire.FromValue(m.GetValue())) != nil:
		r.refuse(e, "input must be changed: "+orRule(m.GetReason(), e), "the modify value does not have the shape its target takes")
	default:
		r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "modify", UnknownFields: &structpb.Struct{Fields: map[string]*structpb.Value{
			"target": structpb.NewStringValue(target), "operation": structpb.NewStringValue(op), "value": proto.CloneOf(m.GetValue()),
		}}})
	}
}

func (r *renderer) flow(e *ahpv1.Effect, f *ahpv1.FlowEffect) {
	switch f.GetOperation() {
	case "stop":
		if r.canFlow("stop") {
			if !r.stopped {
				r.stopped = true
				r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "flow", Reason: orDefault(f.GetReason()),
					UnknownFields: fields("operation", structpb.NewStringValue("stop"))})
			}
			return
		}
		r.refuse(e, orDefault(f.GetReason()), "flow stop is not advertised")
	case "continue":
		if r.canFlow("continue") && r.offer.RemainingContinuations > 0 {
			u := fields("operation", structpb.NewStringValue("continue"))
			if f.GetInstruction() != "" {
				u.Fields["instruction"] = structpb.NewStringValue(f.GetInstruction())
			}
			r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "flow", UnknownFields: u})
			return
		}
		r.record(e, nil, "flow continue is not advertised or no continuation remains; dropped")
	default:
		r.record(e, nil, "unknown flow operation; dropped")
	}
}

func (r *renderer) inject(e *ahpv1.Effect, in *ahpv1.InjectEffect) {
	at := in.GetDeliverAt()
	if at == "" && len(r.offer.InjectDeliverAt) > 0 {
		at = r.offer.InjectDeliverAt[0]
	}
	value := in.GetValue()
	if !r.offer.Has("inject") || !slices.Contains(r.offer.InjectDeliverAt, at) || value == nil ||
		checkItems("value", jsonwire.FromValue(structpb.NewListValue(value)).([]any), itemRules{messagesOnly: true}) != nil {
		r.record(e, nil, "inject with this delivery time is not advertised or its value is not a message list; dropped")
		return
	}
	r.effects = append(r.effects, &ahpv1.HooksEffect{Type: "inject", UnknownFields: &structpb.Struct{Fields: map[string]*structpb.Value{
		"target": structpb.NewStringValue("context"), "operation": structpb.NewStringValue("append"),
		"deliverAt": structpb.NewStringValue(at), "value": structpb.NewListValue(proto.CloneOf(value)),
	}}})
}

// returnValueValid reports whether a supplied result is valid draft content where it is content.
func returnValueValid(v *structpb.Value) bool {
	if l := v.GetListValue(); l != nil {
		return checkItems("value", jsonwire.FromValue(v).([]any), itemRules{}) == nil
	}
	return true
}

func fields(key string, v *structpb.Value) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{key: v}}
}

func orDefault(s string) string {
	if s == "" {
		return defaultDenyReason
	}
	return s
}

func orRule(reason string, e *ahpv1.Effect) string {
	switch {
	case reason != "":
		return reason
	case e.GetRuleId() != "":
		return "rule " + e.GetRuleId()
	}
	return "policy"
}
