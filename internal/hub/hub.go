// Package hub fans decisions and observed events out to live watchers.
//
// Publishing never blocks the decision path: items go into a bounded queue drained by one dispatcher
// goroutine, which hands items to every matching subscriber's own buffer, bounded in items and
// (WithBufferBytes) in bytes. A subscriber whose buffer is full is cut off with ErrSlowSubscriber
// and its buffered items are dropped at once, so a slow watcher can never slow an intercept nor
// pin memory, and a watcher never silently misses an item: it either sees every matching item in
// order or is told it was cut off.
//
// The dispatcher delivers in batches. When it gets an item it waits a short window
// (DefaultBatchWindow, see WithBatchWindow) and then takes everything queued meanwhile, up to
// MaxBatch items, as one batch; only a full batch already queued is delivered without the wait.
// The window exists because the core publishes a decision before the intercept handler has
// written the answer: feeding a hundred watchers at that very moment makes their stream writes
// compete with the answer for the CPUs. Waiting about a millisecond lets the answer go first, and
// everything published meanwhile reaches each watcher together: a subscriber that waits on Ready
// is woken once per batch, not once per item. Order per subscriber, filters and the cut-off are
// the same as for single items; each item is transformed once, and values derived from it can be
// shared by all its subscribers (Item.Shared). A subscriber that lets items gather before it
// reads them learns from Subscription.Filling when its buffer is half full.
//
// OnSubscribers lets a publisher that feeds the hub from elsewhere (the cluster's Watch fan-out)
// do that only while someone watches: it hears of every Subscribe before it returns and of the
// last subscriber going.
package hub

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
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
	// EventBytes is the size of Event's protobuf encoding when the publisher knows it already
	// (the decision core does: it encodes the event for its idempotency key); 0 when unknown.
	// A consumer that bounds items in bytes uses it instead of measuring the event again.
	EventBytes int

	// shared is set by the dispatcher: one per published item, the same for every subscriber.
	shared *shared
	// size estimates the item's bytes for WithBufferBytes; set by the dispatcher when a limit is.
	size int
}

// shared holds values derived from one published item for all of its subscribers (see Shared).
type shared struct {
	mu     sync.Mutex
	values []keyedValue // usually one
}

type keyedValue struct{ key, value any }

// Shared returns build(it), computed once per published item no matter how many subscribers
// receive it: the first caller builds, later callers — on any goroutine — get the same value. key
// tells apart different kinds of derived values (use an unexported type, as for context keys; it
// must be comparable). The value is shared by every subscriber of the item, so nobody may modify it
// after build returns. Items that did not come through a Hub have nothing to share: build runs on
// every call.
//
// Watch uses it to build one response per item instead of one per subscriber.
func (it Item) Shared(key any, build func(Item) any) any {
	sh := it.shared
	if sh == nil {
		return build(it)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, kv := range sh.values {
		if kv.key == key {
			return kv.value
		}
	}
	v := build(it)
	sh.values = append(sh.values, keyedValue{key, v})
	return v
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
	// Batches counts deliveries; each hands up to MaxBatch items to the subscribers together and
	// wakes each matching subscriber at most once. Published/Batches is the mean batch size.
	Batches uint64
}

// DefaultBatchWindow is how long the dispatcher waits after the first item of a batch before it
// delivers, gathering what else is published meanwhile into the same batch (see the package
// documentation). A watcher therefore sees an item about this much later than without it (timers
// may fire somewhat late on a busy machine); the decision path is not slowed by it.
const DefaultBatchWindow = time.Millisecond

// MaxBatch bounds the items of one batch, so that a backlog is delivered in steps and one
// subscriber's buffer fills up by at most this much at a time. Subscriber buffers should be
// larger than a batch, or a burst can cut off a subscriber that reads promptly.
const MaxBatch = 256

// Option configures a Hub.
type Option func(*Hub)

// WithTransform rewrites every item once before any watcher sees it — used to redact secrets.
// It runs on the dispatcher goroutine, off the decision path, and only for items some watcher
// wants.
func WithTransform(f func(Item) Item) Option { return func(h *Hub) { h.transform = f } }

// WithBatchWindow sets how long the dispatcher waits after the first item of a batch before it
// delivers (default DefaultBatchWindow). Zero or less delivers as soon as the dispatcher gets to
// an item; items that queued up meanwhile are still delivered together.
func WithBatchWindow(d time.Duration) Option { return func(h *Hub) { h.window = max(d, 0) } }

// DefaultBufferBytes is the byte limit of a subscriber's buffer unless WithBufferBytes sets another.
const DefaultBufferBytes = 64 << 20

// WithBufferBytes bounds each subscriber's buffer in bytes as well as in items (default
// DefaultBufferBytes; zero or less: items only). An item's size is estimated once, as the encoded
// size of its event and decision. A subscriber whose buffered items would exceed the limit is cut
// off like one whose buffer is full; an item larger than the limit still reaches a subscriber with
// nothing buffered, so a buffer holds at most the limit or one item.
func WithBufferBytes(n int) Option { return func(h *Hub) { h.maxBytes = max(n, 0) } }

// Hub is the in-process fan-out.
type Hub struct {
	transform func(Item) Item
	window    time.Duration
	maxBytes  int
	queue     chan Item
	done      chan struct{}
	wg        sync.WaitGroup

	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// active mirrors len(subs) so Publish can skip all work when nobody watches.
	active atomic.Int64
	// onSubscribers is told of subscribers coming and the last one going (OnSubscribers).
	onSubscribers atomic.Pointer[func(int)]
	// prepared[i] is batch item i as subscribers get it (transformed, with its shared values),
	// made when the first subscriber wants it; dispatcher-only, guarded by mu.
	prepared   []Item
	isPrepared []bool

	published, cutOff, overflows, batches atomic.Uint64
	closeOnce                             sync.Once
}

// New starts a hub whose dispatch queue holds queueSize items (minimum 1).
func New(queueSize int, opts ...Option) *Hub {
	if queueSize < 1 {
		queueSize = 1
	}
	h := &Hub{
		window:   DefaultBatchWindow,
		maxBytes: DefaultBufferBytes,
		queue:    make(chan Item, queueSize),
		done:     make(chan struct{}),
		subs:     make(map[*Subscription]struct{}),
		// A batch never holds more than the queue did.
		prepared:   make([]Item, min(queueSize, MaxBatch)),
		isPrepared: make([]bool, min(queueSize, MaxBatch)),
	}
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

// dispatch delivers queued items in batches until Close, then delivers what was queued before
// Close and returns. A batch starts with the first item the dispatcher gets; it then waits the
// window (unless a full batch is queued already) and takes what was queued meanwhile. So each
// subscriber is woken at most once per window while items keep coming, and an item reaches
// subscribers about one window after it was published — later only by a delivery in progress
// when it was published, or a timer firing late.
func (h *Hub) dispatch() {
	defer h.wg.Done()
	batch := make([]Item, 0, min(cap(h.queue), MaxBatch))
	var timer *time.Timer
	if h.window > 0 {
		timer = time.NewTimer(time.Hour)
		timer.Stop()
	}
	for {
		select {
		case <-h.done:
			h.flush(batch)
			return
		case it := <-h.queue:
			batch = append(batch, it)
		}
		closing := false
		if timer != nil && len(h.queue) < cap(batch)-1 {
			timer.Reset(h.window)
			select {
			case <-timer.C:
			case <-h.done:
				timer.Stop()
				closing = true
			}
		}
		batch = h.take(batch, cap(batch))
		h.deliver(batch)
		batch = clearBatch(batch)
		if closing {
			h.flush(batch)
			return
		}
	}
}

// take appends queued items to batch, without waiting, until it holds limit items or the queue
// is empty.
func (h *Hub) take(batch []Item, limit int) []Item {
	for len(batch) < limit {
		select {
		case it := <-h.queue:
			batch = append(batch, it)
		default:
			return batch
		}
	}
	return batch
}

// flush delivers, on Close, what was queued when Close was called (publishing may go on until
// Close has ended the subscriptions; those items are not waited for).
func (h *Hub) flush(batch []Item) {
	for n := len(h.queue); n > 0; {
		batch = h.take(batch[:0], min(cap(batch), n))
		if len(batch) == 0 {
			return
		}
		n -= len(batch)
		h.deliver(batch)
		batch = clearBatch(batch)
	}
}

// clearBatch empties batch, dropping its references so that delivered items can be collected.
func clearBatch(batch []Item) []Item {
	clear(batch)
	return batch[:0]
}

// deliver hands a batch to every subscriber: the items it matches, in order, then one wake-up.
// Each item is transformed once, when the first subscriber wants it.
func (h *Hub) deliver(batch []Item) {
	if len(batch) == 0 {
		return
	}
	h.mu.Lock()
	emptied := h.deliverLocked(batch)
	h.mu.Unlock()
	h.batches.Add(1) // after the items are in place, so a caller of Stats can rely on them
	if emptied {
		h.notify(0)
	}
}

// deliverLocked is deliver under h.mu; it reports whether it cut off the last subscriber.
func (h *Hub) deliverLocked(batch []Item) (emptied bool) {
	prepared, isPrepared := h.prepared[:len(batch)], h.isPrepared[:len(batch)]
	defer func() {
		clear(prepared)
		clear(isPrepared)
	}()
subscribers:
	for s := range h.subs {
		sent := false
		for i := range batch {
			if !s.filter.Match(batch[i]) {
				continue
			}
			if !isPrepared[i] {
				prepared[i], isPrepared[i] = h.prepare(batch[i]), true
			}
			if s.sizes != nil && !s.fits(prepared[i].size, h.maxBytes) {
				h.cutOff.Add(1)
				emptied = h.removeLocked(s, ErrSlowSubscriber) || emptied
				continue subscribers
			}
			select {
			case s.ch <- prepared[i]:
				sent = true
				if s.sizes != nil {
					s.sizes.push(prepared[i].size)
				}
			default:
				// The rest of the batch is not offered; removeLocked drops what was buffered.
				h.cutOff.Add(1)
				emptied = h.removeLocked(s, ErrSlowSubscriber) || emptied
				continue subscribers
			}
		}
		if sent {
			// Filling first: a reader woken by Ready finds it set if this delivery set it.
			if s.halfFull(h.maxBytes) {
				signal(s.filling)
			}
			s.signal()
		}
	}
	return emptied
}

// prepare makes the item every subscriber gets.
func (h *Hub) prepare(it Item) Item {
	if h.transform != nil {
		it = h.transform(it)
	}
	it.shared = new(shared)
	if h.maxBytes > 0 {
		it.size = proto.Size(it.Event) + proto.Size(it.Decision)
	}
	return it
}

// Subscribe registers a watcher with a buffer of bufferSize items (minimum 1), bounded in bytes
// too unless the hub's byte limit is off (WithBufferBytes).
func (h *Hub) Subscribe(f Filter, bufferSize int) *Subscription {
	if bufferSize < 1 {
		bufferSize = 1
	}
	s := &Subscription{hub: h, filter: f, ch: make(chan Item, bufferSize), ready: make(chan struct{}, 1), filling: make(chan struct{}, 1), ended: make(chan struct{})}
	if h.maxBytes > 0 {
		s.sizes = &sizeRing{sizes: make([]int, bufferSize+1)}
	}
	h.mu.Lock()
	select {
	case <-h.done:
		h.mu.Unlock()
		s.end(ErrClosed)
		return s
	default:
	}
	h.subs[s] = struct{}{}
	n := h.active.Add(1)
	h.mu.Unlock()
	h.notify(int(n))
	return s
}

// OnSubscribers makes the hub call fn when subscribers come and when the last one goes: Subscribe
// calls fn(n), n ≥ 1 being the number of subscribers right after it added its own, on the
// subscribing goroutine and before it returns, so whatever fn does (a cluster fan-out starts
// receiving the other replicas' items) is done before the watcher gets its subscription; a
// removal that leaves no subscriber calls fn(0) on the goroutine that removed it (the
// subscriber's, the dispatcher's for a cut-off, a publisher's for an overflow, Close's). fn runs
// outside the hub's lock, so it may call the hub; fn(0) should return quickly, as it may run on
// the dispatcher or the decision path. Calls can overlap and, with subscribers coming and going
// at once, arrive out of order: n is a hint, Subscribers says how many there are now. A second
// call replaces fn; nil stops the calls.
func (h *Hub) OnSubscribers(fn func(n int)) {
	if fn == nil {
		h.onSubscribers.Store(nil)
		return
	}
	h.onSubscribers.Store(&fn)
}

func (h *Hub) notify(n int) {
	if fn := h.onSubscribers.Load(); fn != nil {
		(*fn)(n)
	}
}

// Subscribers returns the number of live subscriptions (one atomic load).
func (h *Hub) Subscribers() int { return int(h.active.Load()) }

// removeLocked ends s unless it ended already; it reports whether that left no subscriber (the
// caller then calls notify(0) once it released the lock).
func (h *Hub) removeLocked(s *Subscription, err error) (emptied bool) {
	if _, ok := h.subs[s]; !ok {
		return false
	}
	delete(h.subs, s)
	n := h.active.Add(-1)
	if errors.Is(err, ErrSlowSubscriber) {
		// A watcher that stopped reading must not pin what it was sent: drop it now, not when
		// its reader goes away (which may be never, or only when its connection closes).
		s.drop()
	}
	s.end(err)
	return n == 0
}

func (h *Hub) endAll(err error) {
	h.mu.Lock()
	emptied := false
	for s := range h.subs {
		emptied = h.removeLocked(s, err) || emptied
	}
	h.mu.Unlock()
	if emptied {
		h.notify(0)
	}
}

// Stats returns the current counters.
func (h *Hub) Stats() Stats {
	return Stats{
		Subscribers: int(h.active.Load()),
		Published:   h.published.Load(),
		CutOff:      h.cutOff.Load(),
		Overflows:   h.overflows.Load(),
		Batches:     h.batches.Load(),
	}
}

// Close stops dispatching and ends every subscription with ErrClosed. Items queued when Close is
// called are delivered first, so a subscriber that reads its buffer after it ended still sees them.
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
	ready  chan struct{} // holds a token when items were buffered since the last wake-up
	// filling holds a token when a delivery left the buffer at least half full (see Filling).
	filling chan struct{}
	ended   chan struct{}
	err     error // written once before ended is closed

	// sizes holds the sizes of the items sent to ch that may still be in it, oldest first (nil
	// without a byte limit); the dispatcher's alone, guarded by the hub's mu.
	sizes *sizeRing
}

// fits reports whether an item of size bytes may join s's buffer under limit. The items that
// left ch since the last look are the oldest sent (ch is FIFO and only the dispatcher sends), so
// their sizes are taken off first; a reader taking items meanwhile only makes the count high.
func (s *Subscription) fits(size, limit int) bool {
	for s.sizes.n > len(s.ch) {
		s.sizes.pop()
	}
	return s.sizes.n == 0 || s.sizes.bytes+size <= limit
}

// halfFull reports whether s's buffer holds at least half of what it may, in items or (with a
// byte limit) in bytes. Called by the dispatcher right after a delivery, whose sizes are current
// but for items read meanwhile, which only make it report true a little early.
func (s *Subscription) halfFull(limit int) bool {
	if 2*len(s.ch) >= cap(s.ch) {
		return true
	}
	return s.sizes != nil && limit > 0 && 2*s.sizes.bytes >= limit
}

// drop empties the buffer so that its items can be collected.
func (s *Subscription) drop() {
	for {
		select {
		case <-s.ch:
		default:
			if s.sizes != nil {
				*s.sizes = sizeRing{sizes: s.sizes.sizes}
			}
			return
		}
	}
}

// sizeRing is a FIFO of item sizes and their sum. It holds one more than the buffer: fits counts
// what is in the buffer, and the item sent after it is pushed before the next look.
type sizeRing struct {
	sizes   []int
	head, n int
	bytes   int
}

func (r *sizeRing) push(size int) {
	r.sizes[(r.head+r.n)%len(r.sizes)] = size
	r.n++
	r.bytes += size
}

func (r *sizeRing) pop() {
	r.bytes -= r.sizes[r.head]
	r.head = (r.head + 1) % len(r.sizes)
	r.n--
}

// Items delivers matching items in publish order. Items already buffered when the subscription
// ends can still be read, except after a cut-off (ErrSlowSubscriber), which drops them; check
// Ended to learn that it ended.
//
// A reader blocked on Items may be woken for every item; see Ready.
func (s *Subscription) Items() <-chan Item { return s.ch }

// Ready receives after the hub has put a batch of items into the buffer. A reader that waits on
// Ready and then receives from Items until it would block is woken once per batch rather than once
// per item. It may fire with nothing left to read (the items were read already): it is a hint.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Filling receives after a delivery left the buffer at least half full, in items or in bytes. A
// reader that lets items gather before it reads them (Watch's flush interval) reads at once
// instead, well before the buffer overflows and the hub cuts it off: a delivery adds at most
// MaxBatch items, so with a buffer of more than 2×MaxBatch items the reader has at least one more
// delivery's time. Like Ready it is a hint: the items may have been read already.
func (s *Subscription) Filling() <-chan struct{} { return s.filling }

// signal records that items were buffered; a pending token already covers them.
func (s *Subscription) signal() { signal(s.ready) }

// signal puts a token into c unless one is pending.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

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
	emptied := s.hub.removeLocked(s, nil)
	s.hub.mu.Unlock()
	if emptied {
		s.hub.notify(0)
	}
}

func (s *Subscription) end(err error) {
	s.err = err
	close(s.ended)
}
