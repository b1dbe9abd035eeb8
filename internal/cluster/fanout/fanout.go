// Package fanout joins the Watch hubs of cluster replicas over NATS core pub/sub: every replica
// publishes each of its decisions and observations once, on its own subject
// (<prefix>.watch.<replica>), and feeds the items of every other replica into its local hub. A
// Watch on any replica therefore streams the items of all replicas, each exactly once (its own
// through the local hub directly, the others' from NATS, never both), with the hub's filters,
// buffers and cut-off rules unchanged.
//
// # Receiving only while watched
//
// A replica subscribes to <prefix>.watch.* only while its local hub has a subscriber (a Watch
// stream, the console's tracker) and for a linger after the last one left (Options.Linger,
// default 30 s), so that watchers coming and going do not make it subscribe and unsubscribe each
// time. While nobody watches a replica, nats-server sends it nothing: the usual state of a
// cluster costs each replica no received message at all. The first subscriber's hub.Subscribe
// does not return before the subscription is registered at the server (a subscribe and a flush,
// bounded by Options.SubscribeTimeout), so a Watch gets every item any replica publishes after
// its Subscribe returned, exactly once. When the flush does not come back in time, or NATS is
// not connected, the Watch starts anyway (a NATS outage must not hold it open) and the
// subscription is counted as unconfirmed: it takes effect when the server gets it, or on
// reconnect (the client library sends its subscriptions again then). Messages that arrive while
// the subscription lingers with no local subscriber are not decoded.
//
// # Publishing in batches
//
// Publishing never blocks the decision path: items go into a bounded queue (in items and bytes) that one
// goroutine transforms (redacts), encodes and publishes; a full queue drops the item for the
// other replicas and counts it, and the local watchers still get it. The goroutine sends what is
// queued when it gets to it as one message, at most Options.BatchItems items (256) and
// Options.BatchBytes bytes (256 KiB, and below the connection's max_payload), and never waits for
// more: one item queued is one message, as before, and under load a message carries many.
//
// # Wire format
//
// A message carries the header Ahp-Origin (the publishing process's random id) and either one
// item or a batch. One item (a frame) is its time (Unix nanoseconds, 8 bytes, big-endian), the
// length of the encoded event (4 bytes), 1 if a decision follows and 0 for an observation, the
// encoded ahp.v1.Event and the encoded ahp.v1.Decision. A batch starts with the 13-byte marker
// "AHPITEMS", 0xFFFFFFFF, version 1, then holds each frame preceded by its length (4 bytes). An
// event length of 0xFFFFFFFF is impossible in a frame, so the marker tells the two apart without
// a header, and a replica older than batches refuses a batch as malformed (counted as
// undecodable) instead of misreading it. A single item is always sent as a frame, so during a
// rolling upgrade older replicas still get every item sent while the load is light.
package fanout

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"google.golang.org/protobuf/proto"
)

// Local is the replica's own hub: the fan-out publishes into it and learns from it when someone
// watches (*hub.Hub implements it).
type Local interface {
	hub.Publisher
	// Subscribers is the number of local subscribers now.
	Subscribers() int
	// OnSubscribers registers the function told of subscribers coming (before their Subscribe
	// returns) and of the last one going (see hub.Hub.OnSubscribers).
	OnSubscribers(func(n int))
}

// Options configure the fan-out.
type Options struct {
	// Transform rewrites each item before it leaves the process (redaction); nil: none.
	Transform func(hub.Item) hub.Item
	// QueueItems bounds the outbound queue in items (default 65536).
	QueueItems int
	// QueueBytes bounds it in bytes, items counted at their encoded size (default 64 MiB): a
	// burst of large events does not pin more than this while the publisher catches up; past it
	// an item is dropped for the other replicas and counted, as on a full queue.
	QueueBytes int
	// MaxItemBytes drops (and counts) an encoded item larger than this (default 1 MiB; NATS
	// refuses messages over its max_payload anyway).
	MaxItemBytes int
	// BatchItems and BatchBytes bound one message of queued items (defaults DefaultBatchItems
	// and DefaultBatchBytes; the connection's max_payload bounds it too). BatchItems 1 sends every
	// item as its own message.
	BatchItems, BatchBytes int
	// Linger is how long the subscription to the other replicas' items is kept after the last
	// local subscriber left (default DefaultLinger; negative: none, it ends at once).
	Linger time.Duration
	// SubscribeTimeout bounds how long the first local subscriber waits for the server to confirm
	// the subscription (default DefaultSubscribeTimeout).
	SubscribeTimeout time.Duration
	// AfterFunc runs f after d on its own goroutine and returns a function that cancels it, as
	// time.AfterFunc does (default: time.AfterFunc); tests use it to control the linger.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Logger receives operational logs.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultBatchItems       = 256
	DefaultBatchBytes       = 256 << 10
	DefaultLinger           = 30 * time.Second
	DefaultSubscribeTimeout = time.Second
)

// maxDecodeItems bounds the items of one batch a receiver accepts (a sender sends at most
// BatchItems); more is refused as malformed.
const maxDecodeItems = 4096

// Fanout is the Publisher the core publishes to in cluster mode.
type Fanout struct {
	conn     *cluster.Conn
	local    Local
	subject  string // this replica's
	wildcard string // everyone's
	prefix   string // of everyone's subjects
	opts     Options
	queue    chan queuedItem
	queued   atomic.Int64 // bytes of the items in queue
	origin   string       // this process's random id, so its own items are recognised whatever its name
	header   nats.Header
	done     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once

	// mu guards the subscription; the first subscriber holds it while it subscribes.
	mu     sync.Mutex
	sub    *nats.Subscription
	closed bool
	// lingerMu guards the linger timer; taken after mu when both are.
	lingerMu  sync.Mutex
	lingerGen uint64
	stopTimer func() bool

	subscribed                                             atomic.Bool
	sent, sentMessages, received, receivedMessages         atomic.Uint64
	unwatched, dropped, undecodable                        atomic.Uint64
	subscribes, unsubscribes, unconfirmed, subscribeErrors atomic.Uint64
}

var _ hub.Publisher = (*Fanout)(nil)

// SubjectPrefix is the subject family, below the installation prefix.
const SubjectPrefix = "watch"

// Start starts the publisher and makes local tell the fan-out when someone watches; it
// subscribes at once if someone does already.
func Start(conn *cluster.Conn, local Local, opts Options) (*Fanout, error) {
	if opts.QueueItems <= 0 {
		opts.QueueItems = 65536
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = 64 << 20
	}
	if opts.MaxItemBytes <= 0 {
		opts.MaxItemBytes = 1 << 20
	}
	if opts.BatchItems <= 0 {
		opts.BatchItems = DefaultBatchItems
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if opts.Linger == 0 {
		opts.Linger = DefaultLinger
	}
	if opts.SubscribeTimeout <= 0 {
		opts.SubscribeTimeout = DefaultSubscribeTimeout
	}
	if opts.AfterFunc == nil {
		opts.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	f := &Fanout{
		conn: conn, local: local, opts: opts,
		subject:  conn.Subject(SubjectPrefix + "." + conn.Name()),
		wildcard: conn.Subject(SubjectPrefix + ".*"),
		prefix:   conn.Subject(SubjectPrefix + "."),
		queue:    make(chan queuedItem, opts.QueueItems),
		origin:   nuid.Next(),
		done:     make(chan struct{}),
	}
	f.header = nats.Header{originHeader: []string{f.origin}}
	f.wg.Add(1)
	go f.publish()
	local.OnSubscribers(f.watchers)
	if local.Subscribers() > 0 {
		if err := f.subscribe(); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// watchers is the local hub's OnSubscribers: a subscriber came (n > 0), or the last one left.
func (f *Fanout) watchers(n int) {
	if n == 0 {
		f.linger()
		return
	}
	if err := f.subscribe(); err != nil {
		f.subscribeErrors.Add(1)
		f.opts.Logger.Warn("cluster: cannot subscribe to the other replicas' Watch items; this Watch shows this replica's only", "error", err)
	}
}

// subscribe makes the subscription unless it is there, and waits (SubscribeTimeout at most)
// until the server has it.
func (f *Fanout) subscribe() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.sub != nil {
		return nil
	}
	nc := f.conn.NATS()
	sub, err := nc.Subscribe(f.wildcard, f.receive)
	if err != nil {
		return fmt.Errorf("cluster: subscribing to Watch fan-out: %w", err)
	}
	// The subscription's own buffer is bounded; a replica that cannot keep up loses items there,
	// which NATS reports as a slow consumer (counted by the connection's error handler).
	if err := sub.SetPendingLimits(65536, 64<<20); err != nil {
		_ = sub.Unsubscribe()
		return err
	}
	f.sub = sub
	f.subscribed.Store(true)
	f.subscribes.Add(1)
	// Not connected (started degraded, or reconnecting): the subscription is sent when NATS
	// comes, and a flush would only wait out its timeout.
	if !nc.IsConnected() {
		f.unconfirmed.Add(1)
		return nil
	}
	if err := nc.FlushTimeout(f.opts.SubscribeTimeout); err != nil {
		f.unconfirmed.Add(1)
		f.opts.Logger.Warn("cluster: NATS did not confirm the Watch fan-out subscription in time; the Watch starts without waiting and may miss other replicas' items until it does (counted)",
			"timeout", f.opts.SubscribeTimeout, "unconfirmed", f.unconfirmed.Load(), "error", err)
		f.conn.Failed(err)
	}
	return nil
}

// linger arms (again) the timer that ends the subscription Linger after the last subscriber left.
func (f *Fanout) linger() {
	f.lingerMu.Lock()
	defer f.lingerMu.Unlock()
	if f.stopTimer != nil {
		f.stopTimer()
	}
	f.lingerGen++
	gen := f.lingerGen
	f.stopTimer = f.opts.AfterFunc(max(f.opts.Linger, 0), func() { f.unsubscribe(gen) })
}

// unsubscribe ends the subscription if nobody watches and no later departure armed the timer again.
func (f *Fanout) unsubscribe(gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lingerMu.Lock()
	stale := gen != f.lingerGen
	f.lingerMu.Unlock()
	if stale || f.sub == nil || f.local.Subscribers() > 0 {
		return
	}
	_ = f.sub.Unsubscribe()
	f.sub = nil
	f.subscribed.Store(false)
	f.unsubscribes.Add(1)
}

// Publish implements hub.Publisher: the local hub gets the item now, the other replicas soon.
func (f *Fanout) Publish(it hub.Item) {
	f.local.Publish(it)
	eventBytes := it.EventBytes
	if eventBytes <= 0 { // not known to the publisher: measured here
		eventBytes = proto.Size(it.Event)
	}
	size := int64(eventBytes + proto.Size(it.Decision) + frameOverhead)
	if f.queued.Add(size) > int64(f.opts.QueueBytes) {
		f.queued.Add(-size)
		f.dropped.Add(1)
		return
	}
	select {
	case f.queue <- queuedItem{it: it, size: size}:
	default:
		f.queued.Add(-size)
		f.dropped.Add(1)
	}
}

// queuedItem is an item waiting for the publisher, with the bytes it holds in the queue.
type queuedItem struct {
	it   hub.Item
	size int64
}

// frameOverhead is what a queued item counts beyond its encoded event and decision: its frame's
// header and length.
const frameOverhead = 17

// take returns a dequeued item, its bytes released from the queue's bound.
func (f *Fanout) take(q queuedItem) hub.Item {
	f.queued.Add(-q.size)
	return q.it
}

func (f *Fanout) publish() {
	defer f.wg.Done()
	b := &batcher{f: f, nc: f.conn.NATS(), body: make([]byte, 0, 64<<10)}
	for {
		select {
		case <-f.done:
			return
		case q := <-f.queue:
			b.sendQueued(f.take(q))
		}
	}
}

// batcher builds messages of queued items; the publisher goroutine's alone.
type batcher struct {
	f    *Fanout
	nc   *nats.Conn
	body []byte // batchMarker, then length-prefixed frames
	n    int    // frames in body
}

// sendQueued sends it and whatever is queued behind it, in order, in as few messages as the
// bounds allow, without waiting for more.
func (b *batcher) sendQueued(it hub.Item) {
	f := b.f
	limit := f.opts.BatchBytes
	if mp := int(b.nc.MaxPayload()); mp > 0 {
		limit = min(limit, mp-1024) // room for the headers
	}
	b.body, b.n = append(b.body[:0], batchMarker...), 0
	for {
		b.add(it, limit)
		select {
		case <-f.done:
			b.flush()
			return
		case q := <-f.queue:
			it = f.take(q)
		default:
			b.flush()
			return
		}
	}
}

// add encodes it into the batch, sending the batch first if it would not fit.
func (b *batcher) add(it hub.Item, limit int) {
	f := b.f
	if f.opts.Transform != nil {
		it = f.opts.Transform(it)
	}
	start := len(b.body)
	body, err := appendFrame(append(b.body, 0, 0, 0, 0), it)
	if err != nil || len(body)-start-4 > f.opts.MaxItemBytes {
		b.body = b.body[:start]
		f.dropped.Add(1)
		return
	}
	b.body = body
	size := len(body) - start - 4
	binary.BigEndian.PutUint32(body[start:], uint32(size))
	if len(body) > limit {
		if b.n > 0 { // send the others first, then start a new batch with this one
			b.sendBody(body[:start], b.n)
			copy(body[len(batchMarker):], body[start:])
			b.body, b.n = body[:len(batchMarker)+4+size], 0
		}
		if len(b.body) > limit { // too large for any batch: alone
			b.n = 1
			b.flush()
			return
		}
	}
	b.n++
	if b.n >= f.opts.BatchItems {
		b.flush()
	}
}

// flush sends the batch, if it holds anything, and empties it.
func (b *batcher) flush() {
	if b.n > 0 {
		b.sendBody(b.body, b.n)
	}
	if cap(b.body) > 2*max(b.f.opts.BatchBytes, 64<<10) { // grown for a large item: not kept
		b.body = append(make([]byte, 0, 64<<10), batchMarker...)
	}
	b.body, b.n = b.body[:len(batchMarker)], 0
}

// sendBody publishes body (batchMarker and n length-prefixed frames); one item goes as a frame.
func (b *batcher) sendBody(body []byte, n int) {
	f := b.f
	if n == 1 {
		body = body[len(batchMarker)+4:]
	}
	// PublishMsg copies the data into the connection's buffer: body may be reused at once.
	if err := b.nc.PublishMsg(&nats.Msg{Subject: f.subject, Data: body, Header: f.header}); err != nil {
		f.dropped.Add(uint64(n))
		return
	}
	f.sent.Add(uint64(n))
	f.sentMessages.Add(1)
}

// originHeader carries the publishing process's id.
const originHeader = "Ahp-Origin"

// receive feeds another replica's items into the local hub; its own are skipped (the local hub
// had them already). Its own are told by the origin header, not the subject, so two replicas that
// happen to share a name (two on one host, both named after it) still see each other's items.
func (f *Fanout) receive(m *nats.Msg) {
	f.receivedMessages.Add(1)
	if !strings.HasPrefix(m.Subject, f.prefix) || m.Header.Get(originHeader) == f.origin {
		return
	}
	// Lingering with nobody watching: nobody would see the items. A subscriber that came
	// meanwhile sees only items published after it came, which arrive after this check.
	if f.local.Subscribers() == 0 {
		f.unwatched.Add(1)
		return
	}
	items, err := DecodeMessage(m.Data)
	for _, it := range items {
		f.local.Publish(it)
	}
	f.received.Add(uint64(len(items)))
	if err != nil {
		if f.undecodable.Add(1) == 1 {
			f.opts.Logger.Warn("cluster: Watch fan-out message does not decode; ignored (counted)", "subject", m.Subject, "error", err)
		}
	}
}

// Stats are counters for metrics.
type Stats struct {
	// Sent counts items published to the other replicas, SentMessages the NATS messages that
	// carried them (Sent/SentMessages is the mean batch size).
	Sent, SentMessages uint64
	// Received counts items taken from the other replicas into the local hub; ReceivedMessages
	// every message NATS delivered, Unwatched those of them not decoded because the subscription
	// was lingering with nobody watching.
	Received, ReceivedMessages, Unwatched uint64
	// Dropped counts items the other replicas will not see (queue full, too large, NATS
	// refused); Undecodable counts messages received that did not decode (in full).
	Dropped, Undecodable uint64
	// Subscribed: the subscription to the other replicas' items is held now. Subscribes and
	// Unsubscribes count how often it was made and ended; Unconfirmed the times it was made
	// without the server confirming it within SubscribeTimeout (or while not connected);
	// SubscribeErrors the times it could not be made.
	Subscribed                                             bool
	Subscribes, Unsubscribes, Unconfirmed, SubscribeErrors uint64
	// QueuedBytes is what the items waiting for the publisher hold now (bounded by
	// Options.QueueBytes).
	QueuedBytes int64
}

// Stats returns the counters.
func (f *Fanout) Stats() Stats {
	return Stats{
		Sent: f.sent.Load(), SentMessages: f.sentMessages.Load(),
		Received: f.received.Load(), ReceivedMessages: f.receivedMessages.Load(), Unwatched: f.unwatched.Load(),
		Dropped: f.dropped.Load(), Undecodable: f.undecodable.Load(),
		Subscribed: f.subscribed.Load(), Subscribes: f.subscribes.Load(), Unsubscribes: f.unsubscribes.Load(),
		Unconfirmed: f.unconfirmed.Load(), SubscribeErrors: f.subscribeErrors.Load(),
		QueuedBytes: f.queued.Load(),
	}
}

// Close stops receiving and publishing.
func (f *Fanout) Close() {
	f.once.Do(func() {
		f.local.OnSubscribers(nil)
		f.mu.Lock()
		f.closed = true
		if f.sub != nil {
			_ = f.sub.Unsubscribe()
			f.sub = nil
			f.subscribed.Store(false)
		}
		f.mu.Unlock()
		f.lingerMu.Lock()
		if f.stopTimer != nil {
			f.stopTimer()
		}
		f.lingerGen++
		f.lingerMu.Unlock()
		close(f.done)
		f.wg.Wait()
	})
}

// frameHeader is the fixed start of a frame: time, event length, decision flag.
const frameHeader = 13

// batchMarker starts a batch: "AHPITEMS", an event length no frame can have, the version.
var batchMarker = []byte("AHPITEMS\xff\xff\xff\xff\x01")

// Encode frames one item (see the package documentation).
func Encode(it hub.Item) ([]byte, error) {
	return appendFrame(nil, it)
}

// EncodeBatch makes a batch of items (see the package documentation), as the publisher sends it
// for more than one item.
func EncodeBatch(items []hub.Item) ([]byte, error) {
	b := append([]byte(nil), batchMarker...)
	for _, it := range items {
		start := len(b)
		var err error
		if b, err = appendFrame(append(b, 0, 0, 0, 0), it); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	}
	return b, nil
}

// appendFrame appends the frame of it to b.
func appendFrame(b []byte, it hub.Item) ([]byte, error) {
	start := len(b)
	b = binary.BigEndian.AppendUint64(b, uint64(it.Time.UnixNano()))
	b = append(b, 0, 0, 0, 0, 0)
	var err error
	if b, err = (proto.MarshalOptions{}).MarshalAppend(b, it.Event); err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b[start+8:], uint32(len(b)-start-frameHeader))
	if it.Decision != nil {
		b[start+12] = 1
		if b, err = (proto.MarshalOptions{}).MarshalAppend(b, it.Decision); err != nil {
			return nil, err
		}
	}
	return b, nil
}

var errFrame = errors.New("malformed Watch fan-out frame")

// Decode reverses Encode: one frame.
func Decode(b []byte) (hub.Item, error) {
	if len(b) < frameHeader {
		return hub.Item{}, errFrame
	}
	n := binary.BigEndian.Uint32(b[8:])
	if uint64(n) > uint64(len(b)-frameHeader) {
		return hub.Item{}, errFrame
	}
	if b[12] > 1 {
		return hub.Item{}, errFrame
	}
	it := hub.Item{Time: time.Unix(0, int64(binary.BigEndian.Uint64(b))), Event: new(ahpv1.Event)}
	if err := proto.Unmarshal(b[frameHeader:frameHeader+n], it.Event); err != nil {
		return hub.Item{}, err
	}
	if b[12] == 1 {
		it.Decision = new(ahpv1.Decision)
		if err := proto.Unmarshal(b[frameHeader+n:], it.Decision); err != nil {
			return hub.Item{}, err
		}
	}
	return it, nil
}

// DecodeMessage decodes a message's data: a batch or one frame. It returns the items in order;
// with an error, those before the first that did not decode. It allocates in proportion to b,
// whatever lengths b claims.
func DecodeMessage(b []byte) ([]hub.Item, error) {
	if len(b) < len(batchMarker) || !bytes.Equal(b[:len(batchMarker)-1], batchMarker[:len(batchMarker)-1]) {
		it, err := Decode(b)
		if err != nil {
			return nil, err
		}
		return []hub.Item{it}, nil
	}
	if v := b[len(batchMarker)-1]; v != batchMarker[len(batchMarker)-1] {
		return nil, fmt.Errorf("unknown Watch fan-out batch version %d (this replica reads version %d)", v, batchMarker[len(batchMarker)-1])
	}
	b = b[len(batchMarker):]
	var items []hub.Item
	for len(b) > 0 {
		if len(items) == maxDecodeItems {
			return items, fmt.Errorf("too many items in a Watch fan-out batch (more than %d)", maxDecodeItems)
		}
		if len(b) < 4 {
			return items, errFrame
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return items, errFrame
		}
		it, err := Decode(b[:n])
		if err != nil {
			return items, err
		}
		items = append(items, it)
		b = b[n:]
	}
	if len(items) == 0 {
		return nil, errors.New("empty Watch fan-out batch")
	}
	return items, nil
}
