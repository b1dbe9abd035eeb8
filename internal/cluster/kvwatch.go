package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KVWatch follows keys of a key-value bucket across NATS restarts. The client library's watcher
// does not survive one: after a reconnect the server side of its consumer may be gone and it then
// delivers nothing, without ending. KVWatch therefore restarts its watcher on every reconnect of
// the connection, and whenever the watcher ends, from the revision after the last one it handed
// over, so changes made meanwhile still arrive, each once.
type KVWatch struct {
	conn   *Conn
	kv     jetstream.KeyValue
	keys   string
	what   string
	handle func(e jetstream.KeyValueEntry, live bool)
	log    *slog.Logger

	mu      sync.Mutex
	w       jetstream.KeyWatcher
	stopW   context.CancelFunc // ends w's context (see start)
	lastRev uint64             // last revision handed over

	closeOnce sync.Once
	closing   chan struct{}
	ready     chan struct{}
	done      chan struct{}
}

// kvWatchTimeout bounds creating a watcher's consumer.
const kvWatchTimeout = 5 * time.Second

// WatchKV starts following keys (a key, or a pattern with wildcards) of kv. handle gets every
// entry from one goroutine in the bucket's order: first the current values (live false), then
// every change (live true). Ready is closed once the current values were handed over. what names
// the bucket in logs. Close stops it.
func WatchKV(ctx context.Context, conn *Conn, kv jetstream.KeyValue, keys, what string, handle func(e jetstream.KeyValueEntry, live bool), log *slog.Logger) (*KVWatch, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &KVWatch{conn: conn, kv: kv, keys: keys, what: what, handle: handle, log: log,
		closing: make(chan struct{}), ready: make(chan struct{}), done: make(chan struct{})}
	var err error
	if w.w, w.stopW, err = w.start(ctx); err != nil {
		return nil, err
	}
	// Listen for reconnects before the first delivery, so none is missed.
	reconnects := conn.NATS().StatusChanged(nats.CONNECTED)
	go w.run()
	go w.follow(reconnects)
	return w, nil
}

// Ready is closed once the bucket's current values were handed over.
func (w *KVWatch) Ready() <-chan struct{} { return w.ready }

// Close stops the watch and waits for handle to return; it is safe to call more than once.
func (w *KVWatch) Close() {
	w.closeOnce.Do(func() {
		close(w.closing)
		w.mu.Lock()
		kw, stop := w.w, w.stopW
		w.mu.Unlock()
		_ = kw.Stop()
		stop()
	})
	<-w.done
}

// start creates a watcher. The client library ends a watcher when the context it was created
// with ends, so that context ends only when the watcher is replaced or closed — or when creating
// it takes longer than kvWatchTimeout (or ctx ends first), which fails the creation.
func (w *KVWatch) start(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, context.CancelFunc, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	timer := time.AfterFunc(kvWatchTimeout, cancel)
	stopOnCaller := context.AfterFunc(ctx, cancel)
	kw, err := w.kv.Watch(life, w.keys, opts...)
	intime := timer.Stop() && stopOnCaller()
	if err == nil && !intime {
		_ = kw.Stop()
		err = fmt.Errorf("creating the watcher took longer than %v", kvWatchTimeout)
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return kw, cancel, nil
}

// run hands the entries over, resuming after the last revision whenever a watcher ends.
func (w *KVWatch) run() {
	defer close(w.done)
	live := false
	for {
		w.mu.Lock()
		kw := w.w
		w.mu.Unlock()
		for e := range kw.Updates() {
			if e == nil {
				if !live {
					live = true
					close(w.ready)
				}
				continue
			}
			w.mu.Lock()
			if e.Revision() <= w.lastRev { // a resumed watcher overlapping the old one
				w.mu.Unlock()
				continue
			}
			w.lastRev = e.Revision()
			w.mu.Unlock()
			w.handle(e, live)
		}
		if !w.resume() {
			return
		}
	}
}

// resume starts a new watcher after the last revision handed over; false when closing.
func (w *KVWatch) resume() bool {
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		select {
		case <-w.closing:
			return false
		default:
		}
		w.mu.Lock()
		from := w.lastRev + 1
		w.mu.Unlock()
		kw, stop, err := w.start(context.Background(), jetstream.ResumeFromRevision(from))
		if err == nil {
			w.mu.Lock()
			old := w.stopW
			w.w, w.stopW = kw, stop
			w.mu.Unlock()
			old() // the ended watcher's context
			select {
			case <-w.closing: // Close stopped the old one meanwhile
				_ = kw.Stop()
				stop()
			default:
			}
			return true
		}
		if attempt == 0 {
			w.log.Warn("cluster: resuming the watch of a bucket failed; retrying", "bucket", w.what, "error", err)
		}
		select {
		case <-w.closing:
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// follow stops the watcher on every reconnect; run then resumes it.
func (w *KVWatch) follow(reconnects chan nats.Status) {
	nc := w.conn.NATS()
	defer nc.RemoveStatusListener(reconnects)
	for {
		select {
		case <-reconnects:
			w.mu.Lock()
			kw := w.w
			w.mu.Unlock()
			_ = kw.Stop()
		case <-w.closing:
			return
		}
	}
}
