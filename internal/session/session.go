// Package session is the server's bounded memory of agent sessions: recent events, facts derived
// from observations, run and verification status, and counters. It feeds memory_recall,
// context_perception and session-aware policy rules through policy.SessionView snapshots.
package session

import (
	"fmt"
	"strings"
	"sync"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/lru"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
)

// Store is what the decision core needs from session memory. The in-process Memory implements it;
// a clustered implementation can share it between replicas.
type Store interface {
	// View returns a snapshot of the session (and its agent's facts); never nil.
	View(sessionID, agentID string) *policy.SessionView
	// RecordEvent remembers an observed or decided event.
	RecordEvent(ev *ahpv1.Event, at time.Time)
	// RecordDecision remembers the verdict given for an event.
	RecordDecision(ev *ahpv1.Event, d *ahpv1.Decision)
}

// Options bound the memory.
type Options struct {
	// MaxSessions is how many sessions are kept (LRU); default 10000.
	MaxSessions int
	// MaxAgents is how many agents' facts are kept (LRU); default 10000.
	MaxAgents int
	// TTL expires sessions and agents unused this long; default 24h.
	TTL time.Duration
	// RecentEvents is the per-session event ring size; default 64.
	RecentEvents int
	// Facts is the per-session and per-agent fact ring size; default 128.
	Facts int
	// MaxBytes bounds the estimated bytes of the sessions kept, and separately of the agents'
	// facts kept; the least recently used are evicted first. Default DefaultMaxBytes.
	MaxBytes int
	// Redactor masks secrets in facts before they are kept, so nothing recalled later (memory
	// recall, context perception) carries a secret from a tool error or a run summary; default
	// redact.New with defaults.
	Redactor *redact.Redactor
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxAgents <= 0 {
		o.MaxAgents = 10000
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.RecentEvents <= 0 {
		o.RecentEvents = 64
	}
	if o.Facts <= 0 {
		o.Facts = 128
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			panic("session: the default redactor: " + err.Error()) // the defaults always compile
		}
		o.Redactor = r
	}
	return o
}

// DefaultMaxBytes is the default of Options.MaxBytes.
const DefaultMaxBytes = 64 << 20

// Size estimates, in bytes, of what is kept besides the text of ids, names and facts.
const (
	stateSize   = 256 // a session's or an agent's record and its cache entry
	summarySize = 64  // one recent event's summary
	factSize    = 96  // one fact
	slotSize    = 8   // one slot of a ring, used or not
)

// Memory is the in-process Store. Its bounds: entries (MaxSessions, MaxAgents), bytes (MaxBytes,
// each session and agent sized by the text it keeps), and time (TTL).
type Memory struct {
	opts     Options
	sessions *lru.Cache[string, *state]
	agents   *lru.Cache[string, *facts]
}

// NewMemory returns an empty in-process session memory.
func NewMemory(opts Options) *Memory {
	opts = opts.withDefaults()
	m := &Memory{
		opts:     opts,
		sessions: lru.New[string, *state](opts.MaxSessions, opts.TTL, opts.Now),
		agents:   lru.New[string, *facts](opts.MaxAgents, opts.TTL, opts.Now),
	}
	m.sessions.SetMaxBytes(opts.MaxBytes)
	m.agents.SetMaxBytes(opts.MaxBytes)
	return m
}

type state struct {
	mu                 sync.Mutex
	agentID            string
	events, toolCalls  uint64
	errors, denies     uint64
	firstSeen          time.Time
	lastSeen           time.Time
	lastType           string
	runStatus          string
	verificationStatus string
	recent             ring[policy.CompactEvent] // pointer-light entries (policy.CompactEvent)
	facts              ring[*ahpv1.Fact]
	bytes              int // estimated, for the cache's byte bound
}

type facts struct {
	mu    sync.Mutex
	ring  ring[*ahpv1.Fact]
	bytes int // estimated, for the cache's byte bound
}

// Bytes estimates what the memory keeps, sessions and agents together.
func (m *Memory) Bytes() int { return m.sessions.Bytes() + m.agents.Bytes() }

// compactSize is what a recent event counts towards MaxBytes: as much as the EventSummary it
// stands for (the compact form is smaller, so the bound errs on the safe side).
func compactSize(e policy.CompactEvent) int { return summarySize + compactText(e) }

func factBytes(f *ahpv1.Fact) int { return factSize + len(f.GetContent()) + len(f.GetSource()) }

// pushFact adds f to r and returns by how many bytes that grew r.
func pushFact(r *ring[*ahpv1.Fact], f *ahpv1.Fact) int {
	grown := factBytes(f)
	r.push(f, func(old *ahpv1.Fact) { grown -= factBytes(old) })
	return grown
}

// View implements Store. The view's Facts and AgentFacts share the rings' storage (see ring): no
// copy per decision, and later pushes never change what a view holds; Recent is converted from
// the ring's compact entries. LazyView leaves that conversion to whoever reads them.
func (m *Memory) View(sessionID, agentID string) *policy.SessionView {
	v := m.LazyView(sessionID, agentID)
	v.RecentEvents()
	if v.Recent == nil {
		v.Recent = []policy.EventSummary{}
	}
	return v
}

// LazyViewer is a Store whose views may hold their recent events in compact form, converted on
// first use (policy.SessionView.RecentEvents); the decision core uses it when a store offers it.
type LazyViewer interface {
	// LazyView is View with Recent left to RecentEvents.
	LazyView(sessionID, agentID string) *policy.SessionView
}

var _ LazyViewer = (*Memory)(nil)

// LazyView implements LazyViewer: the view shares the ring of compact recent events instead of
// converting 64 of them for every decision, whether or not a rule reads session.recent.
func (m *Memory) LazyView(sessionID, agentID string) *policy.SessionView {
	v := &policy.SessionView{SessionID: sessionID, AgentID: agentID}
	if sessionID != "" {
		if s, ok := m.sessions.Get(sessionID); ok {
			s.mu.Lock()
			if v.AgentID == "" {
				v.AgentID = s.agentID
			}
			v.EventCount, v.ToolCallCount = s.events, s.toolCalls
			v.ErrorCount, v.DenyCount = s.errors, s.denies
			v.FirstSeen, v.LastSeen = s.firstSeen, s.lastSeen
			v.LastEventType = s.lastType
			v.RunStatus, v.VerificationStatus = s.runStatus, s.verificationStatus
			v.SetCompactRecent(s.recent.newestFirst())
			v.Facts = s.facts.newestFirst()
			s.mu.Unlock()
		}
	}
	if v.AgentID != "" {
		if a, ok := m.agents.Get(v.AgentID); ok {
			a.mu.Lock()
			v.AgentFacts = a.ring.newestFirst()
			a.mu.Unlock()
		}
	}
	return v
}

// RecordEvent implements Store.
func (m *Memory) RecordEvent(ev *ahpv1.Event, at time.Time) {
	sid := ev.GetSession().GetId()
	agentID := agentOf(ev)
	derived := deriveFacts(ev, m.opts.Redactor)
	if sid != "" {
		s, _ := m.sessions.GetOrCreate(sid, func() *state {
			return &state{
				recent: newRing[policy.CompactEvent](m.opts.RecentEvents), facts: newRing[*ahpv1.Fact](m.opts.Facts),
				bytes: stateSize + len(sid) + slotSize*(ringSlots(m.opts.RecentEvents)+ringSlots(m.opts.Facts)),
			}
		})
		s.mu.Lock()
		if s.firstSeen.IsZero() {
			s.firstSeen = at
		}
		s.lastSeen = at
		if agentID != "" {
			s.bytes += len(agentID) - len(s.agentID)
			s.agentID = agentID
		}
		s.events++
		name := names.EventTypeName(ev.GetType())
		s.lastType = name // a constant's text: not counted
		switch ev.GetType() {
		case ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE:
			s.toolCalls++
		case ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, ahpv1.EventType_EVENT_TYPE_ERROR:
			s.errors++
		case ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:
			s.runStatus = wireName(ev.GetRunLifecycle().GetStatus().String(), "RUN_STATUS_")
		case ahpv1.EventType_EVENT_TYPE_VERIFICATION:
			s.verificationStatus = wireName(ev.GetVerification().GetStatus().String(), "VERIFICATION_STATUS_")
		}
		summary := policy.NewCompactEvent(ev.GetType(), ev.GetTool().GetKind(), ev.GetTool().GetName(), at)
		s.bytes += compactSize(summary)
		s.recent.push(summary, func(old policy.CompactEvent) { s.bytes -= compactSize(old) })
		for _, f := range derived {
			s.bytes += pushFact(&s.facts, f)
		}
		// Under s.mu, so that sizes reach the cache in the order they were reached.
		m.sessions.Resize(sid, s.bytes)
		s.mu.Unlock()
	}
	if agentID != "" && len(derived) > 0 {
		a, _ := m.agents.GetOrCreate(agentID, func() *facts {
			return &facts{ring: newRing[*ahpv1.Fact](m.opts.Facts), bytes: stateSize + len(agentID) + slotSize*ringSlots(m.opts.Facts)}
		})
		a.mu.Lock()
		for _, f := range derived {
			a.bytes += pushFact(&a.ring, f)
		}
		m.agents.Resize(agentID, a.bytes)
		a.mu.Unlock()
	}
}

// RecordDecision implements Store.
func (m *Memory) RecordDecision(ev *ahpv1.Event, d *ahpv1.Decision) {
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		return
	}
	sid := ev.GetSession().GetId()
	if sid == "" {
		return
	}
	if s, ok := m.sessions.Get(sid); ok {
		s.mu.Lock()
		s.denies++
		s.mu.Unlock()
	}
}

// Scoped ids: the decision core keys memory by the authenticated principal as well as by the
// session or agent id the caller names, so one principal never reads or writes another's memory
// (see Scope). The separator cannot occur in a principal's name.
const scopeSeparator = "\x00"

// Scope returns the memory key of id for the principal; an unauthenticated caller ("") and an
// empty id keep the id itself.
func Scope(principal, id string) string {
	if principal == "" || id == "" {
		return id
	}
	return principal + scopeSeparator + id
}

// SessionID returns the id a scoped key was made of (the key itself when it is not scoped).
func SessionID(key string) string {
	if i := strings.Index(key, scopeSeparator); i >= 0 {
		return key[i+len(scopeSeparator):]
	}
	return key
}

func agentOf(ev *ahpv1.Event) string {
	if id := ev.GetSession().GetAgent().GetId(); id != "" {
		return id
	}
	return ev.GetHarness().GetAgentId()
}

func wireName(enumName, prefix string) string {
	return strings.ToLower(strings.TrimPrefix(enumName, prefix))
}

// maxFactLen bounds a derived fact, in bytes with the closing ellipsis, so one huge observation
// cannot crowd memory.
const maxFactLen = 300

// ellipsis ends a fact that was cut.
const ellipsis = "…"

// deriveFacts turns an observation into facts worth recalling later. Only outcomes are kept
// (failures, verification results, run status, finished tasks), not raw tool input, and each is
// redacted before it is cut to size (so a cut never leaves half a secret).
func deriveFacts(ev *ahpv1.Event, r *redact.Redactor) []*ahpv1.Fact {
	fact := func(confidence float32, format string, args ...any) *ahpv1.Fact {
		source := factSource(ev.GetType())
		text, _ := r.String(fmt.Sprintf(format, args...))
		if len(text) > maxFactLen {
			text = redact.Truncate(text, maxFactLen-len(ellipsis)) + ellipsis
		}
		return &ahpv1.Fact{Content: text, Source: source, Confidence: confidence}
	}
	tool := ev.GetTool()
	switch ev.GetType() {
	case ahpv1.EventType_EVENT_TYPE_TOOL_ERROR:
		msg := tool.GetError().GetMessage()
		if msg == "" {
			msg = stringField(ev.GetPayload(), "message", "error")
		}
		return []*ahpv1.Fact{fact(0.9, "tool %s failed: %s", orUnknown(tool.GetName()), orUnknown(msg))}
	case ahpv1.EventType_EVENT_TYPE_ERROR:
		return []*ahpv1.Fact{fact(0.8, "error: %s", orUnknown(stringField(ev.GetPayload(), "message", "error")))}
	case ahpv1.EventType_EVENT_TYPE_TOOL_AFTER:
		switch tool.GetKind() {
		case ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, ahpv1.ToolKind_TOOL_KIND_FILE_EDIT:
			if p := pathOf(tool.GetInput().AsMap()); p != "" {
				return []*ahpv1.Fact{fact(0.7, "%s changed %s", orUnknown(tool.GetName()), p)}
			}
		}
	case ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:
		r := ev.GetRunLifecycle()
		status := wireName(r.GetStatus().String(), "RUN_STATUS_")
		switch {
		case r.GetError() != "":
			return []*ahpv1.Fact{fact(0.9, "run %s %s: %s", r.GetRunId(), status, r.GetError())}
		case r.GetResultSummary() != "":
			return []*ahpv1.Fact{fact(0.8, "run %s %s: %s", r.GetRunId(), status, r.GetResultSummary())}
		case r.GetStatus() == ahpv1.RunStatus_RUN_STATUS_COMPLETED || r.GetStatus() == ahpv1.RunStatus_RUN_STATUS_FAILED:
			return []*ahpv1.Fact{fact(0.7, "run %s %s", r.GetRunId(), status)}
		}
	case ahpv1.EventType_EVENT_TYPE_TASK_LIST:
		var out []*ahpv1.Fact
		for _, t := range ev.GetTaskList().GetTasks() {
			switch t.GetStatus() {
			case ahpv1.TaskStatus_TASK_STATUS_COMPLETED:
				out = append(out, fact(0.7, "task %q completed", t.GetTitle()))
			case ahpv1.TaskStatus_TASK_STATUS_FAILED:
				out = append(out, fact(0.8, "task %q failed: %s", t.GetTitle(), orUnknown(t.GetError())))
			}
		}
		return out
	case ahpv1.EventType_EVENT_TYPE_VERIFICATION:
		v := ev.GetVerification()
		out := []*ahpv1.Fact{fact(0.9, "verification of run %s %s", v.GetRunId(), wireName(v.GetStatus().String(), "VERIFICATION_STATUS_"))}
		for _, c := range v.GetChecks() {
			if c.GetStatus() == ahpv1.VerificationStatus_VERIFICATION_STATUS_FAILED {
				out = append(out, fact(0.9, "check %s failed: %s", c.GetSubject(), orUnknown(c.GetMessage())))
			}
		}
		for _, r := range v.GetResidualRisks() {
			out = append(out, fact(0.6, "residual risk: %s", r))
		}
		return out
	case ahpv1.EventType_EVENT_TYPE_SESSION_END:
		if o := ev.GetOutcome(); o != ahpv1.SessionOutcome_SESSION_OUTCOME_UNSPECIFIED {
			return []*ahpv1.Fact{fact(0.5, "session %s ended: %s", SessionID(ev.GetSession().GetId()), wireName(o.String(), "SESSION_OUTCOME_"))}
		}
	}
	return nil
}

// factSources holds "observation:<event type>" for every event type, so the facts of an event
// type share one string instead of each keeping its own (issue 18: less for the collector to mark
// in full session and agent memories).
var factSources = func() map[ahpv1.EventType]string {
	out := map[ahpv1.EventType]string{}
	values := ahpv1.EventType(0).Descriptor().Values()
	for i := range values.Len() {
		t := ahpv1.EventType(values.Get(i).Number())
		out[t] = "observation:" + names.EventTypeName(t)
	}
	return out
}()

func factSource(t ahpv1.EventType) string {
	if s, ok := factSources[t]; ok {
		return s
	}
	return "observation:" + names.EventTypeName(t)
}

func pathOf(input map[string]any) string {
	for _, k := range []string{"path", "file_path", "filePath", "file"} {
		if s, ok := input[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(no detail)"
	}
	return s
}
