// Package hub fans decisions and observed events out to live watchers.
//
// Publishing never blocks the decision path: items go into a bounded queue drained by one dispatcher
// goroutine, which hands each item to every matching subscriber's own bounded buffer. A subscriber
// whose buffer is full is cut off with ErrSlowSubscriber, so a slow watcher can never slow an
// intercept, and a watcher never silently misses an item: it either sees every matching item in
// order or is told it was cut off.
package hub

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// ErrSlowSubscriber ends a subscription whose buffer overflowed.
var ErrSlowSubscriber = errors.New("watcher too slow: its buffer overflowed and it was cut off; reconnect to resume")

// ErrOverloaded ends every subscription when the hub's own queue overflowed.
var ErrOverloaded = errors.New("watch hub overloaded: items could not be delivered; reconnect to resume")

// ErrClosed ends subscriptions when the hub shuts down.
var ErrClosed = errors.New("watch hub closed")

// Item is one published thing: an observed event, or an event with its decision.
type Item struct {
	// Event is the event (always set).
	Event *ahpv1.Event
	// Decision is set for decisions and nil for observations.
	Decision *ahpv1.Decision
	// Time is when the item was published.
	Time time.Time
}

// Filter selects items; zero fields match everything.
type Filter struct {
	// SessionID keeps only items of this session.
	SessionID string
	// EventTypes keeps only these event types.
	EventTypes []ahpv1.EventType
	// ToolKinds keeps only events whose tool has one of these kinds.
	ToolKinds []ahpv1.ToolKind
	// DecisionsOnly drops observations.
	DecisionsOnly bool
}

// Match reports whether the filter keeps it.
func (f Filter) Match(it Item) bool {
	if f.DecisionsOnly && it.Decision == nil {
		return false
	}
	ev := it.Event
	if f.SessionID != "" && ev.GetSession().GetId() != f.SessionID {
		return false
	}
	if len(f.EventTypes) > 0 && !contains(f.EventTypes, ev.GetType()) {
		return false
	}
	if len(f.ToolKinds) > 0 && !contains(f.ToolKinds, ev.GetTool().GetKind()) {
		return false
	}
	return true
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Publisher is what the decision core needs; the in-process Hub implements it, and a clustered
// implementation can too.
type Publisher interface {
	// Publish hands an item to watchers without blocking.
	Publish(Item)
}

// Stats are counters for metrics.
type Stats struct {
	// Subscribers is the number of live subscriptions.
	Subscribers int
	// Published counts items accepted for dispatch.
	Published uint64
	// CutOff counts subscriptions ended because they were too slow.
	CutOff uint64
	// Overflows counts items the hub queue could not take.
	Overflows uint64
}

// Option configures a Hub.
type Option func(*Hub)

// WithTransform rewrites every item once before any watcher sees it — used to redact secrets.
// It runs on the dispatcher goroutine, off the decision path, and only for items some watcher
// wants.
func WithTransform(f func(Item) Item) Option { return func(h *Hub) { h.transform = f } }

// Hub is the in-process fan-out.
type Hub struct {
	transform func(Item) Item
	queue     chan Item
	done      chan struct{}
	wg        sync.WaitGroup

	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// active mirrors len(subs) so Publish can skip all work when nobody watches.
	active atomic.Int64

	published, cutOff, overflows atomic.Uint64
	closeOnce                    sync.Once
}

// New starts a hub whose dispatch queue holds queueSize items (minimum 1).
func New(queueSize int, opts ...Option) *Hub {
	if queueSize < 1 {
		queueSize = 1
	}
	h := &Hub{queue: make(chan Item, queueSize), done: make(chan struct{}), subs: make(map[*Subscription]struct{})}
	for _, o := range opts {
		o(h)
	}
	h.wg.Add(1)
	go h.dispatch()
	return h
}

// Publish queues an item for watchers. With no watchers it costs one atomic load.
func (h *Hub) Publish(it Item) {
	if h.active.Load() == 0 {
		return
	}
	select {
	case h.queue <- it:
		h.published.Add(1)
	default:
		// Watchers would miss this item: end them all explicitly instead of losing it silently.
		h.overflows.Add(1)
		h.endAll(ErrOverloaded)
	}
}

func (h *Hub) dispatch() {
	defer h.wg.Done()
	for {
		select {
		case <-h.done:
			return
		case it := <-h.queue:
			h.deliver(it)
		}
	}
}

func (h *Hub) deliver(it Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	transformed := h.transform == nil
	for s := range h.subs {
		if !s.filter.Match(it) {
			continue
		}
		if !transformed {
			it, transformed = h.transform(it), true
		}
		select {
		case s.ch <- it:
		default:
			h.cutOff.Add(1)
			h.removeLocked(s, ErrSlowSubscriber)
		}
	}
}

// Subscribe registers a watcher with a buffer of bufferSize items (minimum 1).
func (h *Hub) Subscribe(f Filter, bufferSize int) *Subscription {
	if bufferSize < 1 {
		bufferSize = 1
	}
	s := &Subscription{hub: h, filter: f, ch: make(chan Item, bufferSize), ended: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.done:
		s.end(ErrClosed)
		return s
	default:
	}
	h.subs[s] = struct{}{}
	h.active.Add(1)
	return s
}

func (h *Hub) removeLocked(s *Subscription, err error) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	h.active.Add(-1)
	s.end(err)
}

func (h *Hub) endAll(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		h.removeLocked(s, err)
	}
}

// Stats returns the current counters.
func (h *Hub) Stats() Stats {
	return Stats{
		Subscribers: int(h.active.Load()),
		Published:   h.published.Load(),
		CutOff:      h.cutOff.Load(),
		Overflows:   h.overflows.Load(),
	}
}

// Close stops dispatching and ends every subscription with ErrClosed.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		close(h.done)
		h.wg.Wait()
		h.endAll(ErrClosed)
	})
}

// Subscription is one watcher's view of the hub.
type Subscription struct {
	hub    *Hub
	filter Filter
	ch     chan Item
	ended  chan struct{}
	err    error // written once before ended is closed
}

// Items delivers matching items in publish order. Items already buffered when the subscription
// ends can still be read; check Ended to learn that it ended.
func (s *Subscription) Items() <-chan Item { return s.ch }

// Ended is closed when the subscription ends; Err then says why.
func (s *Subscription) Ended() <-chan struct{} { return s.ended }

// Err is why the subscription ended (nil while live or after Close).
func (s *Subscription) Err() error {
	select {
	case <-s.ended:
		return s.err
	default:
		return nil
	}
}

// Close unsubscribes; it is safe to call more than once.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.removeLocked(s, nil)
}

func (s *Subscription) end(err error) {
	s.err = err
	close(s.ended)
}
