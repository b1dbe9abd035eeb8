package console

import (
	"container/list"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
)

// TrackerOptions bound a Tracker.
type TrackerOptions struct {
	// Items is how many recent items are kept for the decision page and the Live backfill
	// (default 1000).
	Items int
	// ItemBytes bounds the encoded size of the items kept (default 32 MiB); the oldest go first.
	ItemBytes int
	// Sessions is how many recent sessions are kept, least recently active dropped first
	// (default 500).
	Sessions int
	// SessionEvents is how many last events are kept per session (default 10).
	SessionEvents int
	// Buffer is the tracker's Watch buffer in items (default 4096).
	Buffer int
	// Hub is what the tracker subscribes to (nil: it records only what Record is given).
	Hub *hub.Hub
	// IdleAfter is how long after the last Touch (a console request) the tracker keeps its
	// subscription (default DefaultIdleAfter; negative: from the first Touch on, for good). While
	// no console is open the hub has one subscriber fewer, which matters: with any subscriber
	// every decision is redacted and dispatched.
	IdleAfter time.Duration
	// Policy returns the policy in force, to note which policy was in force for each item.
	Policy func() *policy.Policy
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o TrackerOptions) withDefaults() TrackerOptions {
	if o.Items <= 0 {
		o.Items = 1000
	}
	if o.ItemBytes <= 0 {
		o.ItemBytes = 32 << 20
	}
	if o.Sessions <= 0 {
		o.Sessions = 500
	}
	if o.SessionEvents <= 0 {
		o.SessionEvents = 10
	}
	if o.Buffer <= 0 {
		o.Buffer = 4096
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IdleAfter == 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	return o
}

// DefaultIdleAfter is how long the tracker keeps watching after the last console request; the
// page asks the server something at least once a minute while it is open.
const DefaultIdleAfter = 5 * time.Minute

// Tracker remembers recent Watch items and sessions for the console. It is one more subscriber
// of the hub, so it sees items as watchers do (redacted) and costs the decision path nothing
// beyond what any watcher costs; it keeps everything bounded in count and bytes. It watches only
// while consoles are in use (Touch, IdleAfter) and keeps what it recorded in between. A Tracker
// cut off for falling behind subscribes again and counts the gap.
type Tracker struct {
	opts TrackerOptions

	mu       sync.Mutex
	items    []trackedItem // ring, oldest at head
	head, n  int
	bytes    int
	sessions map[string]*list.Element // of *SessionSummary
	order    *list.List               // most recently active first
	policies []PolicyRevision         // newest last, at most maxPolicyRevisions
	gaps     uint64
	started  time.Time
	seen     uint64
	changed  chan struct{} // closed and replaced whenever an item is added (for tests)
	idleFrom time.Time     // when it last stopped watching (zero: never)
	resumed  time.Time     // when it started watching again after that

	lastTouch atomic.Int64 // unix nanoseconds of the last Touch
	watching  atomic.Bool
	runMu     sync.Mutex // serialises starting and stopping the subscription
}

// errIdle ends a subscription that no console has used for IdleAfter.
var errIdle = errors.New("no console request for a while")

const maxPolicyRevisions = 32

// PolicyRevision is a policy the console saw in force, numbered in the order it saw them.
type PolicyRevision struct {
	// Revision counts the policies seen in force by this process, from 1.
	Revision int `json:"revision"`
	// Name and Digest identify the policy.
	Name   string `json:"name"`
	Digest string `json:"digest"`
	// Since is when the console first saw it in force.
	Since time.Time `json:"since"`
}

// trackedItem is one remembered item.
type trackedItem struct {
	it       hub.Item
	size     int
	revision int
}

// SessionSummary is what the console remembers of one session.
type SessionSummary struct {
	ID        string        `json:"id"`
	Agent     string        `json:"agent,omitempty"`
	FirstSeen time.Time     `json:"first_seen"`
	LastSeen  time.Time     `json:"last_seen"`
	Events    uint64        `json:"events"`
	Decisions uint64        `json:"decisions"`
	Denies    uint64        `json:"denies"`
	ToolCalls uint64        `json:"tool_calls"`
	Errors    uint64        `json:"errors"`
	Synthetic uint64        `json:"synthetic"`
	Last      []SessionItem `json:"last_events"` // newest first
}

// SessionItem is one of a session's last events.
type SessionItem struct {
	Time       time.Time `json:"time"`
	Type       string    `json:"type"`
	Tool       string    `json:"tool,omitempty"`
	Verdict    string    `json:"verdict,omitempty"`
	DecisionID string    `json:"decision_id,omitempty"`
}

// NewTracker returns an empty tracker; Run feeds it.
func NewTracker(opts TrackerOptions) *Tracker {
	opts = opts.withDefaults()
	return &Tracker{
		opts:     opts,
		items:    make([]trackedItem, opts.Items),
		sessions: map[string]*list.Element{},
		order:    list.New(),
		started:  opts.Now(),
		changed:  make(chan struct{}),
	}
}

// Touch records that a console is in use: the tracker subscribes to the hub, if it is not
// subscribed already, before Touch returns, so that what is published after it is recorded.
func (t *Tracker) Touch() {
	t.lastTouch.Store(t.opts.Now().UnixNano())
	if t.opts.Hub == nil || t.watching.Load() {
		return
	}
	t.runMu.Lock()
	defer t.runMu.Unlock()
	if t.watching.Load() {
		return
	}
	t.watching.Store(true)
	t.mu.Lock()
	if !t.idleFrom.IsZero() {
		t.resumed = t.opts.Now()
	}
	t.mu.Unlock()
	go t.run(t.opts.Hub.Subscribe(hub.Filter{}, t.opts.Buffer))
}

// run records the subscription's items; it subscribes again after a cut-off and ends when the
// hub closes or no console was used for IdleAfter.
func (t *Tracker) run(sub *hub.Subscription) {
	for {
		err := t.consume(sub)
		sub.Close()
		t.runMu.Lock()
		switch {
		case errors.Is(err, errIdle) && !t.idle():
			// Touched just now: keep watching.
		case errors.Is(err, hub.ErrSlowSubscriber), errors.Is(err, hub.ErrOverloaded):
			t.mu.Lock()
			t.gaps++
			t.mu.Unlock()
		default:
			t.watching.Store(false)
			t.mu.Lock()
			t.idleFrom, t.resumed = t.opts.Now(), time.Time{}
			t.mu.Unlock()
			t.runMu.Unlock()
			return
		}
		sub = t.opts.Hub.Subscribe(hub.Filter{}, t.opts.Buffer)
		t.runMu.Unlock()
	}
}

// idle reports whether no console was used for IdleAfter.
func (t *Tracker) idle() bool {
	if t.opts.IdleAfter < 0 {
		return false
	}
	return t.opts.Now().UnixNano()-t.lastTouch.Load() > int64(t.opts.IdleAfter)
}

// consume records the subscription's items until it ends, returning why, or until the tracker
// is idle (errIdle).
func (t *Tracker) consume(sub *hub.Subscription) error {
	var idleCheck <-chan time.Time
	if t.opts.IdleAfter > 0 {
		tick := time.NewTicker(min(max(t.opts.IdleAfter/4, 10*time.Millisecond), 30*time.Second))
		defer tick.Stop()
		idleCheck = tick.C
	}
	for {
		select {
		case <-sub.Ready():
			t.drain(sub)
		case <-sub.Ended():
			t.drain(sub)
			return sub.Err()
		case <-idleCheck:
			if t.idle() {
				return errIdle
			}
		}
	}
}

func (t *Tracker) drain(sub *hub.Subscription) {
	for {
		select {
		case it := <-sub.Items():
			t.Record(it)
		default:
			return
		}
	}
}

// Record remembers one item (Run calls it for every item of the hub).
func (t *Tracker) Record(it hub.Item) {
	size := proto.Size(it.Event) + proto.Size(it.Decision) + 64
	var p *policy.Policy
	if t.opts.Policy != nil {
		p = t.opts.Policy()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen++
	rev := t.notePolicyLocked(p)
	t.addItemLocked(trackedItem{it: it, size: size, revision: rev})
	t.addSessionLocked(it)
	close(t.changed)
	t.changed = make(chan struct{})
}

// notePolicyLocked returns the revision number of p, recording it when it is new.
func (t *Tracker) notePolicyLocked(p *policy.Policy) int {
	if p == nil {
		return 0
	}
	if n := len(t.policies); n > 0 && t.policies[n-1].Digest == p.Digest() {
		return t.policies[n-1].Revision
	}
	rev := 1
	if n := len(t.policies); n > 0 {
		rev = t.policies[n-1].Revision + 1
	}
	t.policies = append(t.policies, PolicyRevision{Revision: rev, Name: p.Name(), Digest: p.Digest(), Since: t.opts.Now()})
	if len(t.policies) > maxPolicyRevisions {
		t.policies = append(t.policies[:0], t.policies[1:]...)
	}
	return rev
}

// PolicyRevision returns the revision of p (recording it when it is new).
func (t *Tracker) PolicyRevision(p *policy.Policy) PolicyRevision {
	t.mu.Lock()
	defer t.mu.Unlock()
	rev := t.notePolicyLocked(p)
	return t.revisionLocked(rev)
}

// PolicyHistory returns the policies seen in force, oldest first.
func (t *Tracker) PolicyHistory() []PolicyRevision {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]PolicyRevision(nil), t.policies...)
}

func (t *Tracker) revisionLocked(rev int) PolicyRevision {
	for _, pr := range t.policies {
		if pr.Revision == rev {
			return pr
		}
	}
	return PolicyRevision{Revision: rev}
}

func (t *Tracker) addItemLocked(ti trackedItem) {
	cap := len(t.items)
	for t.n > 0 && (t.n == cap || t.bytes+ti.size > t.opts.ItemBytes) {
		t.bytes -= t.items[t.head].size
		t.items[t.head] = trackedItem{}
		t.head = (t.head + 1) % cap
		t.n--
	}
	t.items[(t.head+t.n)%cap] = ti
	t.n++
	t.bytes += ti.size
}

func (t *Tracker) addSessionLocked(it hub.Item) {
	ev := it.Event
	id := ev.GetSession().GetId()
	if id == "" {
		return
	}
	el, ok := t.sessions[id]
	if ok {
		t.order.MoveToFront(el)
	} else {
		el = t.order.PushFront(&SessionSummary{ID: id, FirstSeen: it.Time})
		t.sessions[id] = el
		if t.order.Len() > t.opts.Sessions {
			oldest := t.order.Back()
			t.order.Remove(oldest)
			delete(t.sessions, oldest.Value.(*SessionSummary).ID)
		}
	}
	s := el.Value.(*SessionSummary)
	if agent := agentOf(ev); agent != "" {
		s.Agent = agent
	}
	s.LastSeen = it.Time
	s.Events++
	switch ev.GetType() {
	case ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE:
		s.ToolCalls++
	case ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, ahpv1.EventType_EVENT_TYPE_ERROR:
		s.Errors++
	}
	si := SessionItem{Time: it.Time, Type: names.EventTypeName(ev.GetType()), Tool: ev.GetTool().GetName()}
	if d := it.Decision; d != nil {
		s.Decisions++
		if d.GetVerdict() == ahpv1.Verdict_VERDICT_DENY {
			s.Denies++
		}
		if d.GetSynthetic() {
			s.Synthetic++
		}
		si.Verdict = verdictName(d.GetVerdict())
		si.DecisionID = d.GetDecisionId()
	}
	s.Last = append([]SessionItem{si}, s.Last[:min(len(s.Last), t.opts.SessionEvents-1)]...)
}

func agentOf(ev *ahpv1.Event) string {
	if id := ev.GetSession().GetAgent().GetId(); id != "" {
		return id
	}
	return ev.GetHarness().GetAgentId()
}

// Recent returns up to n of the newest items, newest first, with the policy revision in force
// when each was recorded.
func (t *Tracker) Recent(n int) ([]hub.Item, []PolicyRevision) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n = min(n, t.n)
	items := make([]hub.Item, 0, n)
	revs := make([]PolicyRevision, 0, n)
	for i := t.n - 1; i >= t.n-n; i-- {
		ti := t.items[(t.head+i)%len(t.items)]
		items = append(items, ti.it)
		revs = append(revs, t.revisionLocked(ti.revision))
	}
	return items, revs
}

// Decision finds a remembered decision by id.
func (t *Tracker) Decision(id string) (hub.Item, PolicyRevision, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := t.n - 1; i >= 0; i-- {
		ti := t.items[(t.head+i)%len(t.items)]
		if ti.it.Decision != nil && ti.it.Decision.GetDecisionId() == id {
			return ti.it, t.revisionLocked(ti.revision), true
		}
	}
	return hub.Item{}, PolicyRevision{}, false
}

// Sessions returns the remembered sessions, most recently active first (copies).
func (t *Tracker) Sessions() []SessionSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]SessionSummary, 0, t.order.Len())
	for el := t.order.Front(); el != nil; el = el.Next() {
		s := *el.Value.(*SessionSummary)
		s.Last = append([]SessionItem(nil), s.Last...)
		out = append(out, s)
	}
	return out
}

// TrackerStats describe what the tracker has seen.
type TrackerStats struct {
	// Since is when the tracker started.
	Since time.Time `json:"since"`
	// Seen counts items recorded; Kept is how many are remembered now.
	Seen uint64 `json:"seen"`
	Kept int    `json:"kept"`
	// Gaps counts the times it fell behind and was cut off (items published meanwhile are missing).
	Gaps uint64 `json:"gaps"`
	// Watching is true while it is subscribed. It stops when no console was in use for a while:
	// Paused is the last such time, when nothing was recorded (To is nil while it lasts).
	Watching bool    `json:"watching"`
	Paused   *Period `json:"paused,omitempty"`
}

// Period is a span of time; a nil To means it goes on.
type Period struct {
	From time.Time  `json:"from"`
	To   *time.Time `json:"to,omitempty"`
}

// Stats returns the tracker's counters.
func (t *Tracker) Stats() TrackerStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := TrackerStats{Since: t.started, Seen: t.seen, Kept: t.n, Gaps: t.gaps, Watching: t.watching.Load()}
	if !t.idleFrom.IsZero() {
		st.Paused = &Period{From: t.idleFrom}
		if !t.resumed.IsZero() {
			to := t.resumed
			st.Paused.To = &to
		}
	}
	return st
}

// Changed is closed when the next item is recorded (for tests that wait for one).
func (t *Tracker) Changed() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed
}

func verdictName(v ahpv1.Verdict) string { return names.EnumWireName(v) }
