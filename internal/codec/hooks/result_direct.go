package hooks

import (
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
)

// maxExactRevision is the largest policy revision a JSON number holds exactly (2^53-1).
const maxExactRevision = 1<<53 - 1

// EncodeDecision writes the v0.1 hooks/intercept success response for d: exactly the bytes
// EncodeResult(id, RenderResult(d, protocolVersion)) gives (FuzzRenderResult holds it to that),
// written straight from the decision, without building the result message, its effect and the
// structpb tree of its extensions first. A deny that carries extensions of its own (whose keys
// RenderResult filters and merges) and a policy revision past 2^53 take that longer way.
func EncodeDecision(id ID, d *ahpv1.Decision, protocolVersion string) []byte {
	var (
		deny   *ahpv1.DenyEffect
		ruleID string
	)
	for _, e := range d.GetEffects() {
		if x := e.GetDeny(); x != nil {
			deny, ruleID = x, e.GetRuleId()
			break
		}
	}
	if deny.GetExtensions() != nil || d.GetPolicyRevision() > maxExactRevision {
		return EncodeResult(id, RenderResult(d, protocolVersion))
	}
	b := make([]byte, 0, 512)
	b = append(b, '{')
	if !id.IsAbsent() {
		b = append(b, `"id":`...)
		b = appendID(b, id)
		b = append(b, ',')
	}
	b = append(b, `"jsonrpc":"2.0","result":{"effects":[`...)
	if deny != nil {
		b = appendDeny(b, deny, ruleID)
	}
	b = append(b, ']')
	b = appendResultMeta(b, d)
	b = append(b, `,"protocolVersion":`...)
	b = jsonwire.AppendString(b, protocolVersion)
	return append(b, "}}"...)
}

// appendDeny writes renderDeny's effect for a deny without extensions of its own, its members in
// sorted order: code (when reverse-DNS), extensions (the rule id), reason (never empty), type.
func appendDeny(b []byte, deny *ahpv1.DenyEffect, ruleID string) []byte {
	b = append(b, '{')
	if code := deny.GetCode(); isReverseDNS(code) {
		b = append(b, `"code":`...)
		b = jsonwire.AppendString(b, code)
		b = append(b, ',')
	}
	if ruleID != "" {
		b = append(b, `"extensions":{"`+names.Namespace+`":{"ruleId":`...)
		b = jsonwire.AppendString(b, ruleID)
		b = append(b, "}},"...)
	}
	reason := deny.GetReason()
	if reason == "" {
		reason = defaultDenyReason
	}
	b = append(b, `"reason":`...)
	b = jsonwire.AppendString(b, reason)
	return append(b, `,"type":"deny"}`...)
}

// appendResultMeta writes resultMeta's members under ,"extensions":{"dev.ahpgateway":{…}} in
// sorted key order, or nothing when there are none.
func appendResultMeta(b []byte, d *ahpv1.Decision) []byte {
	start := len(b)
	b = append(b, `,"extensions":{"`+names.Namespace+`":{`...)
	open := len(b)
	sep := func(b []byte) []byte {
		if len(b) > open {
			b = append(b, ',')
		}
		return b
	}
	if id := d.GetDecisionId(); id != "" {
		b = append(sep(b), `"decisionId":`...)
		b = jsonwire.AppendString(b, id)
	}
	if dg := d.GetPolicyDigest(); dg != "" {
		b = append(sep(b), `"policyDigest":`...)
		b = jsonwire.AppendString(b, dg)
	}
	if rev := d.GetPolicyRevision(); rev > 0 {
		b = append(sep(b), `"policyRevision":`...)
		b = strconv.AppendUint(b, rev, 10)
	}
	if ids := d.GetMatchedRuleIds(); len(ids) > 0 {
		b = append(sep(b), `"ruleIds":[`...)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonwire.AppendString(b, id)
		}
		b = append(b, ']')
	}
	if d.GetSynthetic() {
		b = append(sep(b), `"synthetic":true`...)
	}
	if len(b) == open {
		return b[:start]
	}
	return append(b, "}}"...)
}
