// Package idemkv is the idempotency store of cluster mode: remembered decisions and observations
// in a NATS JetStream key-value bucket shared by every replica, so a retry that reaches another
// replica is answered with the same decision, and the same event sent to two replicas at once is
// decided once (create-if-absent: the first writer wins).
//
// Every operation is bounded by the lookup budget. When NATS fails or is late the store falls
// back to a local in-memory one for that call (degrade) and tells the connection, which logs the
// start and the end of the degraded period and, in fail-closed mode, makes the core deny instead.
package idemkv

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
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
	open := func(ctx context.Context) error {
		kv, err := conn.KeyValue(ctx, cfg)
		if err != nil {
			return fmt.Errorf("cluster: idempotency bucket %s: %w", cfg.Bucket, err)
		}
		s.kv.Store(&kv)
		close(s.ready)
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
	kv := s.bucket()
	if kv == nil {
		return s.fallback.RememberDecision(key, d)
	}
	k := kvKey("d", key)
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	start := time.Now()
	_, err = kv.Create(ctx, k, b)
	s.conn.Took("idempotency", "claim", start)
	if err == nil {
		s.conn.Succeeded()
		return d, true
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		s.failed(err)
		return s.fallback.RememberDecision(key, d)
	}
	s.conn.Succeeded()
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

// ForgetDecision implements idempotency.Store.
func (s *Store) ForgetDecision(key string) {
	s.fallback.ForgetDecision(key)
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
		return s.fallback.FirstObservation(key)
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	start := time.Now()
	_, err := kv.Create(ctx, kvKey("o", key), observed)
	s.conn.Took("idempotency", "observe", start)
	switch {
	case err == nil:
		s.conn.Succeeded()
		return true
	case errors.Is(err, jetstream.ErrKeyExists):
		s.conn.Succeeded()
		return false
	}
	s.failed(err)
	return s.fallback.FirstObservation(key)
}

// ForgetObservation implements idempotency.Store.
func (s *Store) ForgetObservation(key string) {
	s.fallback.ForgetObservation(key)
	s.delete(kvKey("o", key))
}
