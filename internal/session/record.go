package session

import (
	"sync"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
)

// Record is one session's memory in a form a store outside the process keeps (cluster/sessionkv
// stores it in its own binary layout): the same counters, statuses and rings as Memory keeps,
// bounded the same way. Its windows share storage with the records it was copied from (see
// Window): copy a Record with = and change the copy; what the original, or a view of it, holds
// never changes.
type Record struct {
	AgentID            string
	Events             uint64
	ToolCalls          uint64
	Errors             uint64
	Denies             uint64
	FirstSeen          time.Time
	LastSeen           time.Time
	LastType           ahpv1.EventType
	RunStatus          string
	VerificationStatus string
	// Recent are the recent events in the in-memory store's compact form; Facts the derived
	// facts (never changed once pushed).
	Recent Window[policy.CompactEvent]
	Facts  Window[*ahpv1.Fact]
	// recentText and factText are the bytes of text the windows hold, for Bytes.
	recentText, factText int
}

// AgentRecord is one agent's facts.
type AgentRecord struct {
	Facts    Window[*ahpv1.Fact]
	factText int
}

// Limits are the ring sizes of Options with their defaults.
func (o Options) Limits() (recentEvents, facts int) {
	o = o.withDefaults()
	return o.RecentEvents, o.Facts
}

// DeriveFacts returns the facts an event adds to its session and agent (the same Memory derives),
// redacted by r (not nil). They are shared by the records they are pushed to: never change them.
func DeriveFacts(ev *ahpv1.Event, r *redact.Redactor) []*ahpv1.Fact { return deriveFacts(ev, r) }

// AgentOf is the agent an event belongs to.
func AgentOf(ev *ahpv1.Event) string { return agentOf(ev) }

// Change is what an event changes in its session's record, taken from the event so that a change
// waiting to be applied does not hold the whole event.
type Change struct {
	Type     ahpv1.EventType
	AgentID  string // "" for none
	ToolName string
	ToolKind ahpv1.ToolKind
	// Status is the run status of a run_lifecycle event, the verification status of a
	// verification event.
	Status string
}

// ChangeOf is ev's change.
func ChangeOf(ev *ahpv1.Event) Change {
	c := Change{Type: ev.GetType(), AgentID: agentOf(ev), ToolName: ev.GetTool().GetName(), ToolKind: ev.GetTool().GetKind()}
	switch c.Type {
	case ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:
		c.Status = wireName(ev.GetRunLifecycle().GetStatus().String(), "RUN_STATUS_")
	case ahpv1.EventType_EVENT_TYPE_VERIFICATION:
		c.Status = wireName(ev.GetVerification().GetStatus().String(), "VERIFICATION_STATUS_")
	}
	return c
}

// Bytes estimates what c holds.
func (c Change) Bytes() int { return 64 + len(c.AgentID) + len(c.ToolName) + len(c.Status) }

// Apply adds an observed or decided event to r, with the rules of Memory.RecordEvent; derived is
// DeriveFacts(ev).
func (r *Record) Apply(ev *ahpv1.Event, at time.Time, derived []*ahpv1.Fact, recentEvents, facts int) {
	r.ApplyChange(ChangeOf(ev), at, derived, recentEvents, facts)
}

// ApplyChange is Apply of the event c was taken from.
func (r *Record) ApplyChange(c Change, at time.Time, derived []*ahpv1.Fact, recentEvents, facts int) {
	if r.FirstSeen.IsZero() {
		r.FirstSeen = at
	}
	r.LastSeen = at
	if c.AgentID != "" {
		r.AgentID = c.AgentID
	}
	r.Events++
	r.LastType = c.Type
	switch c.Type {
	case ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE:
		r.ToolCalls++
	case ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, ahpv1.EventType_EVENT_TYPE_ERROR:
		r.Errors++
	case ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:
		r.RunStatus = c.Status
	case ahpv1.EventType_EVENT_TYPE_VERIFICATION:
		r.VerificationStatus = c.Status
	}
	r.PushRecent(policy.NewCompactEvent(c.Type, c.ToolKind, c.ToolName, at), recentEvents)
	for _, f := range derived {
		r.PushFact(f, facts)
	}
}

// PushRecent adds a recent event, keeping the newest n.
func (r *Record) PushRecent(e policy.CompactEvent, n int) {
	shrunk := r.Recent.Len() > n // kept with a larger bound: more than the one item may leave
	r.recentText += compactText(e)
	if old, ok := r.Recent.Push(e, n); ok {
		r.recentText -= compactText(old)
	}
	if shrunk {
		r.recentText = 0
		for _, e := range r.Recent.NewestFirst() {
			r.recentText += compactText(e)
		}
	}
}

// PushFact adds a fact (not changed afterwards), keeping the newest n.
func (r *Record) PushFact(f *ahpv1.Fact, n int) { pushFactText(&r.Facts, &r.factText, f, n) }

// Apply adds derived facts to the agent's.
func (a *AgentRecord) Apply(derived []*ahpv1.Fact, facts int) {
	for _, f := range derived {
		a.PushFact(f, facts)
	}
}

// PushFact adds a fact (not changed afterwards), keeping the newest n.
func (a *AgentRecord) PushFact(f *ahpv1.Fact, n int) { pushFactText(&a.Facts, &a.factText, f, n) }

func pushFactText(w *Window[*ahpv1.Fact], text *int, f *ahpv1.Fact, n int) {
	shrunk := w.Len() > n
	*text += factText(f)
	if old, ok := w.Push(f, n); ok {
		*text -= factText(old)
	}
	if shrunk {
		*text = 0
		for _, f := range w.NewestFirst() {
			*text += factText(f)
		}
	}
}

// compactText is the text of a recent event the byte estimate counts (as Memory's compactSize).
func compactText(e policy.CompactEvent) int {
	lens := nameLens()
	typeLen, kindLen := 0, 0
	if t := int(e.Type()); t >= 0 && t < len(lens.types) {
		typeLen = lens.types[t]
	} else {
		typeLen = len(names.EventTypeName(e.Type()))
	}
	if k := int(e.Kind()); k >= 0 && k < len(lens.kinds) {
		kindLen = lens.kinds[k]
	} else {
		kindLen = len(names.ToolKindName(e.Kind()))
	}
	return typeLen + len(e.ToolName()) + kindLen
}

// nameLens are the lengths of the event type and tool kind names by number, up to the largest
// defined (compactText runs at every push of a record's window).
var nameLens = sync.OnceValue(func() (l struct{ types, kinds []int }) {
	for i, values := 0, ahpv1.EventType(0).Descriptor().Values(); i < values.Len(); i++ {
		n := int(values.Get(i).Number())
		if n >= 0 && n < 4096 {
			for len(l.types) <= n {
				l.types = append(l.types, len(names.EventTypeName(ahpv1.EventType(len(l.types)))))
			}
		}
	}
	for i, values := 0, ahpv1.ToolKind(0).Descriptor().Values(); i < values.Len(); i++ {
		n := int(values.Get(i).Number())
		if n >= 0 && n < 4096 {
			for len(l.kinds) <= n {
				l.kinds = append(l.kinds, len(names.ToolKindName(ahpv1.ToolKind(len(l.kinds)))))
			}
		}
	}
	return l
})

func factText(f *ahpv1.Fact) int { return len(f.GetContent()) + len(f.GetSource()) }

// Bytes estimates r's size with Memory's measure, for the same byte bounds.
func (r *Record) Bytes(sessionID string, recentEvents, facts int) int {
	return stateSize + len(sessionID) + len(r.AgentID) + slotSize*(recentEvents+facts) +
		summarySize*r.Recent.Len() + r.recentText + factSize*r.Facts.Len() + r.factText
}

// Fill copies r into a view, newest first as Memory's views are. The view shares the windows
// (later changes to r or its copies do not reach it); its recent events stay in compact form
// until read (policy.SessionView.RecentEvents).
func (r *Record) Fill(v *policy.SessionView) {
	if v.AgentID == "" {
		v.AgentID = r.AgentID
	}
	v.EventCount, v.ToolCallCount = r.Events, r.ToolCalls
	v.ErrorCount, v.DenyCount = r.Errors, r.Denies
	v.FirstSeen, v.LastSeen = r.FirstSeen, r.LastSeen
	v.LastEventType = names.EventTypeName(r.LastType)
	v.RunStatus, v.VerificationStatus = r.RunStatus, r.VerificationStatus
	v.SetCompactRecent(r.Recent.NewestFirst())
	v.Facts = r.Facts.NewestFirst()
}

// Fill gives a view the agent's facts (shared, as Record.Fill's).
func (a *AgentRecord) Fill(v *policy.SessionView) { v.AgentFacts = a.Facts.NewestFirst() }
