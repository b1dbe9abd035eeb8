package approval

import (
	"container/list"
	"sync"
	"time"
)

// MemoryOptions bound a Memory store; zero fields take the defaults.
type MemoryOptions struct {
	// MaxPending caps pending approvals (default 1000).
	MaxPending int
	// MaxPendingPerAgent caps pending approvals of one agent (default 100).
	MaxPendingPerAgent int
	// MaxEntries caps approvals kept, decided ones included (default 10000).
	MaxEntries int
	// MaxBytes caps the memory approvals hold (default 16 MiB).
	MaxBytes int
	// Retain is how long a decided or expired approval stays visible (default 24h); an unused
	// grant stays at least until its ttl ends.
	Retain time.Duration
}

// Memory is the in-process Store, bounded in entries and bytes: when full, the oldest decided
// approvals are forgotten first; pending ones never are (a new one is refused with ErrFull).
type Memory struct {
	opts MemoryOptions

	mu       sync.Mutex
	byID     map[string]*list.Element // of *Approval, oldest first
	order    *list.List
	byKey    map[string]string // action key -> id of its pending or granted approval
	pending  map[string]struct{}
	perAgent map[string]int // pending per agent
	bytes    int
	rev      uint64
	subs     map[int]func(Change)
	nextSub  int
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-process store.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.MaxPending <= 0 {
		opts.MaxPending = 1000
	}
	if opts.MaxPendingPerAgent <= 0 {
		opts.MaxPendingPerAgent = 100
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 10_000
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 16 << 20
	}
	if opts.Retain <= 0 {
		opts.Retain = 24 * time.Hour
	}
	return &Memory{
		opts: opts, byID: map[string]*list.Element{}, order: list.New(), byKey: map[string]string{},
		pending: map[string]struct{}{}, perAgent: map[string]int{}, subs: map[int]func(Change){},
	}
}

// Open implements Store.
func (m *Memory) Open(a Approval, now time.Time) (Approval, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	if id, ok := m.byKey[a.Key]; ok {
		if el, ok := m.byID[id]; ok {
			cur := el.Value.(*Approval)
			if cur.State == StatePending || cur.Granted(now) {
				return cur.Clone(), false, nil
			}
		}
		delete(m.byKey, a.Key)
	}
	if len(m.pending) >= m.opts.MaxPending || m.perAgent[a.Agent] >= m.opts.MaxPendingPerAgent {
		return Approval{}, false, ErrFull
	}
	size := a.size()
	for m.order.Len() >= m.opts.MaxEntries || m.bytes+size > m.opts.MaxBytes {
		if !m.evictOldestDecided() {
			return Approval{}, false, ErrFull
		}
	}
	a = a.Clone()
	a.State = StatePending
	m.rev++
	a.Revision = m.rev
	m.byID[a.ID] = m.order.PushBack(&a)
	m.byKey[a.Key] = a.ID
	m.pending[a.ID] = struct{}{}
	m.perAgent[a.Agent]++
	m.bytes += size
	m.changed(Requested, &a)
	return a.Clone(), true, nil
}

// Get implements Store.
func (m *Memory) Get(id string, now time.Time) (Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	el, ok := m.byID[id]
	if !ok {
		return Approval{}, ErrNotFound
	}
	return el.Value.(*Approval).Clone(), nil
}

// List implements Store.
func (m *Memory) List(f Filter, now time.Time) []Approval {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	out := []Approval{}
	for el := m.order.Back(); el != nil && len(out) < f.limit(); el = el.Prev() {
		if a := el.Value.(*Approval); f.Match(*a) {
			out = append(out, a.Clone())
		}
	}
	return out
}

// Decide implements Store.
func (m *Memory) Decide(id string, d Decision, now time.Time) (Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	el, ok := m.byID[id]
	if !ok {
		return Approval{}, ErrNotFound
	}
	a := el.Value.(*Approval)
	switch a.State {
	case StateApproved, StateDenied:
		return a.Clone(), ErrDecided
	case StateExpired:
		return a.Clone(), ErrExpired
	}
	m.unpend(a)
	a.DecidedAt, a.DecidedBy, a.Comment = now, d.By, d.Comment
	m.bytes += len(d.By) + len(d.Comment)
	if d.Approve {
		a.State = StateApproved
		a.GrantUntil = now.Add(a.TTL)
	} else {
		a.State = StateDenied
		delete(m.byKey, a.Key)
	}
	m.bump(Decided, a)
	return a.Clone(), nil
}

// Consume implements Store.
func (m *Memory) Consume(key, eventKey string, now time.Time) (Approval, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.byKey[key]
	if !ok {
		return Approval{}, false
	}
	a := m.byID[id].Value.(*Approval)
	switch {
	case a.State != StateApproved || !now.Before(a.GrantUntil):
		return Approval{}, false
	case !a.ConsumedAt.IsZero():
		return a.Clone(), a.ConsumedBy == eventKey
	}
	a.ConsumedAt, a.ConsumedBy = now, eventKey
	m.bytes += len(eventKey)
	m.bump(Consumed, a)
	return a.Clone(), true
}

// Expire implements Store.
func (m *Memory) Expire(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
}

// SetAbandoned implements Store.
func (m *Memory) SetAbandoned(id string, abandoned bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byID[id]
	if !ok {
		return
	}
	if a := el.Value.(*Approval); a.State == StatePending && a.Abandoned != abandoned {
		a.Abandoned = abandoned
		m.bump(Abandoned, a)
	}
}

// Subscribe implements Store.
func (m *Memory) Subscribe(fn func(Change)) func() {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.nextSub
	m.nextSub++
	m.subs[id] = fn
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, id)
	}
}

// Len reports the approvals kept and the pending ones.
func (m *Memory) Len() (total, pending int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len(), len(m.pending)
}

// sweep expires pending approvals whose hold ended and forgets decided ones past retention.
func (m *Memory) sweep(now time.Time) {
	for id := range m.pending {
		a := m.byID[id].Value.(*Approval)
		if !now.Before(a.HoldUntil) {
			m.unpend(a)
			a.State, a.DecidedAt = StateExpired, now
			delete(m.byKey, a.Key)
			m.bump(Expired, a)
		}
	}
	for el := m.order.Front(); el != nil; {
		a := el.Value.(*Approval)
		next := el.Next()
		if a.State != StatePending && now.Sub(a.DecidedAt) > m.opts.Retain && !a.Granted(now) {
			m.forget(el)
		} else if a.State == StatePending || now.Sub(a.CreatedAt) <= m.opts.Retain {
			break // creation order: the rest are younger
		}
		el = next
	}
}

// evictOldestDecided forgets the oldest approval that is not pending; false when all are.
func (m *Memory) evictOldestDecided() bool {
	for el := m.order.Front(); el != nil; el = el.Next() {
		if el.Value.(*Approval).State != StatePending {
			m.forget(el)
			return true
		}
	}
	return false
}

func (m *Memory) forget(el *list.Element) {
	a := m.order.Remove(el).(*Approval)
	delete(m.byID, a.ID)
	if m.byKey[a.Key] == a.ID {
		delete(m.byKey, a.Key)
	}
	m.bytes -= a.size()
}

func (m *Memory) unpend(a *Approval) {
	if _, ok := m.pending[a.ID]; !ok {
		return
	}
	delete(m.pending, a.ID)
	if m.perAgent[a.Agent]--; m.perAgent[a.Agent] <= 0 {
		delete(m.perAgent, a.Agent)
	}
}

func (m *Memory) bump(k ChangeKind, a *Approval) {
	m.rev++
	a.Revision = m.rev
	m.changed(k, a)
}

func (m *Memory) changed(k ChangeKind, a *Approval) {
	for _, fn := range m.subs {
		fn(Change{Kind: k, Approval: a.Clone()})
	}
}
