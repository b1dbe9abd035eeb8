// Package fanout joins the Watch hubs of cluster replicas over NATS core pub/sub: every replica
// publishes each of its decisions and observations once, on its own subject
// (<prefix>.watch.<replica>), and feeds the items of every other replica into its local hub. A
// Watch on any replica therefore streams the items of all replicas, each exactly once (its own
// through the local hub directly, the others' from NATS, never both), with the hub's filters,
// buffers and cut-off rules unchanged.
//
// Publishing never blocks the decision path: items go into a bounded queue (in items and bytes)
// that one goroutine encodes and publishes; a full queue drops the item for the other replicas
// and counts it, and the local watchers still get it. Items are transformed (redacted) before
// they leave the process.
package fanout

import (
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

// Local is the replica's own hub.
type Local interface {
	hub.Publisher
}

// Options configure the fan-out.
type Options struct {
	// Transform rewrites each item before it leaves the process (redaction); nil: none.
	Transform func(hub.Item) hub.Item
	// QueueItems bounds the outbound queue (default 65536).
	QueueItems int
	// MaxItemBytes drops (and counts) an encoded item larger than this (default 1 MiB; NATS
	// refuses messages over its max_payload anyway).
	MaxItemBytes int
	// Logger receives operational logs.
	Logger *slog.Logger
}

// Fanout is the Publisher the core publishes to in cluster mode.
type Fanout struct {
	conn    *cluster.Conn
	local   Local
	subject string
	opts    Options
	queue   chan hub.Item
	origin  string // this process's random id, so its own items are recognised whatever its name
	sub     *nats.Subscription
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	sent, received, dropped, undecodable atomic.Uint64
}

var _ hub.Publisher = (*Fanout)(nil)

// SubjectPrefix is the subject family, below the installation prefix.
const SubjectPrefix = "watch"

// Start subscribes to the other replicas' items and starts the publisher.
func Start(conn *cluster.Conn, local Local, opts Options) (*Fanout, error) {
	if opts.QueueItems <= 0 {
		opts.QueueItems = 65536
	}
	if opts.MaxItemBytes <= 0 {
		opts.MaxItemBytes = 1 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	f := &Fanout{
		conn: conn, local: local, opts: opts,
		subject: conn.Subject(SubjectPrefix + "." + conn.Name()),
		queue:   make(chan hub.Item, opts.QueueItems),
		origin:  nuid.Next(),
		done:    make(chan struct{}),
	}
	sub, err := conn.NATS().Subscribe(conn.Subject(SubjectPrefix+".*"), f.receive)
	if err != nil {
		return nil, fmt.Errorf("cluster: subscribing to Watch fan-out: %w", err)
	}
	// The subscription's own buffer is bounded; a replica that cannot keep up loses items there,
	// which NATS reports as a slow consumer (counted by the connection's error handler).
	if err := sub.SetPendingLimits(65536, 64<<20); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	// Not connected yet (started degraded): the subscription is made when NATS comes, and a
	// flush would only wait out its timeout.
	if conn.NATS().IsConnected() {
		if err := conn.NATS().Flush(); err != nil {
			conn.Failed(err)
		}
	}
	f.sub = sub
	f.wg.Add(1)
	go f.publish()
	return f, nil
}

// Publish implements hub.Publisher: the local hub gets the item now, the other replicas soon.
func (f *Fanout) Publish(it hub.Item) {
	f.local.Publish(it)
	select {
	case f.queue <- it:
	default:
		f.dropped.Add(1)
	}
}

func (f *Fanout) publish() {
	defer f.wg.Done()
	nc := f.conn.NATS()
	for {
		select {
		case <-f.done:
			return
		case it := <-f.queue:
			if f.opts.Transform != nil {
				it = f.opts.Transform(it)
			}
			b, err := Encode(it)
			if err != nil || len(b) > f.opts.MaxItemBytes {
				f.dropped.Add(1)
				continue
			}
			msg := &nats.Msg{Subject: f.subject, Data: b, Header: nats.Header{originHeader: []string{f.origin}}}
			if err := nc.PublishMsg(msg); err != nil {
				f.dropped.Add(1)
				continue
			}
			f.sent.Add(1)
		}
	}
}

// originHeader carries the publishing process's id.
const originHeader = "Ahp-Origin"

// receive feeds another replica's item into the local hub; its own are skipped (the local hub
// had them already). Its own are told by the origin header, not the subject, so two replicas that
// happen to share a name (two on one host, both named after it) still see each other's items.
func (f *Fanout) receive(m *nats.Msg) {
	if m.Header.Get(originHeader) == f.origin || !strings.HasPrefix(m.Subject, f.conn.Subject(SubjectPrefix+".")) {
		return
	}
	it, err := Decode(m.Data)
	if err != nil {
		if f.undecodable.Add(1) == 1 {
			f.opts.Logger.Warn("cluster: Watch fan-out item does not decode; ignored (counted)", "subject", m.Subject, "error", err)
		}
		return
	}
	f.received.Add(1)
	f.local.Publish(it)
}

// Stats are counters for metrics.
type Stats struct {
	// Sent and Received count items published to and taken from the other replicas.
	Sent, Received uint64
	// Dropped counts items the other replicas will not see (queue full, too large, NATS
	// refused); Undecodable counts items received that did not decode.
	Dropped, Undecodable uint64
}

// Stats returns the counters.
func (f *Fanout) Stats() Stats {
	return Stats{Sent: f.sent.Load(), Received: f.received.Load(), Dropped: f.dropped.Load(), Undecodable: f.undecodable.Load()}
}

// Close stops receiving and publishing.
func (f *Fanout) Close() {
	f.once.Do(func() {
		_ = f.sub.Unsubscribe()
		close(f.done)
		f.wg.Wait()
	})
}

// Encode frames an item: its time (Unix nanoseconds, 8 bytes), the length of the encoded event
// (4 bytes), the event, and the encoded decision (absent for an observation).
func Encode(it hub.Item) ([]byte, error) {
	ev, err := proto.Marshal(it.Event)
	if err != nil {
		return nil, err
	}
	var d []byte
	if it.Decision != nil {
		if d, err = proto.Marshal(it.Decision); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 13, 13+len(ev)+len(d))
	binary.BigEndian.PutUint64(b, uint64(it.Time.UnixNano()))
	binary.BigEndian.PutUint32(b[8:], uint32(len(ev)))
	if it.Decision != nil {
		b[12] = 1
	}
	return append(append(b, ev...), d...), nil
}

var errFrame = errors.New("malformed Watch fan-out frame")

// Decode reverses Encode.
func Decode(b []byte) (hub.Item, error) {
	if len(b) < 13 {
		return hub.Item{}, errFrame
	}
	n := binary.BigEndian.Uint32(b[8:])
	if uint64(n) > uint64(len(b)-13) {
		return hub.Item{}, errFrame
	}
	it := hub.Item{Time: time.Unix(0, int64(binary.BigEndian.Uint64(b))), Event: new(ahpv1.Event)}
	if err := proto.Unmarshal(b[13:13+n], it.Event); err != nil {
		return hub.Item{}, err
	}
	if b[12] == 1 {
		it.Decision = new(ahpv1.Decision)
		if err := proto.Unmarshal(b[13+n:], it.Decision); err != nil {
			return hub.Item{}, err
		}
	}
	return it, nil
}
