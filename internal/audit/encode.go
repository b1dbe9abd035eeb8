package audit

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// appendBody appends rec as a JSON object without its chain members (seq, prev, hash). The output
// is byte for byte what encoding/json produces for a Record with HTML escaping off
// (TestEncoderMatchesEncodingJSON); writing it by hand keeps reflection off the append path,
// which is most of its cost.
func appendBody(dst []byte, rec *Record) ([]byte, error) {
	e := objectEncoder{dst: append(dst, '{')}
	e.str("time", rec.Time, true)
	e.str("kind", string(rec.Kind), false)
	e.str("decision_id", rec.DecisionID, true)
	e.str("event_id", rec.EventID, true)
	e.str("source", rec.Source, true)
	e.str("session_id", rec.SessionID, true)
	e.str("agent_id", rec.AgentID, true)
	e.str("event_type", rec.EventType, true)
	e.str("tool_name", rec.ToolName, true)
	e.str("tool_kind", rec.ToolKind, true)
	e.str("tool_call_id", rec.ToolCallID, true)
	e.str("verdict", rec.Verdict, true)
	e.array("effects", len(rec.Effects), func(dst []byte, i int) []byte {
		return appendEffect(dst, &rec.Effects[i])
	})
	e.array("matched_rule_ids", len(rec.MatchedRuleIDs), func(dst []byte, i int) []byte {
		return jsonwire.AppendString(dst, rec.MatchedRuleIDs[i])
	})
	e.array("dry_run", len(rec.DryRun), func(dst []byte, i int) []byte {
		d := objectEncoder{dst: append(dst, '{')}
		d.str("rule_id", rec.DryRun[i].RuleID, false)
		d.key("would_be")
		d.dst = appendEffect(d.dst, &rec.DryRun[i].WouldBe)
		return append(d.dst, '}')
	})
	e.array("fallbacks", len(rec.Fallbacks), func(dst []byte, i int) []byte {
		fb := &rec.Fallbacks[i]
		f := objectEncoder{dst: append(dst, '{')}
		f.str("rule_id", fb.RuleID, true)
		f.str("wanted", fb.Wanted, false)
		f.str("sent", fb.Sent, true)
		f.str("reason", fb.Reason, true)
		return append(f.dst, '}')
	})
	e.str("typed", rec.Typed, true)
	e.bool("synthetic", rec.Synthetic)
	e.bool("replayed", rec.Replayed)
	e.uint("latency_us", rec.LatencyUs)
	e.str("approval_id", rec.ApprovalID, true)
	if rec.Approval != nil {
		a, err := jsonwire.Marshal(rec.Approval)
		if err != nil {
			return dst, err
		}
		e.key("approval")
		e.dst = append(e.dst, a...)
	}
	e.str("policy_digest", rec.PolicyDigest, true)
	e.uint("policy_revision", rec.PolicyRevision)
	if len(rec.Extensions) > 0 {
		// Extensions are rare and free-form: written as encoding/json would (sorted keys).
		ext, err := jsonwire.Marshal(rec.Extensions)
		if err != nil {
			return dst, err
		}
		e.key("extensions")
		e.dst = append(e.dst, ext...)
	}
	if len(rec.Event) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, rec.Event); err != nil {
			return dst, err
		}
		e.key("event")
		e.dst = append(e.dst, buf.Bytes()...)
	}
	return append(e.dst, '}'), nil
}

func appendEffect(dst []byte, ef *Effect) []byte {
	e := objectEncoder{dst: append(dst, '{')}
	e.str("kind", ef.Kind, false)
	e.str("rule_id", ef.RuleID, true)
	e.str("reason", ef.Reason, true)
	e.str("code", ef.Code, true)
	e.str("message", ef.Message, true)
	e.str("target", ef.Target, true)
	e.uint("retry_after_ms", ef.RetryAfterMs)
	return append(e.dst, '}')
}

// objectEncoder writes the members of one JSON object, with commas between them.
type objectEncoder struct {
	dst     []byte
	members int
}

func (e *objectEncoder) key(k string) {
	if e.members > 0 {
		e.dst = append(e.dst, ',')
	}
	e.members++
	e.dst = append(e.dst, '"')
	e.dst = append(e.dst, k...) // keys are fixed ASCII names
	e.dst = append(e.dst, '"', ':')
}

func (e *objectEncoder) str(k, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	e.key(k)
	e.dst = jsonwire.AppendString(e.dst, v)
}

// array writes k with an array of n elements, each appended by elem; nothing when n is 0.
func (e *objectEncoder) array(k string, n int, elem func(dst []byte, i int) []byte) {
	if n == 0 {
		return
	}
	e.key(k)
	e.dst = append(e.dst, '[')
	for i := range n {
		if i > 0 {
			e.dst = append(e.dst, ',')
		}
		e.dst = elem(e.dst, i)
	}
	e.dst = append(e.dst, ']')
}

func (e *objectEncoder) bool(k string, v bool) {
	if v {
		e.key(k)
		e.dst = append(e.dst, "true"...)
	}
}

func (e *objectEncoder) uint(k string, v uint64) {
	if v != 0 {
		e.key(k)
		e.dst = strconv.AppendUint(e.dst, v, 10)
	}
}
