package approval

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
)

// Result says how a call that needed approval ends.
type Result uint8

const (
	// Granted: approved; the grant was consumed by this call.
	Granted Result = iota + 1
	// Denied: a person denied.
	Denied
	// TimedOut: nobody decided before the hold ended.
	TimedOut
	// Pending: the caller cannot wait (no time left before its deadline, or too many held
	// calls); the approval stays open and a retry of the same action after approval is let
	// through once.
	Pending
	// Used: approved, but another call of the same action used the one-time grant first.
	Used
	// Closing: the server is shutting down.
	Closing
)

var resultNames = [...]string{"", "granted", "denied", "timed_out", "pending", "used", "closing"}

// String names the result.
func (r Result) String() string {
	if int(r) < len(resultNames) {
		return resultNames[r]
	}
	return "unknown"
}

// Outcome is how a call that needed approval ends, and the approval as it then is.
type Outcome struct {
	Result   Result
	Approval Approval
}

// Config wires a Manager; Store is required, the rest have defaults.
type Config struct {
	// Store keeps the approvals.
	Store Store
	// MaxHeld caps calls held at once (default 4096); a call over the cap is answered Pending.
	MaxHeld int
	// MaxHeldBytes caps the encoded size of the events of held calls (default 64 MiB).
	MaxHeldBytes int
	// Margin is how long before the caller's deadline a held call is answered Pending, so the
	// answer arrives in time (default 500ms).
	Margin time.Duration
	// MinHold is the least a caller's deadline must leave for holding (after Margin; default
	// 2s): a caller with less cannot wait for a person, and is answered Pending at once instead
	// of being held until just before its deadline (where, on a busy machine, its answer could
	// arrive too late and the caller's own failure policy would decide).
	MinHold time.Duration
	// Summarize gives the input summary approvers see; it must redact secrets (default: none).
	Summarize func(*ahpv1.Event) string
	// Principal names the authenticated caller of ctx ("" when none).
	Principal func(context.Context) string
	// Now is the clock (default time.Now); NewID makes approval ids (required).
	Now   func() time.Time
	NewID func() string
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
}

// Manager runs the hold flow over a Store. It is safe for concurrent use.
type Manager struct {
	cfg Config

	mu        sync.Mutex
	waiters   map[string]map[*waiter]struct{} // by approval id
	held      int
	heldBytes int
	watchers  map[*Watch]struct{}
	closed    bool
	closing   chan struct{}

	unsubscribe func()
}

type waiter struct {
	ch   chan Approval // 1: the latest decided state
	size int           // the held event's encoded size
}

// NewManager returns a manager over cfg.Store.
func NewManager(cfg Config) *Manager {
	if cfg.Store == nil || cfg.NewID == nil {
		panic("approval: Config.Store and Config.NewID are required")
	}
	if cfg.MaxHeld <= 0 {
		cfg.MaxHeld = 4096
	}
	if cfg.MaxHeldBytes <= 0 {
		cfg.MaxHeldBytes = 64 << 20
	}
	if cfg.MinHold <= 0 {
		cfg.MinHold = 2 * time.Second
	}
	if cfg.Margin <= 0 {
		cfg.Margin = 500 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Principal == nil {
		cfg.Principal = func(context.Context) string { return "" }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, waiters: map[string]map[*waiter]struct{}{}, watchers: map[*Watch]struct{}{}, closing: make(chan struct{})}
	m.unsubscribe = cfg.Store.Subscribe(m.changed)
	return m
}

// Store returns the store the manager runs on.
func (m *Manager) Store() Store { return m.cfg.Store }

// Run expires approvals whose hold ended, every interval, until ctx ends; held calls expire on
// their own, Run is for approvals nobody waits on.
func (m *Manager) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.closing:
			return
		case <-t.C:
			m.cfg.Store.Expire(m.cfg.Now())
		}
	}
}

// Close answers every held call with Closing and makes later calls answer Closing at once;
// approvals stay in the store. It ends every Watch.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.closing)
	for w := range m.watchers {
		w.end(ErrClosed)
	}
	m.mu.Unlock()
	// Outside m.mu: the store calls changed, which takes m.mu, with its own lock held.
	m.unsubscribe()
}

// Held reports the calls held now.
func (m *Manager) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// changed is the store's subscriber: it wakes held calls and feeds watchers.
func (m *Manager) changed(c Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.Approval.State != StatePending {
		for w := range m.waiters[c.Approval.ID] {
			select {
			case <-w.ch: // keep only the latest
			default:
			}
			w.ch <- c.Approval
		}
	}
	for w := range m.watchers {
		w.send(c)
	}
}

// Resolve is the hold flow for one call whose policy result asks for approval (see the package
// documentation). It returns ErrFull when no approval can be opened, and ctx's error when the
// caller went away while held. holdCtx (see WithHoldContext) bounds the wait instead of ctx.
func (m *Manager) Resolve(ctx context.Context, ev *ahpv1.Event, pa *policy.Approval) (Outcome, error) {
	select {
	case <-m.closing:
		return Outcome{Result: Closing}, nil
	default:
	}
	principal := m.cfg.Principal(ctx)
	key := ActionKey(principal, ev, pa.RuleIDs)
	eventKey := ev.GetSource() + "\x00" + ev.GetId()
	st := m.cfg.Store

	var a Approval
	for attempt := 0; ; attempt++ {
		now := m.cfg.Now()
		if g, ok := st.Consume(key, eventKey, now); ok {
			return Outcome{Result: Granted, Approval: g}, nil
		}
		var created bool
		var err error
		a, created, err = st.Open(m.newApproval(principal, key, ev, pa, now), now)
		if err != nil {
			return Outcome{}, err
		}
		if created || a.State == StatePending || attempt > 0 {
			break
		}
		// Approved between Consume and Open, and the grant went to another call: ask afresh.
	}
	if a.State != StatePending {
		return m.ended(a, key, eventKey), nil
	}

	hold := holdContext(ctx)
	deadline := a.HoldUntil
	callerBound := false
	if d, ok := hold.Deadline(); ok && d.Add(-m.cfg.Margin).Before(deadline) {
		deadline, callerBound = d.Add(-m.cfg.Margin), true
	}
	wait := time.Until(deadline)
	if callerBound && wait < m.cfg.MinHold {
		return Outcome{Result: Pending, Approval: a}, nil
	}
	w, refused := m.hold(a.ID, proto.Size(ev))
	if w == nil {
		return Outcome{Result: refused, Approval: a}, nil
	}
	defer m.release(a.ID, w)
	if a.Abandoned {
		st.SetAbandoned(a.ID, false)
	}
	// A decision made between Open and hold has no waiter to wake: look once more.
	if cur, err := st.Get(a.ID, m.cfg.Now()); err == nil && cur.State != StatePending {
		return m.ended(cur, key, eventKey), nil
	}
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	select {
	case cur := <-w.ch:
		return m.ended(cur, key, eventKey), nil
	case <-timer.C:
		if callerBound {
			return Outcome{Result: Pending, Approval: a}, nil
		}
		st.Expire(maxTime(m.cfg.Now(), a.HoldUntil))
		cur, err := st.Get(a.ID, m.cfg.Now())
		if err != nil || cur.State == StatePending {
			cur = a
			cur.State = StateExpired
		}
		return m.ended(cur, key, eventKey), nil
	case <-hold.Done():
		if m.lastWaiter(a.ID, w) {
			st.SetAbandoned(a.ID, true)
		}
		return Outcome{Approval: a}, hold.Err()
	case <-m.closing:
		return Outcome{Result: Closing, Approval: a}, nil
	}
}

// ended turns a decided or expired approval into the outcome of one call.
func (m *Manager) ended(a Approval, key, eventKey string) Outcome {
	switch a.State {
	case StateApproved:
		if g, ok := m.cfg.Store.Consume(key, eventKey, m.cfg.Now()); ok {
			return Outcome{Result: Granted, Approval: g}
		}
		return Outcome{Result: Used, Approval: a}
	case StateDenied:
		return Outcome{Result: Denied, Approval: a}
	}
	return Outcome{Result: TimedOut, Approval: a}
}

// hold registers a waiter unless the held-calls caps are reached.
// hold registers a waiter for approval id. Without one, refused says what the call is answered
// instead: Closing once the manager is closing (a call arriving during shutdown gets the
// shutdown answer, as held ones do), Pending when the held-calls caps are reached.
func (m *Manager) hold(id string, size int) (w *waiter, refused Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, Closing
	}
	if m.held >= m.cfg.MaxHeld || m.heldBytes+size > m.cfg.MaxHeldBytes {
		return nil, Pending
	}
	w = &waiter{ch: make(chan Approval, 1), size: size}
	if m.waiters[id] == nil {
		m.waiters[id] = map[*waiter]struct{}{}
	}
	m.waiters[id][w] = struct{}{}
	m.held++
	m.heldBytes += size
	return w, 0
}

func (m *Manager) release(id string, w *waiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ws := m.waiters[id]
	if _, ok := ws[w]; !ok {
		return
	}
	delete(ws, w)
	if len(ws) == 0 {
		delete(m.waiters, id)
	}
	m.held--
	m.heldBytes -= w.size
}

// lastWaiter removes w and reports whether no call is held on id any more.
func (m *Manager) lastWaiter(id string, w *waiter) bool {
	m.release(id, w)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters[id]) == 0
}

func (m *Manager) newApproval(principal, key string, ev *ahpv1.Event, pa *policy.Approval, now time.Time) Approval {
	a := Approval{
		ID:            m.cfg.NewID(),
		Key:           key,
		RuleIDs:       pa.RuleIDs,
		Kind:          "ask",
		Target:        cut(pa.Target, maxField),
		Reason:        cut(pa.Reason, MaxReason),
		Principal:     principal,
		Source:        cut(ev.GetSource(), maxField),
		Agent:         cut(agentOf(ev), maxField),
		Session:       cut(ev.GetSession().GetId(), maxField),
		EventID:       cut(ev.GetId(), maxField),
		EventType:     names.EventTypeName(ev.GetType()),
		Tool:          cut(ev.GetTool().GetName(), maxField),
		Approvers:     pa.Approvers,
		Notifiers:     pa.Notifiers,
		OnTimeoutDeny: pa.OnTimeoutDeny,
		TTL:           pa.TTL,
		CreatedAt:     now,
		HoldUntil:     now.Add(pa.Hold),
	}
	if pa.Kind == ahpv1.EffectKind_EFFECT_KIND_ESCALATE {
		a.Kind = "escalate"
	}
	if m.cfg.Summarize != nil {
		a.Input = cut(m.cfg.Summarize(ev), MaxInput)
	}
	return a
}

// Decide records a person's decision. by and groups come from authentication, never from the
// request: by must be listed by the approval's rules (ErrNotApprover). The first decision stands
// (ErrDecided); an expired approval cannot be decided (ErrExpired).
func (m *Manager) Decide(id string, approve bool, by string, groups []string, comment string) (Approval, error) {
	if len(comment) > MaxComment || !utf8.ValidString(comment) {
		return Approval{}, ErrComment
	}
	now := m.cfg.Now()
	a, err := m.cfg.Store.Get(id, now)
	if err != nil {
		return Approval{}, err
	}
	if !policy.MayDecide(a.Approvers, by, groups) {
		return Approval{}, ErrNotApprover
	}
	return m.cfg.Store.Decide(id, Decision{Approve: approve, By: by, Comment: comment}, now)
}

// Get returns one approval.
func (m *Manager) Get(id string) (Approval, error) { return m.cfg.Store.Get(id, m.cfg.Now()) }

// List returns the approvals that pass f, newest first.
func (m *Manager) List(f Filter) []Approval { return m.cfg.Store.List(f, m.cfg.Now()) }

// ErrWatchBehind ends a Watch whose reader fell a whole buffer behind.
var ErrWatchBehind = errors.New("approval watcher fell behind and was cut off")

// Watch is a live feed of approval changes with a bounded buffer.
type Watch struct {
	m    *Manager
	ch   chan Change
	done chan struct{}
	err  error
}

// Watch starts a feed of every change from now on; buffer bounds the changes queued (an
// approval's size is bounded, so this bounds bytes too). Stop it with Stop.
func (m *Manager) Watch(buffer int) (*Watch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	w := &Watch{m: m, ch: make(chan Change, max(buffer, 1)), done: make(chan struct{})}
	m.watchers[w] = struct{}{}
	return w, nil
}

// C delivers the changes.
func (w *Watch) C() <-chan Change { return w.ch }

// Done is closed when the feed ends; Err then says why.
func (w *Watch) Done() <-chan struct{} { return w.done }

// Err is why the feed ended (nil while it runs or after Stop).
func (w *Watch) Err() error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	return w.err
}

// Stop ends the feed.
func (w *Watch) Stop() {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.end(nil)
}

// send and end run with m.mu held.
func (w *Watch) send(c Change) {
	select {
	case w.ch <- c:
	default:
		w.end(ErrWatchBehind)
	}
}

func (w *Watch) end(err error) {
	if _, ok := w.m.watchers[w]; !ok {
		return
	}
	delete(w.m.watchers, w)
	w.err = err
	close(w.done)
}

type holdKey struct{}

// WithHoldContext returns ctx carrying base as the context a held call waits under: the server
// bounds each call with its own timeout (ctx), but a hold may last as long as the caller's own
// deadline and connection (base) allow.
func WithHoldContext(ctx, base context.Context) context.Context {
	return context.WithValue(ctx, holdKey{}, base)
}

func holdContext(ctx context.Context) context.Context {
	if base, ok := ctx.Value(holdKey{}).(context.Context); ok {
		return base
	}
	return ctx
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
