package hooks

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// defaultDenyReason replaces an empty reason when rendering, because v0.1 requires a
// non-empty one and an invalid deny would be an operational failure (and, fail-open, no denial).
const defaultDenyReason = "Denied by policy."

// DecodeInterceptResult converts a decoded hooks/intercept result object into its proto form.
// path is the result's JSON path ("result"). v0.1 allows exactly two shapes: effects [] or exactly
// one deny with a non-empty reason, an optional reverse-DNS code and optional extensions. A
// protocolVersion other than "0.1" is an error matching ErrUnsupportedProtocolVersion. Unknown
// members of the result and of the deny effect are kept in their unknown_fields.
func DecodeInterceptResult(path string, v any) (*ahpv1.HooksInterceptResult, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	r := &ahpv1.HooksInterceptResult{}
	if r.ProtocolVersion, err = checkVersion(o); err != nil {
		return nil, err
	}
	list, err := o.requiredArray("effects", "must be an array", "")
	if err != nil {
		return nil, err
	}
	if len(list) > 1 {
		return nil, invalid(o.at("effects"), "v0.1 allows at most one effect, a single deny")
	}
	for i, e := range list {
		eff, err := decodeEffect(jsonwire.IndexPath(o.at("effects"), i), e)
		if err != nil {
			return nil, err
		}
		r.Effects = append(r.Effects, eff)
	}
	if r.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if r.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeEffect reads one deny effect (deny-effect.schema.json).
func decodeEffect(path string, v any) (*ahpv1.HooksEffect, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	eff := &ahpv1.HooksEffect{}
	if eff.Type, err = o.requiredString("type", false); err != nil {
		return nil, err
	}
	if eff.Type != effectDeny {
		return nil, invalid(o.at("type"), "unsupported effect type; v0.1 defines only deny")
	}
	if eff.Reason, err = o.requiredString("reason", true); err != nil {
		return nil, err
	}
	if o.has("code") {
		if eff.Code, err = o.requiredString("code", false); err != nil {
			return nil, err
		}
		if !isReverseDNS(eff.Code) {
			return nil, invalid(o.at("code"), "must be a reverse-DNS name (e.g. com.example.policy.rule)")
		}
	}
	if eff.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if eff.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return eff, nil
}

func (e encoder) result(r *ahpv1.HooksInterceptResult) map[string]any {
	out := e.base(r.GetUnknownFields())
	out["protocolVersion"] = r.GetProtocolVersion()
	effects := make([]any, 0, len(r.GetEffects()))
	for _, eff := range r.GetEffects() {
		m := e.base(eff.GetUnknownFields())
		m["type"] = eff.GetType()
		putString(m, "reason", eff.GetReason())
		putString(m, "code", eff.GetCode())
		if eff.GetExtensions() != nil {
			m["extensions"] = e.object(eff.GetExtensions())
		}
		effects = append(effects, m)
	}
	out["effects"] = effects
	if r.GetExtensions() != nil {
		out["extensions"] = e.object(r.GetExtensions())
	}
	return out
}

// RenderResult renders a canonical decision as a v0.1 hooks/intercept result that echoes
// protocolVersion. v0.1 can express only deny, so:
//
//   - the first deny among d.effects becomes the one deny effect; later denies are dropped;
//   - without a deny the result has effects [] (allow, ask, modify and the rest have no v0.1 form;
//     turning a security-relevant effect into a deny is the policy's fallback, done before this);
//   - the deny is made valid rather than sent invalid: an empty reason becomes a generic one, a code
//     that is not reverse-DNS is dropped, and so are extension keys that are not reverse-DNS;
//   - decision_id, matched_rule_ids, the synthetic flag and the policy that decided go under result
//     extensions[Namespace] as {"decisionId", "ruleIds", "synthetic": true, "policyDigest",
//     "policyRevision"} (resultMeta), each only when set; the deny's own rule id goes
//     under its extensions[Namespace] as {"ruleId"} unless that key is already taken.
//
// A nil decision renders as effects [].
func RenderResult(d *ahpv1.Decision, protocolVersion string) *ahpv1.HooksInterceptResult {
	r := &ahpv1.HooksInterceptResult{ProtocolVersion: protocolVersion}
	for _, e := range d.GetEffects() {
		if deny := e.GetDeny(); deny != nil {
			r.Effects = []*ahpv1.HooksEffect{renderDeny(deny, e.GetRuleId())}
			break
		}
	}
	meta := resultMeta(d)
	if len(meta) > 0 {
		r.Extensions = &structpb.Struct{Fields: map[string]*structpb.Value{
			names.Namespace: structpb.NewStructValue(&structpb.Struct{Fields: meta}),
		}}
	}
	return r
}

func renderDeny(deny *ahpv1.DenyEffect, ruleID string) *ahpv1.HooksEffect {
	eff := &ahpv1.HooksEffect{Type: effectDeny, Reason: deny.GetReason()}
	if eff.Reason == "" {
		eff.Reason = defaultDenyReason
	}
	if isReverseDNS(deny.GetCode()) {
		eff.Code = deny.GetCode()
	}
	ext := map[string]*structpb.Value{}
	for k, v := range deny.GetExtensions().GetFields() {
		if isReverseDNS(k) {
			ext[k] = proto.CloneOf(v) // the result must not share messages with the decision
		}
	}
	if _, taken := ext[names.Namespace]; ruleID != "" && !taken {
		ext[names.Namespace] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"ruleId": structpb.NewStringValue(ruleID),
		}})
	}
	if len(ext) > 0 || deny.GetExtensions() != nil {
		eff.Extensions = &structpb.Struct{Fields: ext}
	}
	return eff
}
