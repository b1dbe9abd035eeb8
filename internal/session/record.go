package session

import (
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
)

// Record is one session's memory in a form a store outside the process keeps (cluster/sessionkv
// stores it as JSON): the same counters, statuses and rings as Memory keeps, ordered oldest
// first, and bounded the same way.
type Record struct {
	AgentID            string        `json:"agent,omitempty"`
	Events             uint64        `json:"events,omitempty"`
	ToolCalls          uint64        `json:"tool_calls,omitempty"`
	Errors             uint64        `json:"errors,omitempty"`
	Denies             uint64        `json:"denies,omitempty"`
	FirstSeen          time.Time     `json:"first_seen"`
	LastSeen           time.Time     `json:"last_seen"`
	LastType           string        `json:"last_type,omitempty"`
	RunStatus          string        `json:"run_status,omitempty"`
	VerificationStatus string        `json:"verification_status,omitempty"`
	Recent             []RecordEvent `json:"recent,omitempty"`
	Facts              []RecordFact  `json:"facts,omitempty"`
}

// RecordEvent is one recent event's summary.
type RecordEvent struct {
	Type     string    `json:"type"`
	ToolName string    `json:"tool_name,omitempty"`
	ToolKind string    `json:"tool_kind,omitempty"`
	Time     time.Time `json:"time"`
}

// RecordFact is one fact.
type RecordFact struct {
	Content    string  `json:"content"`
	Source     string  `json:"source,omitempty"`
	Confidence float32 `json:"confidence,omitempty"`
}

// AgentRecord is one agent's facts, oldest first.
type AgentRecord struct {
	Facts []RecordFact `json:"facts,omitempty"`
}

// Limits are the ring sizes of Options with their defaults.
func (o Options) Limits() (recentEvents, facts int) {
	o = o.withDefaults()
	return o.RecentEvents, o.Facts
}

// DeriveFacts returns the facts an event adds to its session and agent (the same Memory derives),
// redacted by r (not nil).
func DeriveFacts(ev *ahpv1.Event, r *redact.Redactor) []RecordFact {
	derived := deriveFacts(ev, r)
	out := make([]RecordFact, len(derived))
	for i, f := range derived {
		out[i] = RecordFact{Content: f.GetContent(), Source: f.GetSource(), Confidence: f.GetConfidence()}
	}
	return out
}

// AgentOf is the agent an event belongs to.
func AgentOf(ev *ahpv1.Event) string { return agentOf(ev) }

// Apply adds an observed or decided event to r, with the rules of Memory.RecordEvent; derived is
// DeriveFacts(ev).
func (r *Record) Apply(ev *ahpv1.Event, at time.Time, derived []RecordFact, recentEvents, facts int) {
	if r.FirstSeen.IsZero() {
		r.FirstSeen = at
	}
	r.LastSeen = at
	if a := agentOf(ev); a != "" {
		r.AgentID = a
	}
	r.Events++
	name := names.EventTypeName(ev.GetType())
	r.LastType = name
	switch ev.GetType() {
	case ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE:
		r.ToolCalls++
	case ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, ahpv1.EventType_EVENT_TYPE_ERROR:
		r.Errors++
	case ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:
		r.RunStatus = wireName(ev.GetRunLifecycle().GetStatus().String(), "RUN_STATUS_")
	case ahpv1.EventType_EVENT_TYPE_VERIFICATION:
		r.VerificationStatus = wireName(ev.GetVerification().GetStatus().String(), "VERIFICATION_STATUS_")
	}
	r.Recent = keepLast(append(r.Recent, RecordEvent{
		Type: name, ToolName: ev.GetTool().GetName(), ToolKind: names.ToolKindName(ev.GetTool().GetKind()), Time: at,
	}), recentEvents)
	r.Facts = keepLast(append(r.Facts, derived...), facts)
}

// Apply adds derived facts to the agent's.
func (a *AgentRecord) Apply(derived []RecordFact, facts int) {
	a.Facts = keepLast(append(a.Facts, derived...), facts)
}

func keepLast[T any](s []T, n int) []T {
	if len(s) > n {
		s = append(s[:0], s[len(s)-n:]...)
	}
	return s
}

// Bytes estimates r's size with Memory's measure, for the same byte bounds.
func (r *Record) Bytes(sessionID string, recentEvents, facts int) int {
	n := stateSize + len(sessionID) + len(r.AgentID) + slotSize*(recentEvents+facts)
	for _, e := range r.Recent {
		n += summarySize + len(e.Type) + len(e.ToolName) + len(e.ToolKind)
	}
	for _, f := range r.Facts {
		n += factSize + len(f.Content) + len(f.Source)
	}
	return n
}

// Fill copies r into a view, newest first as Memory's views are.
func (r *Record) Fill(v *policy.SessionView) {
	if v.AgentID == "" {
		v.AgentID = r.AgentID
	}
	v.EventCount, v.ToolCallCount = r.Events, r.ToolCalls
	v.ErrorCount, v.DenyCount = r.Errors, r.Denies
	v.FirstSeen, v.LastSeen = r.FirstSeen, r.LastSeen
	v.LastEventType = r.LastType
	v.RunStatus, v.VerificationStatus = r.RunStatus, r.VerificationStatus
	v.Recent = make([]policy.EventSummary, len(r.Recent))
	for i, e := range r.Recent {
		v.Recent[len(r.Recent)-1-i] = policy.EventSummary{Type: e.Type, ToolName: e.ToolName, ToolKind: e.ToolKind, Time: e.Time}
	}
	v.Facts = factsNewestFirst(r.Facts)
}

// Fill copies the agent's facts into a view.
func (a *AgentRecord) Fill(v *policy.SessionView) { v.AgentFacts = factsNewestFirst(a.Facts) }

func factsNewestFirst(fs []RecordFact) []*ahpv1.Fact {
	out := make([]*ahpv1.Fact, len(fs))
	for i, f := range fs {
		out[len(fs)-1-i] = &ahpv1.Fact{Content: f.Content, Source: f.Source, Confidence: f.Confidence}
	}
	return out
}
