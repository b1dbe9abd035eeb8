// Package approvalkv is the approval store of cluster mode: every approval in a NATS JetStream
// key-value bucket shared by every replica, so pending approvals survive a restart of any replica
// and a call held on one replica is released by a decision made through another.
//
// Keys: "a.<id>" holds one approval (JSON, with the replica that last wrote it); "k.<action key>"
// is the index of the action's pending or granted approval, created with create-if-absent so two
// replicas opening the same action at once get one approval. Every state change is a
// compare-and-set on the record's revision (Decide, Consume, Expire, SetAbandoned), so a grant
// is consumed exactly once across replicas and a second decision never overwrites the first.
//
// A watcher on the bucket keeps a local mirror (bounded as approval.Memory is) that feeds
// Subscribe, List and the pending caps; Get and every change read the bucket itself.
package approvalkv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// BucketName is the bucket's name without the installation prefix.
const BucketName = "approvals"

const (
	// casAttempts bounds the compare-and-set retries of one change.
	casAttempts = 16
	// maxValue bounds one stored approval (the fields' bounds keep it well below).
	maxValue = 256 << 10
	// opTimeout bounds one store operation: approvals are off the fast path (a held call
	// waits for a person), so this is longer than the lookup budget.
	opTimeout = 5 * time.Second
	// orphanAge is how long an index entry without its record is taken for an Open in flight
	// on another replica, before it is treated as left behind by a crash.
	orphanAge = 5 * time.Second
	// purgeEvery is how often Expire drops old delete markers.
	purgeEvery = 10 * time.Minute
)

// record is the stored value.
type record struct {
	Origin   string            `json:"o"`
	Approval approval.Approval `json:"a"`
}

// index is the stored value of an action key's entry.
type index struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// Store implements approval.Store on a KV bucket.
type Store struct {
	conn   *cluster.Conn
	kv     jetstream.KeyValue
	opts   approval.MemoryOptions
	origin string
	log    *slog.Logger

	mu      sync.Mutex
	mirror  map[string]approval.Approval // id -> latest seen
	sizes   map[string]int               // id -> stored bytes of its record
	bytes   int
	purged  time.Time // last PurgeDeletes
	subs    map[int]func(approval.Change)
	nextSub int

	// watch feeds the mirror and the subscribers from the bucket, in the bucket's order, and
	// resumes after a reconnect from the last revision seen (cluster.WatchKV). Set under mu.
	watch *cluster.KVWatch
	// attached is set once kv is open and the mirror loaded (at Open, or later in the
	// background after a start degraded); until then every call answers as NATS unavailable.
	attached atomic.Bool
	ready    chan struct{} // closed when attached is set
	closed   bool          // under mu
	stop     chan struct{} // closed by Close: ends a background attach
}

var _ approval.Store = (*Store)(nil)

// Open creates or updates the bucket and starts the watcher; it returns once the mirror holds
// the bucket's current approvals. opts bound it as they bound approval.Memory (same defaults).
// With on_start_unavailable degrade and the bucket not available (NATS not reachable yet), it
// returns at once a store that answers as while NATS is down (approval.ErrUnavailable) and opens
// the bucket in the background when NATS comes.
func Open(ctx context.Context, conn *cluster.Conn, opts approval.MemoryOptions, log *slog.Logger) (*Store, error) {
	opts = withDefaults(opts)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var o [8]byte
	_, _ = rand.Read(o[:])
	s := &Store{
		conn: conn, opts: opts, origin: hex.EncodeToString(o[:]), log: log,
		mirror: map[string]approval.Approval{}, sizes: map[string]int{}, subs: map[int]func(approval.Change){},
		stop: make(chan struct{}), ready: make(chan struct{}),
	}
	what := "approval bucket " + conn.Bucket(BucketName)
	if conn.DegradeAtStart() && !conn.NATS().IsConnected() {
		conn.Attach(s.stop, what, cluster.ErrNotConnected, s.attach)
		return s, nil
	}
	if err := s.attach(ctx); err != nil {
		if !conn.DegradeAtStart() {
			return nil, err
		}
		conn.Attach(s.stop, what, err, s.attach)
	}
	return s, nil
}

// attach opens the bucket, starts the watcher and waits until the mirror is loaded.
func (s *Store) attach(ctx context.Context) error {
	conn := s.conn
	kv, err := conn.KeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      conn.Bucket(BucketName),
		Description: "ahp-server: human approvals (records and action-key index)",
		// Records, index entries and delete markers; the store evicts before the bucket is full.
		MaxBytes:     2*int64(s.opts.MaxBytes) + 1<<20,
		MaxValueSize: maxValue,
		History:      1,
		Storage:      jetstream.FileStorage,
		Replicas:     conn.Config().Replicas,
	})
	if err != nil {
		return fmt.Errorf("cluster: approval bucket %s: %w", conn.Bucket(BucketName), err)
	}
	w, err := cluster.WatchKV(context.Background(), conn, kv, "a.*", conn.Bucket(BucketName), s.apply, s.log)
	if err != nil {
		return fmt.Errorf("cluster: watching approval bucket: %w", err)
	}
	select {
	case <-w.Ready():
	case <-ctx.Done():
		w.Close()
		return fmt.Errorf("cluster: loading approvals: %w", ctx.Err())
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		w.Close() // outside mu: the watcher's deliveries take it
		return errors.New("approval store closed")
	}
	s.watch, s.kv = w, kv
	s.attached.Store(true)
	close(s.ready)
	s.mu.Unlock()
	return nil
}

// usable reports whether calls should use the bucket now: attached and NATS usable. When not
// it counts the call as a failed store operation.
func (s *Store) usable() bool {
	if !s.attached.Load() {
		s.conn.Failed(cluster.ErrNotAttached)
		return false
	}
	return s.conn.Usable()
}

// Attached reports whether the bucket is open and the mirror loaded.
func (s *Store) Attached() bool { return s.attached.Load() }

// Ready is closed once the store is attached: at Open, or later after a start degraded.
func (s *Store) Ready() <-chan struct{} { return s.ready }

func withDefaults(o approval.MemoryOptions) approval.MemoryOptions {
	if o.MaxPending <= 0 {
		o.MaxPending = 1000
	}
	if o.MaxPendingPerAgent <= 0 {
		o.MaxPendingPerAgent = 100
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 10_000
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 16 << 20
	}
	if o.Retain <= 0 {
		o.Retain = 24 * time.Hour
	}
	return o
}

// Close stops the watcher (or the background attach).
func (s *Store) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	w := s.watch
	s.mu.Unlock()
	if w != nil {
		w.Close() // outside mu: the watcher's deliveries take it
	}
}

func recKey(id string) string    { return "a." + base64.RawURLEncoding.EncodeToString([]byte(id)) }
func indexKey(key string) string { return "k." + base64.RawURLEncoding.EncodeToString([]byte(key)) }

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

func (s *Store) apply(e jetstream.KeyValueEntry, notify bool) {
	id, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(e.Key(), "a."))
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, had := s.mirror[string(id)]
	if e.Operation() != jetstream.KeyValuePut {
		if had {
			delete(s.mirror, string(id))
			s.bytes -= s.sizes[string(id)]
			delete(s.sizes, string(id))
		}
		return
	}
	var r record
	if json.Unmarshal(e.Value(), &r) != nil || r.Approval.ID != string(id) {
		return
	}
	a := r.Approval
	a.Revision = e.Revision()
	if had {
		if prev.Revision >= a.Revision {
			return
		}
		s.bytes -= s.sizes[a.ID]
	}
	s.mirror[a.ID] = a
	s.sizes[a.ID] = storedSize(e.Key(), e.Value())
	s.bytes += s.sizes[a.ID]
	if !notify {
		return
	}
	kind := changeKind(prev, had, a)
	if kind == 0 {
		return
	}
	for _, fn := range s.subs {
		fn(approval.Change{Kind: kind, Approval: a.Clone(), Remote: r.Origin != s.origin})
	}
}

// changeKind names what turned prev into a.
func changeKind(prev approval.Approval, had bool, a approval.Approval) approval.ChangeKind {
	switch {
	case !had || prev.State == 0:
		if a.State == approval.StatePending {
			return approval.Requested
		}
		return kindOfEnd(a)
	case prev.State == approval.StatePending && a.State != approval.StatePending:
		return kindOfEnd(a)
	case prev.ConsumedAt.IsZero() && !a.ConsumedAt.IsZero():
		return approval.Consumed
	case prev.Abandoned != a.Abandoned:
		return approval.Abandoned
	}
	return 0
}

func kindOfEnd(a approval.Approval) approval.ChangeKind {
	switch a.State {
	case approval.StateExpired:
		return approval.Expired
	case approval.StateApproved, approval.StateDenied:
		if !a.ConsumedAt.IsZero() {
			return approval.Consumed
		}
		return approval.Decided
	}
	return 0
}

// storedSize is what one record takes in the bucket: key, value and the message's overhead.
func storedSize(key string, value []byte) int { return len(key) + len(value) + 128 }

// load reads one approval and its revision.
func (s *Store) load(ctx context.Context, id string) (approval.Approval, uint64, error) {
	e, err := s.kv.Get(ctx, recKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return approval.Approval{}, 0, approval.ErrNotFound
	}
	if err != nil {
		return approval.Approval{}, 0, err
	}
	var r record
	if err := json.Unmarshal(e.Value(), &r); err != nil || r.Approval.ID != id {
		return approval.Approval{}, 0, approval.ErrNotFound
	}
	a := r.Approval
	a.Revision = e.Revision()
	return a, e.Revision(), nil
}

func (s *Store) encode(a approval.Approval) ([]byte, error) {
	a.Revision = 0
	return json.Marshal(record{Origin: s.origin, Approval: a})
}

// change applies fn to the approval id with compare-and-set; fn returns false (with its error)
// to write nothing.
func (s *Store) change(ctx context.Context, id string, fn func(*approval.Approval) (bool, error)) (approval.Approval, error) {
	for range casAttempts {
		a, rev, err := s.load(ctx, id)
		if err != nil {
			return a, err
		}
		write, err := fn(&a)
		if !write {
			return a, err
		}
		b, err := s.encode(a)
		if err != nil {
			return a, err
		}
		newRev, err := s.kv.Update(ctx, recKey(id), b, rev)
		if err == nil {
			a.Revision = newRev
			return a, nil
		}
		if !isConflict(err) {
			return a, err
		}
	}
	return approval.Approval{}, fmt.Errorf("approval %d compare-and-set conflicts in a row", casAttempts)
}

func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

// Open implements approval.Store.
func (s *Store) Open(a approval.Approval, now time.Time) (approval.Approval, bool, error) {
	if !s.usable() {
		return approval.Approval{}, false, approval.ErrUnavailable
	}
	ctx, cancel := s.ctx()
	defer cancel()
	s.Expire(now)
	a = a.Clone()
	a.State = approval.StatePending
	ib, err := json.Marshal(index{ID: a.ID, At: now})
	if err != nil {
		return approval.Approval{}, false, err
	}
	for range casAttempts {
		e, err := s.kv.Get(ctx, indexKey(a.Key))
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return approval.Approval{}, false, s.failed(err)
		default:
			var ix index
			_ = json.Unmarshal(e.Value(), &ix)
			cur, _, err := s.load(ctx, ix.ID)
			switch {
			case err == nil && (cur.State == approval.StatePending || cur.Granted(now)):
				return cur.Clone(), false, nil
			case errors.Is(err, approval.ErrNotFound) && now.Sub(ix.At) < orphanAge && ix.ID != "":
				// Another replica's Open is between the index and the record: wait for it.
				if waitErr := s.waitRecord(ctx, ix.ID); waitErr != nil {
					return approval.Approval{}, false, s.failed(waitErr)
				}
				continue
			case err != nil && !errors.Is(err, approval.ErrNotFound):
				return approval.Approval{}, false, s.failed(err)
			}
			// Ended, used or left behind: the action may ask afresh.
			if err := s.kv.Delete(ctx, indexKey(a.Key), jetstream.LastRevision(e.Revision())); err != nil && !isConflict(err) {
				return approval.Approval{}, false, s.failed(err)
			}
			continue
		}
		if err := s.admit(ctx, a); err != nil {
			return approval.Approval{}, false, err
		}
		if _, err := s.kv.Create(ctx, indexKey(a.Key), ib); err != nil {
			if isConflict(err) {
				continue // another replica opened the action first: join it
			}
			return approval.Approval{}, false, s.failed(err)
		}
		b, err := s.encode(a)
		if err != nil {
			return approval.Approval{}, false, err
		}
		rev, err := s.kv.Create(ctx, recKey(a.ID), b)
		if err != nil {
			_ = s.kv.Delete(ctx, indexKey(a.Key))
			return approval.Approval{}, false, s.failed(err)
		}
		a.Revision = rev
		s.conn.Succeeded()
		return a.Clone(), true, nil
	}
	return approval.Approval{}, false, fmt.Errorf("%w: open: %d compare-and-set conflicts in a row", approval.ErrUnavailable, casAttempts)
}

// waitRecord waits until the record id appears (another replica is creating it) or ctx ends.
func (s *Store) waitRecord(ctx context.Context, id string) error {
	w, err := s.kv.Watch(ctx, recKey(id))
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	wait, cancel := context.WithTimeout(ctx, orphanAge)
	defer cancel()
	for {
		select {
		case e := <-w.Updates():
			if e != nil {
				return nil
			}
		case <-wait.Done():
			return nil // taken for left behind on the next look
		}
	}
}

// admit checks the pending caps against the mirror and evicts the oldest decided approvals
// until a fits the entry and byte bounds; ErrFull when it cannot.
func (s *Store) admit(ctx context.Context, a approval.Approval) error {
	b, err := s.encode(a)
	if err != nil {
		return err
	}
	// The record, its index entry and, once decided, its comment and approver.
	need := storedSize(recKey(a.ID), b) + 256 + approval.MaxComment
	s.mu.Lock()
	pending, perAgent := 0, 0
	var ended []approval.Approval
	for _, m := range s.mirror {
		if m.State == approval.StatePending {
			pending++
			if m.Agent == a.Agent {
				perAgent++
			}
		} else {
			ended = append(ended, m)
		}
	}
	entries, bytes := len(s.mirror), s.bytes
	s.mu.Unlock()
	if pending >= s.opts.MaxPending || perAgent >= s.opts.MaxPendingPerAgent {
		return approval.ErrFull
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].CreatedAt.Before(ended[j].CreatedAt) })
	for entries >= s.opts.MaxEntries || bytes+need > s.opts.MaxBytes {
		if len(ended) == 0 {
			return approval.ErrFull
		}
		old := ended[0]
		ended = ended[1:]
		s.mu.Lock()
		freed := s.sizes[old.ID] // before the watcher sees the delete
		s.mu.Unlock()
		if err := s.forget(ctx, old); err != nil {
			return s.failed(err)
		}
		entries, bytes = entries-1, bytes-freed
	}
	return nil
}

// forget deletes an ended approval (unless it changed since) and its index entry if it still
// names it.
func (s *Store) forget(ctx context.Context, a approval.Approval) error {
	if err := s.kv.Delete(ctx, recKey(a.ID), jetstream.LastRevision(a.Revision)); err != nil && !isConflict(err) {
		return err
	}
	s.dropIndex(ctx, a)
	return nil
}

// dropIndex deletes the index entry of a's action key when it names a.
func (s *Store) dropIndex(ctx context.Context, a approval.Approval) {
	e, err := s.kv.Get(ctx, indexKey(a.Key))
	if err != nil {
		return
	}
	var ix index
	if json.Unmarshal(e.Value(), &ix) == nil && ix.ID == a.ID {
		_ = s.kv.Delete(ctx, indexKey(a.Key), jetstream.LastRevision(e.Revision()))
	}
}

// failed tells the connection and returns err.
func (s *Store) failed(err error) error {
	s.conn.Failed(err)
	return fmt.Errorf("%w: %w", approval.ErrUnavailable, err)
}

// Get implements approval.Store.
func (s *Store) Get(id string, now time.Time) (approval.Approval, error) {
	if !s.usable() {
		return approval.Approval{}, approval.ErrUnavailable
	}
	ctx, cancel := s.ctx()
	defer cancel()
	a, _, err := s.load(ctx, id)
	if err != nil && !errors.Is(err, approval.ErrNotFound) {
		return a, s.failed(err)
	}
	if err == nil && a.State != approval.StatePending && now.Sub(a.DecidedAt) > s.opts.Retain && !a.Granted(now) {
		return approval.Approval{}, approval.ErrNotFound // past retention; Expire deletes it
	}
	return a.Clone(), err
}

// List implements approval.Store: the mirror, newest first.
func (s *Store) List(f approval.Filter, now time.Time) []approval.Approval {
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = 100
	case limit > 1000:
		limit = 1000
	}
	s.mu.Lock()
	all := make([]approval.Approval, 0, len(s.mirror))
	for _, a := range s.mirror {
		if f.Match(a) && !(a.State != approval.StatePending && now.Sub(a.DecidedAt) > s.opts.Retain && !a.Granted(now)) {
			all = append(all, a)
		}
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID > all[j].ID
	})
	if len(all) > limit {
		all = all[:limit]
	}
	out := make([]approval.Approval, len(all))
	for i, a := range all {
		out[i] = a.Clone()
	}
	return out
}

// Decide implements approval.Store.
func (s *Store) Decide(id string, d approval.Decision, now time.Time) (approval.Approval, error) {
	if !s.usable() {
		return approval.Approval{}, approval.ErrUnavailable
	}
	ctx, cancel := s.ctx()
	defer cancel()
	a, err := s.change(ctx, id, func(a *approval.Approval) (bool, error) {
		switch {
		case a.State == approval.StateApproved || a.State == approval.StateDenied:
			return false, approval.ErrDecided
		case a.State == approval.StateExpired:
			return false, approval.ErrExpired
		case !now.Before(a.HoldUntil):
			expire(a, now)
			return true, nil
		}
		a.DecidedAt, a.DecidedBy, a.Comment = now, d.By, d.Comment
		if d.Approve {
			a.State, a.GrantUntil = approval.StateApproved, now.Add(a.TTL)
		} else {
			a.State = approval.StateDenied
		}
		return true, nil
	})
	switch {
	case err == nil && a.State == approval.StateExpired:
		s.dropIndex(ctx, a)
		return a.Clone(), approval.ErrExpired
	case err == nil && a.State == approval.StateDenied:
		s.dropIndex(ctx, a)
	case err != nil && !errors.Is(err, approval.ErrNotFound) && !errors.Is(err, approval.ErrDecided) && !errors.Is(err, approval.ErrExpired):
		return a, s.failed(err)
	}
	return a.Clone(), err
}

func expire(a *approval.Approval, now time.Time) {
	a.State, a.DecidedAt = approval.StateExpired, now
}

// Consume implements approval.Store.
func (s *Store) Consume(key, eventKey string, now time.Time) (approval.Approval, bool) {
	if !s.usable() {
		return approval.Approval{}, false
	}
	ctx, cancel := s.ctx()
	defer cancel()
	e, err := s.kv.Get(ctx, indexKey(key))
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			_ = s.failed(err)
		}
		return approval.Approval{}, false
	}
	var ix index
	if json.Unmarshal(e.Value(), &ix) != nil {
		return approval.Approval{}, false
	}
	ok := false
	a, err := s.change(ctx, ix.ID, func(a *approval.Approval) (bool, error) {
		switch {
		case a.Key != key || a.State != approval.StateApproved || !now.Before(a.GrantUntil):
			return false, nil
		case !a.ConsumedAt.IsZero():
			ok = a.ConsumedBy == eventKey
			return false, nil
		}
		a.ConsumedAt, a.ConsumedBy = now, eventKey
		ok = true
		return true, nil
	})
	if err != nil {
		if !errors.Is(err, approval.ErrNotFound) {
			_ = s.failed(err)
		}
		return approval.Approval{}, false
	}
	if !ok {
		return approval.Approval{}, false
	}
	return a.Clone(), true
}

// Expire implements approval.Store: pending approvals whose hold ended become expired, and
// ended ones past retention are deleted. Every replica may run it; conflicts are skipped.
func (s *Store) Expire(now time.Time) {
	s.mu.Lock()
	var due, old []approval.Approval
	for _, a := range s.mirror {
		switch {
		case a.State == approval.StatePending && !now.Before(a.HoldUntil):
			due = append(due, a)
		case a.State != approval.StatePending && now.Sub(a.DecidedAt) > s.opts.Retain && !a.Granted(now):
			old = append(old, a)
		}
	}
	if !s.usable() {
		s.mu.Unlock()
		return
	}
	purge := now.Sub(s.purged) > purgeEvery
	if purge {
		s.purged = now
	}
	s.mu.Unlock()
	ctx, cancel := s.ctx()
	defer cancel()
	if purge {
		// Delete markers are the bucket's only unbounded growth: drop the old ones, off the
		// caller's path (one at a time: the next waits purgeEvery).
		go func() {
			pctx, pcancel := context.WithTimeout(context.Background(), time.Minute)
			defer pcancel()
			_ = s.kv.PurgeDeletes(pctx, jetstream.DeleteMarkersOlderThan(purgeEvery))
		}()
	}
	for _, a := range due {
		got, err := s.change(ctx, a.ID, func(a *approval.Approval) (bool, error) {
			if a.State != approval.StatePending || now.Before(a.HoldUntil) {
				return false, nil
			}
			expire(a, now)
			return true, nil
		})
		if err == nil && got.State == approval.StateExpired {
			s.dropIndex(ctx, got)
		}
	}
	for _, a := range old {
		_ = s.forget(ctx, a)
	}
}

// SetAbandoned implements approval.Store.
func (s *Store) SetAbandoned(id string, abandoned bool) {
	if !s.usable() {
		return
	}
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.change(ctx, id, func(a *approval.Approval) (bool, error) {
		if a.State != approval.StatePending || a.Abandoned == abandoned {
			return false, nil
		}
		a.Abandoned = abandoned
		return true, nil
	})
	if err != nil && !errors.Is(err, approval.ErrNotFound) {
		_ = s.failed(err)
	}
}

// Subscribe implements approval.Store: fn gets every change made through any replica, in the
// bucket's order; Change.Remote says it was made by another replica.
func (s *Store) Subscribe(fn func(approval.Change)) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

// Len reports the approvals in the mirror and the pending ones.
func (s *Store) Len() (total, pending int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.mirror {
		if a.State == approval.StatePending {
			pending++
		}
	}
	return len(s.mirror), pending
}
