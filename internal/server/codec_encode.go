package server

import (
	"strconv"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// Writing a decision with protojson took about 14 allocations per Intercept (issue 18):
// protojson ranges over the fields through protoreflect, sorting them and boxing each value.
// appendInterceptResponse, appendInterceptStreamResponse and appendInterceptBatchResponse write
// the usual decisions (verdict, deny / allow / ask effects, matched rules, policy digest and
// revision, approval id, the flags and the latency) straight from the generated structs, into
// connect's pooled buffer, in protojson's form: lowerCamel names, enums by name, 64-bit
// integers as strings, unset fields left out. A decision with anything else (fallbacks, dry
// runs, a typed answer, other effects, deny extensions, an enum number without a name, a string
// that is not UTF-8) reports false and is protojson's, which also returns its errors.
// TestEncodeDecisionFieldsKnown fails when one of these messages gains a field this file does not
// know about; TestEncodeInterceptMatchesProtojson and FuzzEncodeInterceptMatchesProtojson hold
// the output to protojson's.

// appendInterceptResponse appends r as protojson would, or reports false.
func appendInterceptResponse(b []byte, r *ahpv1.InterceptResponse) ([]byte, bool) {
	b = append(b, '{')
	ok := true
	if d := r.GetDecision(); d != nil {
		b = append(b, `"decision":`...)
		if b, ok = appendDecision(b, d); !ok {
			return b, false
		}
	}
	return append(b, '}'), ok
}

// appendInterceptStreamResponse appends r as protojson would, or reports false.
func appendInterceptStreamResponse(b []byte, r *ahpv1.InterceptStreamResponse) ([]byte, bool) {
	ok := true
	w := objectWriter{b: b, ok: true}
	w.open()
	if r.EventId != "" {
		w.key("eventId")
		w.string(r.EventId)
	}
	if d := r.Decision; d != nil {
		w.key("decision")
		if w.b, ok = appendDecision(w.b, d); !ok {
			return w.b, false
		}
	}
	if e := r.Error; e != nil {
		w.key("error")
		e2 := objectWriter{b: w.b, ok: true}
		e2.open()
		if e.Code != "" {
			e2.key("code")
			e2.string(e.Code)
		}
		if e.Message != "" {
			e2.key("message")
			e2.string(e.Message)
		}
		e2.close()
		w.b, w.ok = e2.b, w.ok && e2.ok
	}
	if r.RequestId != "" {
		w.key("requestId")
		w.string(r.RequestId)
	}
	w.close()
	return w.b, w.ok
}

// appendInterceptBatchResponse appends r as protojson would, or reports false.
func appendInterceptBatchResponse(b []byte, r *ahpv1.InterceptBatchResponse) ([]byte, bool) {
	b = append(b, '{')
	if len(r.Decisions) > 0 {
		b = append(b, `"decisions":[`...)
		for i, d := range r.Decisions {
			if d == nil {
				return b, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendDecision(b, d); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

// appendDecision appends d, or reports false when it holds more than the fast path writes.
func appendDecision(b []byte, d *ahpv1.Decision) ([]byte, bool) {
	if len(d.Fallbacks) > 0 || len(d.DryRuns) > 0 || d.Typed != nil {
		return b, false
	}
	w := objectWriter{b: b, ok: true}
	w.open()
	if d.DecisionId != "" {
		w.key("decisionId")
		w.string(d.DecisionId)
	}
	if d.Verdict != 0 {
		w.key("verdict")
		w.enum(ahpv1.Verdict_name, int32(d.Verdict))
	}
	if len(d.Effects) > 0 {
		w.key("effects")
		w.b = append(w.b, '[')
		for i, e := range d.Effects {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.effect(e)
		}
		w.b = append(w.b, ']')
	}
	if len(d.MatchedRuleIds) > 0 {
		w.key("matchedRuleIds")
		w.b = append(w.b, '[')
		for i, id := range d.MatchedRuleIds {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b, w.ok = appendProtojsonString(w.b, id, w.ok)
		}
		w.b = append(w.b, ']')
	}
	if d.Synthetic {
		w.key("synthetic")
		w.b = append(w.b, "true"...)
	}
	if d.Replayed {
		w.key("replayed")
		w.b = append(w.b, "true"...)
	}
	if d.LatencyUs != 0 {
		w.key("latencyUs")
		w.uint64(d.LatencyUs)
	}
	if d.PolicyDigest != "" {
		w.key("policyDigest")
		w.string(d.PolicyDigest)
	}
	if d.PolicyRevision != 0 {
		w.key("policyRevision")
		w.uint64(d.PolicyRevision)
	}
	if d.ApprovalId != "" {
		w.key("approvalId")
		w.string(d.ApprovalId)
	}
	w.close()
	return w.b, w.ok
}

// objectWriter writes one JSON object's members; ok turns false when something has to be left
// to protojson.
type objectWriter struct {
	b     []byte
	ok    bool
	comma bool
}

func (w *objectWriter) open() {
	w.b = append(w.b, '{')
	w.comma = false
}

func (w *objectWriter) close() { w.b = append(w.b, '}') }

// key writes a member's name (a lowerCamel field name, never escaped).
func (w *objectWriter) key(name string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, `":`...)
}

func (w *objectWriter) string(s string) { w.b, w.ok = appendProtojsonString(w.b, s, w.ok) }

func (w *objectWriter) uint64(v uint64) {
	w.b = append(w.b, '"')
	w.b = strconv.AppendUint(w.b, v, 10)
	w.b = append(w.b, '"')
}

// enum writes an enum value by its name; a number without one is protojson's.
func (w *objectWriter) enum(names map[int32]string, v int32) {
	name, known := names[v]
	if !known {
		w.ok = false
		return
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"')
}

// effect writes one effect: deny, allow or ask (deny without extensions), and its rule id.
func (w *objectWriter) effect(e *ahpv1.Effect) {
	if e == nil {
		w.ok = false
		return
	}
	o := objectWriter{b: w.b, ok: w.ok}
	o.open()
	var reason, code string
	switch x := e.Effect.(type) {
	case nil:
	case *ahpv1.Effect_Deny:
		if x.Deny == nil || x.Deny.Extensions != nil {
			w.ok = false
			return
		}
		o.key("deny")
		reason, code = x.Deny.Reason, x.Deny.Code
	case *ahpv1.Effect_Allow:
		if x.Allow == nil {
			w.ok = false
			return
		}
		o.key("allow")
		reason = x.Allow.Reason
	case *ahpv1.Effect_Ask:
		if x.Ask == nil {
			w.ok = false
			return
		}
		o.key("ask")
		reason = x.Ask.Reason
	default:
		w.ok = false
		return
	}
	if e.Effect != nil {
		inner := objectWriter{b: o.b, ok: o.ok}
		inner.open()
		if reason != "" {
			inner.key("reason")
			inner.string(reason)
		}
		if code != "" {
			inner.key("code")
			inner.string(code)
		}
		inner.close()
		o.b, o.ok = inner.b, inner.ok
	}
	if e.RuleId != "" {
		o.key("ruleId")
		o.string(e.RuleId)
	}
	o.close()
	w.b, w.ok = o.b, o.ok
}

// appendProtojsonString appends s quoted as protojson quotes it: only '"', '\\' and the control
// characters escaped (\b \f \n \r \t, others as \u00xx), everything else as it is. A string
// that is not valid UTF-8 turns ok false (protojson refuses to write it).
func appendProtojsonString(b []byte, s string, ok bool) ([]byte, bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				ok = false
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		b = jsonwire.AppendASCIIEscape(append(b, s[start:i]...), c)
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), ok
}

// appendFast appends m when it is one of the answers the fast path writes and holds nothing
// more than it knows, reporting whether it did.
func appendFast(dst []byte, m any) ([]byte, bool) {
	switch r := m.(type) {
	case *ahpv1.InterceptResponse:
		return appendInterceptResponse(dst, r)
	case *ahpv1.InterceptStreamResponse:
		return appendInterceptStreamResponse(dst, r)
	case *ahpv1.InterceptBatchResponse:
		return appendInterceptBatchResponse(dst, r)
	}
	return dst, false
}
