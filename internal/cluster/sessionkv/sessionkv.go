// Package sessionkv is the session memory of cluster mode: each session's record and each
// agent's facts in a NATS JetStream key-value bucket shared by every replica, so session-aware
// rules (a session.deny_count lockout, recent events, facts) see what every replica saw.
//
// Updates are compare-and-set: read the record and its revision, apply the event with the same
// rules as the in-process memory (session.Record), write it back only if the revision is still
// the one read, and retry on a conflict. Records are bounded as in memory (ring sizes, the byte
// estimate), and the bucket by entries, bytes and age. Every operation is bounded by the lookup
// budget; when NATS fails or is late the call falls back to a local in-memory session store and
// the connection is told (degraded mode).
package sessionkv

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/lru"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/nats-io/nats.go/jetstream"
)

// BucketName is the bucket's name without the installation prefix.
const BucketName = "sessions"

// maxRecordBytes bounds one stored record (the rings bound it well below this).
const maxRecordBytes = 1 << 20

// casAttempts bounds the compare-and-set retries of one update.
const casAttempts = 16

// Store implements session.Store on a KV bucket.
type Store struct {
	conn          *cluster.Conn
	kv            jetstream.KeyValue
	opts          session.Options
	recent, facts int
	maxBytes      int
	fallback      session.Store
	// seen remembers the last revision of each key this replica read or wrote, so the update
	// that follows a View (every decision does both) writes without reading again; a conflict
	// (another replica wrote since) falls back to reading.
	seen *lru.Cache[string, seenRecord]
}

// seenRecord is one key's value at one revision.
type seenRecord struct {
	rev   uint64
	value []byte
}

var _ session.Store = (*Store)(nil)

// Open creates or updates the bucket with opts' bounds (session.Options defaults: 10000 sessions
// and 10000 agents, 24h, DefaultMaxBytes each) and returns the store.
func Open(ctx context.Context, conn *cluster.Conn, opts session.Options) (*Store, error) {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 10000
	}
	if opts.MaxAgents <= 0 {
		opts.MaxAgents = 10000
	}
	if opts.TTL <= 0 {
		opts.TTL = 24 * time.Hour
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = session.DefaultMaxBytes
	}
	if opts.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return nil, err // the defaults always compile
		}
		opts.Redactor = r
	}
	recent, facts := opts.Limits()
	kv, err := conn.KeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:       conn.Bucket(BucketName),
		Description:  "ahp-server: session memory (sessions and agents' facts)",
		TTL:          opts.TTL,
		MaxBytes:     2 * int64(opts.MaxBytes), // sessions and agents, as in memory
		MaxValueSize: maxRecordBytes,
		History:      1,
		Storage:      jetstream.FileStorage,
		Replicas:     conn.Config().Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: session bucket %s: %w", conn.Bucket(BucketName), err)
	}
	return &Store{
		conn: conn, kv: kv, opts: opts, recent: recent, facts: facts, maxBytes: opts.MaxBytes,
		fallback: session.NewMemory(opts),
		seen:     newSeen(opts),
	}, nil
}

func newSeen(opts session.Options) *lru.Cache[string, seenRecord] {
	c := lru.New[string, seenRecord](opts.MaxSessions+opts.MaxAgents, time.Minute, nil)
	c.SetMaxBytes(opts.MaxBytes)
	return c
}

func (s *Store) remember(key string, rev uint64, value []byte) {
	s.seen.Put(key, seenRecord{rev: rev, value: value})
	s.seen.Resize(key, len(key)+len(value)+64)
}

func kvKey(kind, id string) string {
	if len(id) > 96 {
		sum := sha256.Sum256([]byte(id))
		id = string(sum[:])
	}
	return kind + "." + base64.RawURLEncoding.EncodeToString([]byte(id))
}

// View implements session.Store.
func (s *Store) View(sessionID, agentID string) *policy.SessionView {
	if !s.conn.Usable() {
		return s.fallback.View(sessionID, agentID)
	}
	v := &policy.SessionView{SessionID: sessionID, AgentID: agentID}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	if sessionID != "" {
		var r session.Record
		found, err := s.get(ctx, kvKey("s", sessionID), &r)
		if err != nil {
			s.conn.Failed(err)
			return s.fallback.View(sessionID, agentID)
		}
		if found {
			r.Fill(v)
		}
	}
	if v.AgentID != "" {
		var a session.AgentRecord
		found, err := s.get(ctx, kvKey("a", v.AgentID), &a)
		if err != nil {
			s.conn.Failed(err)
			return s.fallback.View(sessionID, agentID)
		}
		if found {
			a.Fill(v)
		}
	}
	s.conn.Succeeded()
	return v
}

// get reads key into into; found is false when the key is absent. A record that does not decode
// counts as absent (it is replaced on the next update).
func (s *Store) get(ctx context.Context, key string, into any) (found bool, err error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		s.seen.Delete(key)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.remember(key, e.Revision(), e.Value())
	return json.Unmarshal(e.Value(), into) == nil, nil
}

// RecordEvent implements session.Store.
func (s *Store) RecordEvent(ev *ahpv1.Event, at time.Time) {
	sid := ev.GetSession().GetId()
	agentID := session.AgentOf(ev)
	derived := session.DeriveFacts(ev, s.opts.Redactor)
	if !s.conn.Usable() {
		s.fallback.RecordEvent(ev, at)
		return
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	if sid != "" {
		err := update(ctx, s, kvKey("s", sid), func(r *session.Record) bool {
			r.Apply(ev, at, derived, s.recent, s.facts)
			return true
		}, func(r *session.Record) bool { return r.Bytes(sid, s.recent, s.facts) <= s.maxBytes })
		if err != nil {
			s.conn.Failed(err)
			s.fallback.RecordEvent(ev, at)
			return
		}
	}
	if agentID != "" && len(derived) > 0 {
		err := update(ctx, s, kvKey("a", agentID), func(a *session.AgentRecord) bool {
			a.Apply(derived, s.facts)
			return true
		}, func(*session.AgentRecord) bool { return true })
		if err != nil {
			s.conn.Failed(err)
			s.fallback.RecordEvent(ev, at)
			return
		}
	}
	s.conn.Succeeded()
}

// RecordDecision implements session.Store: a denial counts towards the session's deny count.
func (s *Store) RecordDecision(ev *ahpv1.Event, d *ahpv1.Decision) {
	sid := ev.GetSession().GetId()
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || sid == "" {
		return
	}
	if !s.conn.Usable() {
		s.fallback.RecordDecision(ev, d)
		return
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	err := update(ctx, s, kvKey("s", sid), func(r *session.Record) bool {
		if r.FirstSeen.IsZero() {
			return false // as in memory: only a session seen before counts denials
		}
		r.Denies++
		return true
	}, func(*session.Record) bool { return true })
	if err != nil {
		s.conn.Failed(err)
		s.fallback.RecordDecision(ev, d)
		return
	}
	s.conn.Succeeded()
}

// errTooLarge refuses a record over the byte bound; the update is dropped, as memory would
// evict it.
var errTooLarge = errors.New("session record over its byte bound")

// update applies change to the record at key with compare-and-set, retrying on conflicts. change
// returning false writes nothing; fits false refuses the write.
func update[T any](ctx context.Context, s *Store, key string, change func(*T) bool, fits func(*T) bool) error {
	cached, haveCached := s.seen.Get(key)
	for range casAttempts {
		var rec T
		var rev uint64
		var value []byte
		if haveCached {
			rev, value, haveCached = cached.rev, cached.value, false // once: a conflict reads afresh
		} else {
			e, err := s.kv.Get(ctx, key)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
			case err != nil:
				return err
			default:
				rev, value = e.Revision(), e.Value()
			}
		}
		if value != nil && json.Unmarshal(value, &rec) != nil {
			var zero T
			rec = zero
		}
		if !change(&rec) {
			return nil
		}
		if !fits(&rec) {
			return errTooLarge
		}
		b, err := json.Marshal(&rec)
		if err != nil {
			return err
		}
		var newRev uint64
		if rev == 0 {
			newRev, err = s.kv.Create(ctx, key, b)
		} else {
			newRev, err = s.kv.Update(ctx, key, b, rev)
		}
		if err == nil {
			s.remember(key, newRev, b)
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			s.seen.Delete(key)
			return err
		}
		// Another replica wrote first: read again and reapply.
	}
	s.seen.Delete(key)
	return fmt.Errorf("session update: %d compare-and-set conflicts in a row", casAttempts)
}
