package audit

import (
	"encoding/json"
	"strings"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Kind says what a record is about.
type Kind string

const (
	// KindDecision is a decision on an event (Intercept, typed decisions, batches, queries).
	KindDecision Kind = "decision"
	// KindObservation is an observed, fire-and-forget event.
	KindObservation Kind = "observation"
	// KindApproval is a change of an approval: requested, decided, expired, consumed, abandoned.
	KindApproval Kind = "approval"
	// KindNotice is written by the log itself about the log: a file found deleted or replaced,
	// a previous log found missing (NoticeExtension says which).
	KindNotice Kind = "notice"
)

// RedactionExtension is the Extensions key under which the log records what redaction masked and
// truncated in a record (a redact.Report: paths and kinds, never values).
const RedactionExtension = "dev.ahpgateway/redaction"

// Record is one line of the audit log. It carries identifiers, names, kinds, effects and reasons,
// never raw tool input or output (Config.IncludeEvent adds the redacted event). Empty fields are
// left out of the line; a missing boolean is false.
//
// Seq, Prev and Hash belong to the chain: Append ignores them and the log assigns them.
type Record struct {
	// Seq is the record's position in the log, from 1, continuous across rotated files.
	Seq uint64 `json:"seq,omitempty"`
	// Time is when the decision was made or the event observed, RFC 3339 in UTC with nine
	// fractional digits (FormatTime); Append fills it in when empty.
	Time string `json:"time,omitempty"`
	// Kind is decision or observation.
	Kind Kind `json:"kind"`
	// DecisionID is the decision's UUIDv7 (decisions only).
	DecisionID string `json:"decision_id,omitempty"`
	// EventID is the event's id, unique per source.
	EventID string `json:"event_id,omitempty"`
	// Source is the URI of the emitting harness.
	Source string `json:"source,omitempty"`
	// SessionID is the agent session.
	SessionID string `json:"session_id,omitempty"`
	// AgentID is the agent within the session.
	AgentID string `json:"agent_id,omitempty"`
	// EventType is the canonical dotted event type ("tool.before").
	EventType string `json:"event_type,omitempty"`
	// ToolName is the tool's name, verbatim.
	ToolName string `json:"tool_name,omitempty"`
	// ToolKind is the tool kind's wire name ("shell", "file_read").
	ToolKind string `json:"tool_kind,omitempty"`
	// ToolCallID ties the before/after/error events of one call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Verdict is the combined verdict ("allow", "deny", "ask", "modify", "defer", "escalate").
	Verdict string `json:"verdict,omitempty"`
	// Effects are the effects the caller received, in order.
	Effects []Effect `json:"effects,omitempty"`
	// MatchedRuleIDs are the rules that matched, in evaluation order (dry-run rules included).
	MatchedRuleIDs []string `json:"matched_rule_ids,omitempty"`
	// DryRun is what dry-run rules would have done.
	DryRun []DryRun `json:"dry_run,omitempty"`
	// Fallbacks are effects the caller could not express and what it got instead.
	Fallbacks []Fallback `json:"fallbacks,omitempty"`
	// Typed is the variant of a typed answer ("allow", "block", "refine", …).
	Typed string `json:"typed,omitempty"`
	// Synthetic marks a decision made by the system (fail-closed, fallback, audit failure), not
	// by a policy rule.
	Synthetic bool `json:"synthetic,omitempty"`
	// Replayed marks a remembered decision returned again for a retried event.
	Replayed bool `json:"replayed,omitempty"`
	// LatencyUs is the evaluation time in microseconds.
	LatencyUs uint64 `json:"latency_us,omitempty"`
	// ApprovalID is the approval a decision waited on or used, or the one an approval record is
	// about.
	ApprovalID string `json:"approval_id,omitempty"`
	// Approval describes the change of an approval record (approval records only).
	Approval *Approval `json:"approval,omitempty"`
	// PolicyDigest is the digest of the policy that decided (decisions only).
	PolicyDigest string `json:"policy_digest,omitempty"`
	// PolicyRevision is the cluster policy bucket revision of that policy (0, left out, for a
	// policy from a file or built in).
	PolicyRevision uint64 `json:"policy_revision,omitempty"`
	// Extensions are reverse-DNS keyed additions; the log adds RedactionExtension.
	Extensions map[string]any `json:"extensions,omitempty"`
	// Event is the redacted event in protojson, written only with Config.IncludeEvent (Append
	// ignores a value set by the caller).
	Event json.RawMessage `json:"event,omitempty"`
	// Prev is the hash of the record before (or the log's genesis value).
	Prev string `json:"prev,omitempty"`
	// Hash is SHA-256 over Prev and this record's canonical bytes.
	Hash string `json:"hash,omitempty"`

	// event is the source of Event, kept by RecordFor for Config.IncludeEvent.
	event *ahpv1.Event
}

// Effect is one effect of a decision: its kind, rule and reason, never a payload (a modify
// effect's new value, a return value or injected messages are not recorded).
type Effect struct {
	// Kind is "deny", "allow", "ask", "modify", "defer", "escalate", "message", "return", "flow"
	// or "inject".
	Kind string `json:"kind"`
	// RuleID is the rule that produced it; empty for built-in behaviour.
	RuleID string `json:"rule_id,omitempty"`
	// Reason is the effect's reason (deny, allow, ask, modify, defer, escalate, flow).
	Reason string `json:"reason,omitempty"`
	// Code is a deny's reverse-DNS code.
	Code string `json:"code,omitempty"`
	// Message is a message effect's text.
	Message string `json:"message,omitempty"`
	// Target is an escalation's target, a modify's target ("input"), a flow's operation or an
	// injection's target.
	Target string `json:"target,omitempty"`
	// RetryAfterMs is a defer's suggested wait.
	RetryAfterMs uint64 `json:"retry_after_ms,omitempty"`
}

// Approval is what an approval record says about the change.
type Approval struct {
	// Change is requested, decided, expired, consumed or abandoned.
	Change string `json:"change"`
	// State is the approval's state after the change (pending, approved, denied, expired).
	State string `json:"state"`
	// RuleIDs are the approval rules.
	RuleIDs []string `json:"rule_ids,omitempty"`
	// Principal is the authenticated caller whose call was held.
	Principal string `json:"principal,omitempty"`
	// DecidedBy is the authenticated principal who decided.
	DecidedBy string `json:"decided_by,omitempty"`
	// Comment is the approver's comment (redacted like reasons).
	Comment string `json:"comment,omitempty"`
	// LatencyMs is the time from request to decision or expiry.
	LatencyMs uint64 `json:"latency_ms,omitempty"`
	// Abandoned is set when every held caller went away.
	Abandoned bool `json:"abandoned,omitempty"`
}

// DryRun is what one dry-run rule would have done.
type DryRun struct {
	// RuleID is the dry-run rule.
	RuleID string `json:"rule_id"`
	// WouldBe is the effect it would have produced.
	WouldBe Effect `json:"would_be"`
}

// Fallback is an effect the caller could not express.
type Fallback struct {
	// RuleID is the rule that wanted the effect.
	RuleID string `json:"rule_id,omitempty"`
	// Wanted is the kind of effect the policy wanted.
	Wanted string `json:"wanted"`
	// Sent is the kind of effect the caller received instead; empty for none.
	Sent string `json:"sent,omitempty"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
}

// FormatTime formats t as a record time: RFC 3339 in UTC with exactly nine fractional digits, so
// times sort as strings.
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

// RecordFor builds the record of a decision on ev (d non-nil) or of an observed event (d nil), at
// time at. Reasons are copied as they are: Append redacts them before anything is written.
func RecordFor(ev *ahpv1.Event, d *ahpv1.Decision, at time.Time) Record {
	rec := Record{
		Time:       FormatTime(at),
		Kind:       KindObservation,
		EventID:    ev.GetId(),
		Source:     ev.GetSource(),
		SessionID:  ev.GetSession().GetId(),
		AgentID:    agentID(ev),
		EventType:  names.EventTypeName(ev.GetType()),
		ToolName:   ev.GetTool().GetName(),
		ToolKind:   wireName(ev.GetTool().GetKind()),
		ToolCallID: ev.GetTool().GetCallId(),
		event:      ev,
	}
	if d == nil {
		return rec
	}
	rec.Kind = KindDecision
	rec.DecisionID = d.GetDecisionId()
	rec.Verdict = wireName(d.GetVerdict())
	for _, e := range d.GetEffects() {
		rec.Effects = append(rec.Effects, effectOf(e))
	}
	rec.MatchedRuleIDs = append([]string(nil), d.GetMatchedRuleIds()...)
	for _, dr := range d.GetDryRuns() {
		rec.DryRun = append(rec.DryRun, DryRun{RuleID: dr.GetRuleId(), WouldBe: effectOf(dr.GetWouldBe())})
	}
	for _, fb := range d.GetFallbacks() {
		rec.Fallbacks = append(rec.Fallbacks, Fallback{
			RuleID: fb.GetRuleId(),
			Wanted: effectOf(fb.GetWanted()).Kind,
			Sent:   effectOf(fb.GetSent()).Kind,
			Reason: fb.GetReason(),
		})
	}
	rec.Typed = typedVariant(d)
	rec.Synthetic = d.GetSynthetic()
	rec.Replayed = d.GetReplayed()
	rec.LatencyUs = d.GetLatencyUs()
	rec.ApprovalID = d.GetApprovalId()
	rec.PolicyDigest = d.GetPolicyDigest()
	rec.PolicyRevision = d.GetPolicyRevision()
	return rec
}

func agentID(ev *ahpv1.Event) string {
	if id := ev.GetHarness().GetAgentId(); id != "" {
		return id
	}
	return ev.GetSession().GetAgent().GetId()
}

// effectOf summarises an effect without its payload; a nil effect has an empty kind.
func effectOf(e *ahpv1.Effect) Effect {
	out := Effect{RuleID: e.GetRuleId()}
	switch x := e.GetEffect().(type) {
	case *ahpv1.Effect_Deny:
		out.Kind, out.Reason, out.Code = "deny", x.Deny.GetReason(), x.Deny.GetCode()
	case *ahpv1.Effect_Allow:
		out.Kind, out.Reason = "allow", x.Allow.GetReason()
	case *ahpv1.Effect_Ask:
		out.Kind, out.Reason = "ask", x.Ask.GetReason()
	case *ahpv1.Effect_Modify:
		out.Kind, out.Reason, out.Target = "modify", x.Modify.GetReason(), wireName(x.Modify.GetTarget())
	case *ahpv1.Effect_Defer:
		out.Kind, out.Reason, out.RetryAfterMs = "defer", x.Defer.GetReason(), x.Defer.GetRetryAfterMs()
	case *ahpv1.Effect_Escalate:
		out.Kind, out.Reason, out.Target = "escalate", x.Escalate.GetReason(), x.Escalate.GetTarget()
	case *ahpv1.Effect_Message:
		out.Kind, out.Message = "message", x.Message.GetText()
	case *ahpv1.Effect_Return:
		out.Kind = "return"
	case *ahpv1.Effect_Flow:
		out.Kind, out.Reason, out.Target = "flow", x.Flow.GetReason(), x.Flow.GetOperation()
	case *ahpv1.Effect_Inject:
		out.Kind, out.Target = "inject", x.Inject.GetTarget()
	}
	return out
}

// typedVariant names the variant of a typed answer ("allow", "block", …), or "".
func typedVariant(d *ahpv1.Decision) string {
	m := d.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("typed"))
	if fd == nil {
		return ""
	}
	inner := m.Get(fd).Message()
	od := inner.Descriptor().Oneofs().ByName("decision")
	if od == nil {
		return ""
	}
	if v := inner.WhichOneof(od); v != nil {
		return string(v.Name())
	}
	return ""
}

// wireName is an enum value's snake_case wire name: its name without the enum's prefix, in lower
// case (TOOL_KIND_FILE_READ -> "file_read"); "" for the zero value. The names of the enums a
// record uses are computed once.
func wireName(e protoreflect.Enum) string {
	if e.Number() == 0 {
		return ""
	}
	if names, ok := enumNames[e.Descriptor().FullName()]; ok && int(e.Number()) < len(names) {
		return names[e.Number()]
	}
	return computeWireName(e.Descriptor(), e.Number())
}

var enumNames = func() map[protoreflect.FullName][]string {
	m := make(map[protoreflect.FullName][]string)
	for _, d := range []protoreflect.EnumDescriptor{
		ahpv1.ToolKind(0).Descriptor(), ahpv1.Verdict(0).Descriptor(), ahpv1.ModifyTarget(0).Descriptor(),
	} {
		var names []string
		for i := range d.Values().Len() {
			n := d.Values().Get(i).Number()
			for int(n) >= len(names) {
				names = append(names, "")
			}
			if n != 0 {
				names[n] = computeWireName(d, n)
			}
		}
		m[d.FullName()] = names
	}
	return m
}()

func computeWireName(desc protoreflect.EnumDescriptor, n protoreflect.EnumNumber) string {
	v := desc.Values().ByNumber(n)
	if v == nil {
		return ""
	}
	name := string(v.Name())
	if zero := desc.Values().ByNumber(0); zero != nil { // e.g. TOOL_KIND_UNSPECIFIED
		name = strings.TrimPrefix(name, strings.TrimSuffix(string(zero.Name()), "UNSPECIFIED"))
	}
	return strings.ToLower(name)
}
