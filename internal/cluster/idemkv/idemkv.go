// Package idemkv is the idempotency store of cluster mode: remembered decisions and observations
// in a NATS JetStream key-value bucket shared by every replica, so a retry that reaches another
// replica is answered with the same decision, and the same event sent to two replicas at once is
// decided once (create-if-absent: the first writer wins).
//
// Every operation is bounded by the lookup budget. When NATS fails or is late the store falls
// back to a local in-memory one for that call (degrade) and tells the connection, which logs the
// start and the end of the degraded period and, in fail-closed mode, makes the core deny instead.
// What it remembered only locally meanwhile (a failover's window: a stream electing its leader)
// it writes to the bucket once the bucket answers again, create-if-absent, so that a retry which
// reaches another replica after the failover is still answered with the decision made.
package idemkv

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// Options bound the bucket.
type Options struct {
	// TTL is how long a decision or observation is remembered (default 10 min).
	TTL time.Duration
	// MaxBytes bounds the bucket (default 256 MiB); the oldest entries go first.
	MaxBytes int64
	// Fallback is the local store used while NATS is unavailable (default: in-memory, 100k
	// entries, TTL).
	Fallback idempotency.Store
	// MemoryStorage keeps the bucket in NATS memory instead of files (cluster.idempotency_storage).
	MemoryStorage bool
	// LookupFirst makes Decision look in the bucket before the policy is evaluated (one round
	// trip per decision) instead of relying on RememberDecision.
	LookupFirst bool
}

// Store implements idempotency.Store on a KV bucket.
type Store struct {
	conn        *cluster.Conn
	kv          atomic.Pointer[jetstream.KeyValue] // nil until the bucket is open
	ready       chan struct{}                      // closed once it is
	fallback    idempotency.Store
	lookupFirst bool
	back        writeBack
}

// writeBack holds what was remembered only locally because the bucket could not be reached, to
// be written to it (create-if-absent) when it answers again; bounded in bytes.
type writeBack struct {
	mu                          sync.Mutex
	entries                     map[string][]byte // KV key → value
	waiting                     atomic.Int64      // len(entries), read without mu on the decision path
	bytes                       int
	running                     bool
	written, conflicts, dropped atomic.Uint64
}

// maxWriteBackBytes bounds what waits to be written back; what does not fit stays local only
// (counted as dropped).
const maxWriteBackBytes = 8 << 20

// writeBackEntryOverhead is what one waiting entry costs beside its key and value (map slot).
const writeBackEntryOverhead = 64

// WriteBackStats are the counters of the write-back of local decisions.
type WriteBackStats struct {
	// Written counts entries written to the bucket after an outage; Conflicts those another
	// replica had written first (its decision stands in the bucket, this replica's local copy
	// answers its own retries); Dropped those that did not fit the byte bound.
	Written, Conflicts, Dropped uint64
	// Pending and PendingBytes are what waits now.
	Pending, PendingBytes int
}

var _ idempotency.Store = (*Store)(nil)

// BucketName is the bucket's name without the installation prefix.
const BucketName = "idempotency"

// maxValueBytes bounds a remembered decision; a larger one is kept locally only.
const maxValueBytes = 256 << 10

// Open creates or updates the bucket and returns the store. With on_start_unavailable degrade
// and the bucket not available (NATS not reachable yet), it returns at once a store that
// answers from its local fallback (each call counted as a failed store operation) and opens the
// bucket in the background when NATS comes; the bucket is used from then on.
func Open(ctx context.Context, conn *cluster.Conn, opts Options) (*Store, error) {
	if opts.TTL <= 0 {
		opts.TTL = 10 * time.Minute
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 256 << 20
	}
	if opts.Fallback == nil {
		opts.Fallback = idempotency.NewMemory(100_000, opts.TTL)
	}
	storage := jetstream.FileStorage
	if opts.MemoryStorage {
		storage = jetstream.MemoryStorage
	}
	cfg := jetstream.KeyValueConfig{
		Bucket:       conn.Bucket(BucketName),
		Description:  "ahp-server: remembered decisions and observations (idempotency)",
		TTL:          opts.TTL,
		MaxBytes:     opts.MaxBytes,
		MaxValueSize: maxValueBytes,
		History:      1,
		Storage:      storage,
		Replicas:     conn.Config().Replicas,
	}
	s := &Store{conn: conn, fallback: opts.Fallback, lookupFirst: opts.LookupFirst, ready: make(chan struct{})}
	conn.WhenAvailable(func() {
		if kv := s.kv.Load(); kv != nil {
			s.writeBackSoon(*kv)
		}
	})
	open := func(ctx context.Context) error {
		kv, err := conn.KeyValue(ctx, cfg)
		if err != nil {
			return fmt.Errorf("cluster: idempotency bucket %s: %w", cfg.Bucket, err)
		}
		s.kv.Store(&kv)
		close(s.ready)
		s.writeBackSoon(kv) // what was decided before the bucket was open
		// Checks ask the bucket's stream leader too: decisions can be shared while it answers,
		// even when the JetStream meta leader is being elected.
		conn.Probe(func(ctx context.Context) error {
			_, err := kv.Status(ctx)
			return err
		})
		return nil
	}
	if conn.DegradeAtStart() && !conn.NATS().IsConnected() {
		conn.Attach(nil, "idempotency bucket "+cfg.Bucket, cluster.ErrNotConnected, open)
		return s, nil
	}
	if err := open(ctx); err != nil {
		if !conn.DegradeAtStart() {
			return nil, err
		}
		conn.Attach(nil, "idempotency bucket "+cfg.Bucket, err, open)
	}
	return s, nil
}

// Attached reports whether the bucket is open (decisions are shared through it).
func (s *Store) Attached() bool { return s.kv.Load() != nil }

// Ready is closed once the bucket is open: at Open, or later after a start degraded.
func (s *Store) Ready() <-chan struct{} { return s.ready }

// bucket returns the bucket when it is open and NATS usable; otherwise it counts the call as a
// failed store operation and returns nil (the caller uses the local fallback).
func (s *Store) bucket() jetstream.KeyValue {
	kv := s.kv.Load()
	if kv == nil {
		s.conn.Failed(cluster.ErrNotAttached)
		return nil
	}
	if !s.conn.Usable() {
		return nil
	}
	return *kv
}

// kvKey turns an opaque idempotency key into a KV key: unpadded URL-safe base64 (the KV key
// alphabet), of a SHA-256 of the key when it is long.
func kvKey(kind, key string) string {
	if len(key) > 48 {
		sum := sha256.Sum256([]byte(key))
		key = string(sum[:])
	}
	return kind + "." + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// failed tells the connection, unless the operation's answer was a normal "not there" or "exists".
func (s *Store) failed(err error) {
	s.conn.Failed(err)
}

// Decision implements idempotency.Store. By default it answers from the local store only (what
// was decided here while degraded) and leaves the shared bucket to RememberDecision, whose
// create-if-absent finds a remembered decision anyway: a retry then costs one policy evaluation
// more, and every first decision one round trip less (Options.LookupFirst turns the lookup on).
func (s *Store) Decision(key string) (*ahpv1.Decision, bool) {
	if d, ok := s.fallback.Decision(key); ok || !s.lookupFirst {
		return d, ok
	}
	kv := s.bucket()
	if kv == nil {
		return nil, false
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	start := time.Now()
	e, err := kv.Get(ctx, kvKey("d", key))
	s.conn.Took("idempotency", "lookup", start)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		s.conn.Succeeded()
		return nil, false
	case err != nil:
		s.failed(err)
		return nil, false
	}
	s.conn.Succeeded()
	d := new(ahpv1.Decision)
	if err := proto.Unmarshal(e.Value(), d); err != nil {
		return nil, false
	}
	return d, true
}

// RememberDecision implements idempotency.Store: create-if-absent, so the first replica's decision
// stands.
func (s *Store) RememberDecision(key string, d *ahpv1.Decision) (*ahpv1.Decision, bool) {
	b, err := proto.Marshal(d)
	if err != nil || len(b) > maxValueBytes {
		return s.fallback.RememberDecision(key, d)
	}
	k := kvKey("d", key)
	kv := s.bucket()
	if kv == nil {
		return s.rememberLocally(key, k, d, b)
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	start := time.Now()
	_, err = kv.Create(ctx, k, b)
	s.conn.Took("idempotency", "claim", start)
	if err == nil {
		s.conn.Succeeded()
		s.writeBackSoon(kv)
		return d, true
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		s.failed(err)
		return s.rememberLocally(key, k, d, b)
	}
	s.conn.Succeeded()
	s.writeBackSoon(kv)
	e, err := kv.Get(ctx, k)
	if err != nil {
		// Created by someone else and gone (expired, forgotten) or unreadable: ours stands.
		return d, true
	}
	stands := new(ahpv1.Decision)
	if err := proto.Unmarshal(e.Value(), stands); err != nil {
		return d, true
	}
	return stands, false
}

// rememberLocally remembers d in the local fallback, because the bucket could not be reached,
// and, when it is the first decision for key here, queues it (KV key k, value b) to be written
// to the bucket once the bucket answers.
func (s *Store) rememberLocally(key, k string, d *ahpv1.Decision, b []byte) (*ahpv1.Decision, bool) {
	stands, stored := s.fallback.RememberDecision(key, d)
	if stored {
		s.back.add(k, b)
	}
	return stands, stored
}

func (w *writeBack) add(k string, v []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	size := len(k) + len(v) + writeBackEntryOverhead
	if _, ok := w.entries[k]; ok {
		return
	}
	if w.bytes+size > maxWriteBackBytes {
		w.dropped.Add(1)
		return
	}
	if w.entries == nil {
		w.entries = make(map[string][]byte)
	}
	w.entries[k] = v
	w.waiting.Store(int64(len(w.entries)))
	w.bytes += size
}

func (w *writeBack) remove(k string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if v, ok := w.entries[k]; ok {
		delete(w.entries, k)
		w.waiting.Store(int64(len(w.entries)))
		w.bytes -= len(k) + len(v) + writeBackEntryOverhead
	}
}

// next takes one waiting entry out, or reports none (and that no write-back runs any more).
func (w *writeBack) next() (k string, v []byte, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, v = range w.entries {
		delete(w.entries, k)
		w.waiting.Store(int64(len(w.entries)))
		w.bytes -= len(k) + len(v) + writeBackEntryOverhead
		return k, v, true
	}
	w.running = false
	return "", nil, false
}

// writeBackAttempt bounds one write-back (off the decision path).
const writeBackAttempt = 2 * time.Second

// writeBackSoon starts, unless one runs or nothing waits, a goroutine that writes what waits to
// kv, create-if-absent, until it is all written or the bucket stops answering (then what is
// left waits for the next successful operation). It is called after each successful operation,
// when the bucket opens, and when a degraded period ends.
func (s *Store) writeBackSoon(kv jetstream.KeyValue) {
	w := &s.back
	if w.waiting.Load() == 0 { // the usual case, after every successful operation: no lock taken
		return
	}
	w.mu.Lock()
	if w.running || len(w.entries) == 0 {
		w.mu.Unlock()
		return
	}
	w.running = true
	w.mu.Unlock()
	go func() {
		var written, conflicts int
		for {
			k, v, ok := w.next()
			if !ok {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), writeBackAttempt)
			_, err := kv.Create(ctx, k, v)
			cancel()
			switch {
			case err == nil:
				written++
				w.written.Add(1)
			case errors.Is(err, jetstream.ErrKeyExists):
				conflicts++
				w.conflicts.Add(1)
			default:
				w.add(k, v) // back in the queue, for the next success
				w.mu.Lock()
				w.running = false
				w.mu.Unlock()
				s.conn.Logger().Debug("cluster: writing local decisions to the idempotency bucket stopped; retried after the next success", "error", err)
				return
			}
		}
		s.conn.Logger().Info("cluster: decisions and observations remembered locally while the idempotency bucket was unreachable are in the bucket now",
			"written", written, "decided_elsewhere_first", conflicts)
	}()
}

// WriteBack returns the counters of the write-back.
func (s *Store) WriteBack() WriteBackStats {
	w := &s.back
	w.mu.Lock()
	pending, bytes := len(w.entries), w.bytes
	w.mu.Unlock()
	return WriteBackStats{Written: w.written.Load(), Conflicts: w.conflicts.Load(), Dropped: w.dropped.Load(), Pending: pending, PendingBytes: bytes}
}

// ForgetDecision implements idempotency.Store.
func (s *Store) ForgetDecision(key string) {
	s.fallback.ForgetDecision(key)
	s.back.remove(kvKey("d", key))
	s.delete(kvKey("d", key))
}

func (s *Store) delete(k string) {
	kv := s.bucket()
	if kv == nil {
		return
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	if err := kv.Purge(ctx, k); err != nil {
		s.failed(err)
	}
}

// observed is the value of an observation key: its presence is what counts.
var observed = []byte{1}

// FirstObservation implements idempotency.Store.
func (s *Store) FirstObservation(key string) bool {
	kv := s.bucket()
	if kv == nil {
		return s.observeLocally(key)
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	start := time.Now()
	_, err := kv.Create(ctx, kvKey("o", key), observed)
	s.conn.Took("idempotency", "observe", start)
	switch {
	case err == nil:
		s.conn.Succeeded()
		s.writeBackSoon(kv)
		return true
	case errors.Is(err, jetstream.ErrKeyExists):
		s.conn.Succeeded()
		s.writeBackSoon(kv)
		return false
	}
	s.failed(err)
	return s.observeLocally(key)
}

// observeLocally records the observation in the local fallback, because the bucket could not
// be reached, queued for the bucket when it is the first here.
func (s *Store) observeLocally(key string) bool {
	first := s.fallback.FirstObservation(key)
	if first {
		s.back.add(kvKey("o", key), observed)
	}
	return first
}

// ForgetObservation implements idempotency.Store.
func (s *Store) ForgetObservation(key string) {
	s.fallback.ForgetObservation(key)
	s.back.remove(kvKey("o", key))
	s.delete(kvKey("o", key))
}
