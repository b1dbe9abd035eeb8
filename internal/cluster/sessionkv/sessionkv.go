// Package sessionkv is the session memory of cluster mode: each session's record and each
// agent's facts in a NATS JetStream key-value bucket shared by every replica, so session-aware
// rules (a session.deny_count lockout, recent events, facts) see what every replica saw.
//
// Reads cost no round trip. Each replica keeps a local copy of the records (bounded by entries
// and bytes like the in-memory store) that a watch on the bucket keeps current: every replica's
// writes are pushed to every other. A View reads that copy, plus this replica's own writes not
// yet stored, so a replica always sees its own events at once and another replica's as soon as
// the watch delivers them (on loopback well under a millisecond after that replica wrote). Only
// a record the copy does not hold (evicted, or not yet delivered at start) is read from the
// bucket, within the lookup budget.
//
// Writes leave the decision path: RecordEvent and RecordDecision queue the change (bounded in
// bytes) and return; writer goroutines store it with compare-and-set, several queued changes to
// one record in one write, in the order they were made, re-reading and reapplying on a conflict
// so no replica's change is lost. A full queue makes the call write synchronously (counted);
// a write NATS refuses stays queued and is retried; Close stores what is queued. Records are
// bounded as in memory (ring sizes, the byte estimate), and the bucket by entries, bytes and age.
// While NATS cannot be reached the calls use a local in-memory session store and the connection
// is told (degraded mode). With on_start_unavailable: degrade and NATS unreachable at Open, the
// store starts on the local store and opens the bucket and its watch in the background, with
// backoff and at once on every (re)connect, until both work; session memory is shared from then on.
package sessionkv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/lru"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/nats-io/nats.go/jetstream"
)

// errNotOpen: the bucket is not open yet (NATS unreachable at start).
var errNotOpen = errors.New("session bucket not open yet")

// BucketName is the bucket's name without the installation prefix.
const BucketName = "sessions"

// maxRecordBytes bounds one stored record (the rings bound it well below this).
const maxRecordBytes = 1 << 20

// casAttempts bounds the compare-and-set retries of one write.
const casAttempts = 16

// writeTimeout bounds one write of the writer goroutines (they hold no decision).
const writeTimeout = 2 * time.Second

// Options tune the write queue; the zero value is the default.
type Options struct {
	// Sync writes every change before the call returns (one or two round trips per decision)
	// instead of queueing it.
	Sync bool
	// QueueBytes bounds the changes queued and not yet stored (default 8 MiB); past it a call
	// writes synchronously.
	QueueBytes int
	// Delay is how long a queued change waits for others to the same record, to be stored in
	// one write with them (default 0: none; cluster.session_write_delay). Another replica sees
	// a change up to Delay later; this replica sees its own at once.
	Delay time.Duration
	// JSON writes records in the JSON form of earlier versions, which they read, instead of the
	// compact binary one (cluster.session_format: json): for a rolling upgrade from such a
	// version, until none of its replicas runs. Both forms are always read.
	JSON bool
	// Writers is how many goroutines store queued changes (default 4).
	Writers int
	// CloseTimeout bounds storing what is queued at Close (default 5s).
	CloseTimeout time.Duration
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
}

// Store implements session.Store on a KV bucket.
type Store struct {
	conn          *cluster.Conn
	kv            atomic.Value // jetstream.KeyValue once the bucket is open
	bucketCfg     jetstream.KeyValueConfig
	opts          session.Options
	tune          Options
	recent, facts int
	maxBytes      int
	fallback      *session.Memory
	log           *slog.Logger

	mu sync.Mutex
	// known holds the records the watch delivered or this replica read or wrote, with nothing
	// queued; dirty the ones with changes queued or being written (never evicted).
	known *lru.Cache[string, *entry]
	dirty map[string]*entry
	// ready: the watch delivered the whole bucket; evicted: the local copy dropped a record for
	// room. Ready and nothing evicted, a key the copy does not hold is absent from the bucket.
	ready, evicted bool
	queue          []queued // dirty keys waiting for a writer, oldest first
	queuedBytes    int
	closing        bool
	wake           chan struct{}
	failing        bool // the last write failed: writers back off
	overfull       bool // changes are being dropped (logged once)
	stop           chan struct{}
	writers        sync.WaitGroup
	attached       <-chan struct{} // closed when the background opening (Conn.Attach) ended; nil without one
	life           context.Context
	endLife        context.CancelFunc
	watch          *cluster.KVWatch
	readyCh        chan struct{} // closed once the watch delivered the whole bucket
	changed        chan struct{} // closed at the next change the watch delivers
	closeOnce      sync.Once

	stats struct {
		reads, writes, coalesced, syncWrites, conflicts, failures, tooLarge, dropped, lostAtClose, undecodable atomic.Uint64
	}
}

// entry is one key's record: the bucket's value at a revision, and the local record (that value
// with the queued changes applied) that views read.
type entry struct {
	key, id  string // the KV key; the session or agent id
	kind     byte   // 's' session, 'a' agent
	loaded   bool   // rev and base are the bucket's (false: not read yet)
	rev      uint64 // 0: absent
	base     []byte
	baseRec  any    // base decoded (*session.Record or *session.AgentRecord), never changed; nil: not decoded yet
	local    any    // baseRec with the queued changes applied, changed in place unless shared; nil: baseRec as it is
	shared   bool   // local is also a write's value (writeRec, then baseRec): copy it before changing it
	writing  []byte // the value being written, to know its echo from the watch
	writeRec any    // writing decoded
	echoed   bool   // the watch delivered writing: it is stored, whatever the reply says
	foreign  bool   // another replica's value arrived during the write: rebuild local after it
	inflight []*op  // changes being written
	pending  []*op  // changes queued
	queued   bool   // in Store.queue
	flush    sync.Mutex
}

// queued is a key waiting for a writer since a moment.
type queued struct {
	key string
	at  time.Time
}

// op is one queued change.
type op struct {
	deny    bool // a denial (RecordDecision); else an event (RecordEvent)
	denied  bool // an event with its denial (RecordDecided)
	change  session.Change
	at      time.Time
	derived []*ahpv1.Fact
	size    int
	changed bool // applying it changed the local record (see apply)
}

var _ session.Store = (*Store)(nil)

// Open creates or updates the bucket with opts' bounds (session.Options defaults: 10000 sessions
// and 10000 agents, 24h, DefaultMaxBytes each), starts the watch that keeps the local copy
// current and the writers, and returns the store. Close stops them.
func Open(ctx context.Context, conn *cluster.Conn, opts session.Options, tune ...Options) (*Store, error) {
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
	var t Options
	if len(tune) > 0 {
		t = tune[0]
	}
	if t.QueueBytes <= 0 {
		t.QueueBytes = 8 << 20
	}
	if t.Writers <= 0 {
		t.Writers = 4
	}
	if t.CloseTimeout <= 0 {
		t.CloseTimeout = 5 * time.Second
	}
	if t.Logger == nil {
		t.Logger = slog.Default()
	}
	recent, facts := opts.Limits()
	// The local copy: entries unused for the bucket's TTL expire with it (a record unused that
	// long was not written that long either, so the bucket expired it too).
	known := lru.New[string, *entry](opts.MaxSessions+opts.MaxAgents, opts.TTL, nil)
	known.SetMaxBytes(2 * opts.MaxBytes)
	s := &Store{
		conn: conn, opts: opts, tune: t, recent: recent, facts: facts, maxBytes: opts.MaxBytes,
		bucketCfg: jetstream.KeyValueConfig{
			Bucket:       conn.Bucket(BucketName),
			Description:  "ahp-server: session memory (sessions and agents' facts)",
			TTL:          opts.TTL,
			MaxBytes:     2 * int64(opts.MaxBytes), // sessions and agents, as in memory
			MaxValueSize: maxRecordBytes,
			History:      1,
			Storage:      jetstream.FileStorage,
			Replicas:     conn.Config().Replicas,
		},
		fallback: session.NewMemory(opts), log: t.Logger,
		known: known, dirty: map[string]*entry{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), changed: make(chan struct{}),
		readyCh: make(chan struct{}),
	}
	s.life, s.endLife = context.WithCancel(context.Background())
	degrade := conn.Config().OnStartUnavailable == cluster.Degrade
	var err error
	if !degrade || conn.NATS().IsConnected() {
		if err = s.openBucket(ctx); err == nil {
			err = s.startWatch(ctx)
		}
	} else {
		err = cluster.ErrNotConnected
	}
	if err != nil {
		if !degrade {
			s.endLife()
			return nil, fmt.Errorf("cluster: session bucket %s: %w", conn.Bucket(BucketName), err)
		}
		s.attached = conn.Attach(s.stop, "session bucket "+conn.Bucket(BucketName), err, s.attach)
	}
	for range t.Writers {
		s.writers.Add(1)
		go s.write()
	}
	return s, nil
}

// openBucket creates or updates the bucket, once.
func (s *Store) openBucket(ctx context.Context) error {
	if s.bucket() != nil {
		return nil
	}
	kv, err := s.conn.KeyValue(ctx, s.bucketCfg)
	if err != nil {
		return err
	}
	s.kv.Store(kv)
	return nil
}

// bucket returns the bucket, or nil while it is not open yet.
func (s *Store) bucket() jetstream.KeyValue {
	kv, _ := s.kv.Load().(jetstream.KeyValue)
	return kv
}

// startWatch starts the watch that keeps the local copy current (the bucket is open).
func (s *Store) startWatch(ctx context.Context) error {
	w, err := cluster.WatchKV(ctx, s.conn, s.bucket(), ">", s.bucketCfg.Bucket, s.delivered, s.log)
	if err != nil {
		return fmt.Errorf("watching: %w", err)
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		w.Close()
		return nil
	}
	s.watch = w
	s.mu.Unlock()
	go func() {
		select {
		case <-w.Ready():
			s.mu.Lock()
			s.ready = true
			// A queued record the watch did not deliver is not in the bucket.
			for _, e := range s.dirty {
				if !e.loaded && !s.evicted {
					e.loaded = true
					s.rebuildLocked(e)
				}
			}
			s.mu.Unlock()
			close(s.readyCh)
		case <-s.stop:
		}
	}()
	return nil
}

// attach opens the bucket and starts its watch, for Conn.Attach after Open could not: until it
// succeeds the calls use the local store (the bucket is not open) or read the bucket (it is open,
// the watch not started yet).
func (s *Store) attach(ctx context.Context) error {
	if err := s.openBucket(ctx); err != nil {
		return err
	}
	return s.startWatch(ctx)
}

// Attached reports whether the bucket is open (session memory is written to it).
func (s *Store) Attached() bool { return s.bucket() != nil }

// Ready is closed once the watch delivered the whole bucket: from then on views read only the
// local copy (unless it evicted a record for room).
func (s *Store) Ready() <-chan struct{} { return s.readyCh }

// usable reports whether the calls should use the bucket now (else the local store).
func (s *Store) usable() bool {
	return s.bucket() != nil && s.conn.Usable()
}

// kvKey is the key of a session ('s') or agent ('a') id: the id in base64 (hashed when longer
// than 96 bytes), built in one allocation since every view and change asks for it.
func kvKey(kind byte, id string) string {
	var buf [2 + (maxKeyID*8+5)/6]byte // base64 without padding of maxKeyID bytes
	buf[0], buf[1] = kind, '.'
	var n int
	if len(id) > maxKeyID {
		sum := sha256.Sum256([]byte(id))
		n = base64.RawURLEncoding.EncodedLen(len(sum))
		base64.RawURLEncoding.Encode(buf[2:2+n], sum[:])
	} else {
		n = base64.RawURLEncoding.EncodedLen(len(id))
		base64.RawURLEncoding.Encode(buf[2:2+n], []byte(id)) // read only: the compiler copies nothing
	}
	return string(buf[:2+n])
}

// maxKeyID is the longest id a key holds as it is.
const maxKeyID = 96

// Stats are counters for metrics and tests.
type Stats struct {
	// Reads counts records read from the bucket because the local copy lacked them.
	Reads uint64
	// Writes counts records stored; Coalesced the changes that shared a write with another.
	Writes, Coalesced uint64
	// SyncWrites counts calls that wrote synchronously because the queue was full (or Sync).
	SyncWrites uint64
	// Conflicts counts compare-and-set conflicts (another replica wrote first; reapplied).
	Conflicts uint64
	// Failures counts writes NATS refused or did not answer (the changes stay queued).
	Failures uint64
	// TooLarge counts changes dropped because the record would exceed its byte bound.
	TooLarge uint64
	// Dropped counts changes refused because the queue held twice its bound (writes failing).
	Dropped uint64
	// LostAtClose counts changes still queued when Close gave up.
	LostAtClose uint64
	// Undecodable counts stored values read in neither record form (each is replaced by an
	// empty record at its next write).
	Undecodable uint64
	// QueuedBytes is the size of the changes queued now.
	QueuedBytes int
	// Cached is how many records the local copy holds.
	Cached int
	// Watching reports that the watch delivered the whole bucket: views read the local copy.
	Watching bool
}

// Stats returns the counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	q, n, watching := s.queuedBytes, s.known.Len()+len(s.dirty), s.ready
	s.mu.Unlock()
	return Stats{
		Reads: s.stats.reads.Load(), Writes: s.stats.writes.Load(), Coalesced: s.stats.coalesced.Load(), SyncWrites: s.stats.syncWrites.Load(),
		Conflicts: s.stats.conflicts.Load(), Failures: s.stats.failures.Load(), TooLarge: s.stats.tooLarge.Load(), Dropped: s.stats.dropped.Load(),
		LostAtClose: s.stats.lostAtClose.Load(), Undecodable: s.stats.undecodable.Load(), QueuedBytes: q, Cached: n, Watching: watching,
	}
}

// View implements session.Store: from the local copy, without a round trip unless the copy
// lacks the record. Its recent events are converted (LazyView leaves them compact).
func (s *Store) View(sessionID, agentID string) *policy.SessionView {
	v := s.LazyView(sessionID, agentID)
	if v.RecentEvents() == nil {
		v.Recent = []policy.EventSummary{}
	}
	return v
}

var _ session.LazyViewer = (*Store)(nil)

// LazyView implements session.LazyViewer: View with the recent events left in the compact form
// the record keeps, shared with it (issue 15: converting 64 of them was ~4.6 KB per decision);
// the view's events, facts and agent facts never change when the record does.
func (s *Store) LazyView(sessionID, agentID string) *policy.SessionView {
	if !s.usable() {
		return s.fallback.LazyView(sessionID, agentID)
	}
	v := &policy.SessionView{SessionID: sessionID, AgentID: agentID}
	if sessionID != "" {
		if err := s.fill(v, 's', sessionID); err != nil {
			s.conn.Failed(err)
			return s.fallback.LazyView(sessionID, agentID)
		}
	}
	if v.AgentID != "" {
		if err := s.fill(v, 'a', v.AgentID); err != nil {
			s.conn.Failed(err)
			return s.fallback.LazyView(sessionID, agentID)
		}
	}
	return v
}

// fill adds one record to v, reading it from the bucket when the local copy does not have it.
func (s *Store) fill(v *policy.SessionView, kind byte, id string) error {
	key := kvKey(kind, id)
	s.mu.Lock()
	e, ok := s.lookupLocked(key)
	if !ok && s.completeLocked() {
		s.mu.Unlock()
		return nil // absent from the bucket
	}
	if ok && e.loaded {
		s.fillLocked(v, e)
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	rev, value, err := s.read(ctx, key)
	if err != nil {
		return err
	}
	s.conn.Succeeded()
	s.mu.Lock()
	defer s.mu.Unlock()
	e = s.loadedLocked(key, kind, id, rev, value)
	s.fillLocked(v, e)
	return nil
}

// read gets key from the bucket: revision 0 when absent.
func (s *Store) read(ctx context.Context, key string) (uint64, []byte, error) {
	kv := s.bucket()
	if kv == nil {
		return 0, nil, errNotOpen
	}
	s.stats.reads.Add(1)
	start := time.Now()
	e, err := kv.Get(ctx, key)
	s.conn.Took("sessions", "read", start)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	return e.Revision(), e.Value(), nil
}

func (s *Store) lookupLocked(key string) (*entry, bool) {
	if e, ok := s.dirty[key]; ok {
		return e, true
	}
	return s.known.Get(key)
}

// loadedLocked records that key is at rev with value in the bucket (unless what we hold is
// newer) and returns its entry.
func (s *Store) loadedLocked(key string, kind byte, id string, rev uint64, value []byte) *entry {
	e, ok := s.lookupLocked(key)
	if !ok {
		e = &entry{key: key, id: id, kind: kind}
	}
	if !e.loaded || rev > e.rev {
		s.setBaseLocked(e, rev, value, nil)
	}
	if _, isDirty := s.dirty[key]; !isDirty {
		s.keepLocked(e)
	}
	return e
}

// keepLocked puts a clean entry into the local copy, noting an eviction (the copy is then no
// longer complete).
func (s *Store) keepLocked(e *entry) {
	_, had := s.known.Get(e.key)
	n := s.known.Len()
	s.known.Put(e.key, e)
	s.known.Resize(e.key, entrySize(e))
	if want := n + btoi(!had); s.known.Len() < want {
		s.evicted = true
	}
}

// completeLocked reports whether the local copy holds every record of the bucket.
func (s *Store) completeLocked() bool { return s.ready && !s.evicted }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// entrySize estimates an entry's memory: the key, the value, and the value decoded (a full binary
// record of 1.3 KB decodes to about 2 KB of windows and counters, facts to their text and a
// message each), all within four times the value's length.
func entrySize(e *entry) int { return 2*len(e.key) + 4*len(e.base) + 128 }

// setBaseLocked records the bucket's value of e at rev (rec: value decoded, or nil) and brings
// the local record up to date: at once, or after the write in progress.
func (s *Store) setBaseLocked(e *entry, rev uint64, value []byte, rec any) {
	e.loaded, e.rev, e.base, e.baseRec = true, rev, value, rec
	switch {
	case len(e.inflight) > 0:
		// A write is in progress: the local record is brought up to date when it ends (it
		// cannot tell yet whether this value has the write's changes).
		e.foreign = true
		if e.local == nil {
			s.rebuildLocked(e)
		}
	case len(e.pending) > 0:
		s.rebuildLocked(e)
	default:
		setLocal(e, nil)
	}
}

// setLocal gives e a local record that only e holds (or none).
func setLocal(e *entry, rec any) { e.local, e.shared = rec, false }

// baseLocked returns e's base decoded.
func (s *Store) baseLocked(e *entry) any {
	if e.baseRec == nil {
		e.baseRec = s.decode(e.kind, e.base)
	}
	return e.baseRec
}

// viewLocked returns the record a view reads (not to be changed).
func (s *Store) viewLocked(e *entry) any {
	if e.local != nil {
		return e.local
	}
	return s.baseLocked(e)
}

// localLocked returns e's local record for changing.
func (s *Store) localLocked(e *entry) any {
	switch {
	case e.local == nil:
		setLocal(e, clone(s.baseLocked(e)))
	case e.shared:
		setLocal(e, clone(e.local))
	}
	return e.local
}

// clone copies a record for Apply to change the copy only: the windows are shared, and pushing
// to the copy's leaves the original's as they were (session.Window).
func clone(rec any) any {
	switch r := rec.(type) {
	case *session.Record:
		c := *r
		return &c
	case *session.AgentRecord:
		c := *r
		return &c
	}
	return rec
}

// decode reads a stored value (nil: absent); a value that does not decode is replaced by an
// empty record at the next write (counted).
func (s *Store) decode(kind byte, b []byte) any {
	if kind == 'a' {
		a, err := decodeAgent(b, s.facts)
		if b != nil && err != nil {
			s.stats.undecodable.Add(1)
		}
		return a
	}
	r, err := decodeRecord(b, s.recent, s.facts)
	if b != nil && err != nil {
		s.stats.undecodable.Add(1)
	}
	return r
}

// encode returns rec's stored form.
func (s *Store) encode(rec any) ([]byte, error) {
	if s.tune.JSON {
		return encodeJSON(rec)
	}
	return encode(rec), nil
}

// encode returns rec's binary form.
func encode(rec any) []byte {
	switch r := rec.(type) {
	case *session.Record:
		return encodeRecord(make([]byte, 0, encodedSize(r)), r)
	case *session.AgentRecord:
		return encodeAgent(make([]byte, 0, 8+factsSize(r.Facts.NewestFirst())), r)
	}
	return nil
}

// rebuildLocked recomputes e's local record from its base and its queued changes.
func (s *Store) rebuildLocked(e *entry) {
	local := clone(s.baseLocked(e))
	setLocal(e, local)
	for _, o := range e.inflight {
		o.changed = s.apply(e, local, o)
	}
	for _, o := range e.pending {
		o.changed = s.apply(e, local, o)
	}
}

// apply applies one change to rec, with the rules of the in-memory store; false when it
// changes nothing.
func (s *Store) apply(e *entry, rec any, o *op) bool {
	switch r := rec.(type) {
	case *session.Record:
		if o.deny {
			if r.FirstSeen.IsZero() {
				return false // as in memory: only a session seen before counts denials
			}
			r.Denies++
			return true
		}
		r.ApplyChange(o.change, o.at, o.derived, s.recent, s.facts)
		if o.denied {
			r.Denies++
		}
		return true
	case *session.AgentRecord:
		r.Apply(o.derived, s.facts)
		return true
	}
	return false
}

func (s *Store) fits(e *entry, rec any) bool {
	if r, ok := rec.(*session.Record); ok {
		return r.Bytes(e.id, s.recent, s.facts) <= s.maxBytes
	}
	return true
}

func (s *Store) fillLocked(v *policy.SessionView, e *entry) {
	switch r := s.viewLocked(e).(type) {
	case *session.Record:
		r.Fill(v)
	case *session.AgentRecord:
		r.Fill(v)
	}
}

// delivered takes an entry from the watch: another replica's write (or this one's, already
// known), a deletion or an expiry.
func (s *Store) delivered(kve jetstream.KeyValueEntry, _ bool) {
	key := kve.Key()
	if len(key) < 3 || key[1] != '.' || key[0] != 's' && key[0] != 'a' {
		return
	}
	var value []byte
	if kve.Operation() == jetstream.KeyValuePut {
		value = kve.Value()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notifyLocked()
	e, ok := s.lookupLocked(key)
	if ok && e.loaded && kve.Revision() <= e.rev {
		return // this replica's own write, or older
	}
	if !ok {
		if value == nil {
			return
		}
		id, err := base64.RawURLEncoding.DecodeString(key[2:])
		if err != nil {
			return
		}
		e = &entry{key: key, id: string(id), kind: key[0]}
	}
	rev := kve.Revision()
	if e.writing != nil && bytes.Equal(value, e.writing) {
		// This replica's write in progress, back before its acknowledgement: the local record
		// has its changes already.
		e.rev, e.base, e.baseRec, e.echoed = rev, value, e.writeRec, true
		if e.local == nil && len(e.pending) > 0 {
			local := clone(e.writeRec)
			setLocal(e, local)
			for _, o := range e.pending {
				o.changed = s.apply(e, local, o)
			}
		}
		return
	}
	if value == nil {
		rev = 0 // deleted or purged: the next write creates it
		if len(e.inflight)+len(e.pending) == 0 {
			s.known.Delete(key)
			return
		}
	}
	s.setBaseLocked(e, rev, value, nil)
	if _, isDirty := s.dirty[key]; !isDirty {
		s.keepLocked(e)
	}
}

// Changed returns a channel closed when the watch next delivers a change (another replica's
// write, or this one's coming back), or when another replica's value that arrived during a write
// of this one reaches the views (at the write's end), for a caller waiting until a view shows
// it: take the channel, check the view, and wait on the channel only if the view does not show
// it yet.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// notifyLocked closes the channel Changed returned.
func (s *Store) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// RecordEvent implements session.Store.
func (s *Store) RecordEvent(ev *ahpv1.Event, at time.Time) {
	s.record(ev, at, nil)
}

// RecordDecision implements session.Store: a denial counts towards the session's deny count.
func (s *Store) RecordDecision(ev *ahpv1.Event, d *ahpv1.Decision) {
	sid := ev.GetSession().GetId()
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY || sid == "" {
		return
	}
	if !s.usable() {
		s.fallback.RecordDecision(ev, d)
		return
	}
	s.enqueue('s', sid, &op{deny: true, size: 64})
}

// RecordDecided is RecordEvent and RecordDecision in one call (the decision core uses it): the
// event and its denial are one queued change, so they reach the bucket in one write.
func (s *Store) RecordDecided(ev *ahpv1.Event, at time.Time, d *ahpv1.Decision) {
	s.record(ev, at, d)
}

func (s *Store) record(ev *ahpv1.Event, at time.Time, d *ahpv1.Decision) {
	if !s.usable() {
		s.fallback.RecordEvent(ev, at)
		if d != nil {
			s.fallback.RecordDecision(ev, d)
		}
		return
	}
	sid := ev.GetSession().GetId()
	derived := session.DeriveFacts(ev, s.opts.Redactor)
	// A queued change holds what it changes (not the event) and the derived facts: size is
	// what the queue's byte bound counts.
	change := session.ChangeOf(ev)
	size := change.Bytes() + 64
	for _, f := range derived {
		size += len(f.Content) + len(f.Source) + 48
	}
	agentID := change.AgentID
	if sid != "" {
		s.enqueue('s', sid, &op{change: change, at: at, derived: derived, size: size, denied: d.GetVerdict() == ahpv1.Verdict_VERDICT_DENY})
	}
	if agentID != "" && len(derived) > 0 {
		s.enqueue('a', agentID, &op{derived: derived, size: size})
	}
}

// enqueue applies o to the local record at once and queues it for the bucket; with the queue
// full (or Sync) it writes the record before returning.
func (s *Store) enqueue(kind byte, id string, ops ...*op) {
	key := kvKey(kind, id)
	s.mu.Lock()
	if s.queuedBytes > 2*s.tune.QueueBytes {
		// Writes have been failing long enough to fill the queue twice over: memory bounds
		// win, the change is dropped (counted, logged once per episode).
		first := !s.overfull
		s.overfull = true
		s.mu.Unlock()
		s.stats.dropped.Add(1)
		if first {
			s.log.Error("cluster: session write queue full while NATS refuses writes; session changes dropped until it drains", "queue_bytes", s.tune.QueueBytes)
		}
		return
	}
	s.overfull = false
	e, ok := s.dirty[key]
	if !ok {
		if e, ok = s.known.Get(key); ok {
			s.known.Delete(key)
		} else {
			e = &entry{key: key, id: id, kind: kind, loaded: s.completeLocked()}
		}
		s.dirty[key] = e
	}
	e.pending = append(e.pending, ops...)
	for _, o := range ops {
		if e.loaded {
			o.changed = s.apply(e, s.localLocked(e), o)
		}
		s.queuedBytes += o.size
	}
	sync := s.tune.Sync || s.queuedBytes > s.tune.QueueBytes || s.closing
	if !sync && !e.queued {
		e.queued = true
		s.queue = append(s.queue, queued{key: key, at: time.Now()})
	}
	s.mu.Unlock()
	if !sync {
		select {
		case s.wake <- struct{}{}:
		default:
		}
		return
	}
	if !s.tune.Sync {
		s.stats.syncWrites.Add(1)
	}
	ctx, cancel := s.conn.Budget(context.Background())
	defer cancel()
	if err := s.flushKey(ctx, e); err != nil {
		s.conn.Failed(err)
		s.requeue(e)
		return
	}
	s.conn.Succeeded()
}

// requeue hands e to the writers again after a failed write.
func (s *Store) requeue(e *entry) {
	s.mu.Lock()
	if !e.queued && len(e.pending) > 0 {
		e.queued = true
		s.queue = append(s.queue, queued{key: e.key}) // no delay: it waited already
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// write is one writer goroutine: it stores the queued records until Close.
func (s *Store) write() {
	defer s.writers.Done()
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		s.mu.Lock()
		var e *entry
		var due time.Duration // until the oldest key has waited the delay
		if len(s.queue) > 0 && !s.failing {
			if due = time.Until(s.queue[0].at.Add(s.tune.Delay)); due <= 0 || s.closing {
				due = 0
				key := s.queue[0].key
				s.queue[0] = queued{}
				s.queue = s.queue[1:]
				e = s.dirty[key]
				if e == nil { // stored meanwhile (Flush, or a synchronous write)
					s.mu.Unlock()
					continue
				}
				e.queued = false
			}
		}
		waiting := len(s.queue) > 0
		s.mu.Unlock()
		if e != nil && waiting {
			select { // more keys: another writer takes the next
			case s.wake <- struct{}{}:
			default:
			}
		}
		if e == nil {
			var retry, delay <-chan time.Time
			switch {
			case due > 0: // coalescing: more changes to the key may come meanwhile
				delay = time.After(due)
			case waiting: // backing off after a failure
				retry = time.After(backoff)
				backoff = min(2*backoff, 2*time.Second)
			}
			select {
			case <-s.wake:
			case <-delay:
			case <-retry:
				s.mu.Lock()
				s.failing = false
				s.mu.Unlock()
			case <-s.stop:
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		err := s.flushKey(ctx, e)
		cancel()
		if err != nil {
			if !s.closed() {
				s.conn.Failed(err)
			}
			s.mu.Lock()
			s.failing = true
			s.mu.Unlock()
			s.requeue(e)
			continue
		}
		backoff = 50 * time.Millisecond
		s.conn.Succeeded()
	}
}

func (s *Store) closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// flushKey writes e's queued changes: read the record if it was never read, apply the changes
// in order, compare-and-set, and on a conflict read again and reapply. On an error the changes
// stay queued.
func (s *Store) flushKey(ctx context.Context, e *entry) error {
	e.flush.Lock()
	defer e.flush.Unlock()
	s.mu.Lock()
	if len(e.pending) == 0 {
		s.mu.Unlock()
		return nil
	}
	e.inflight, e.pending = e.pending, nil
	loaded, rev := e.loaded, e.rev
	var base, ready any
	readyChanged := false
	if loaded {
		base = s.baseLocked(e)
		if e.local != nil {
			// The local record is the base with exactly these changes (nothing else is queued):
			// it is the value to write, shared until the next change copies it.
			ready, e.shared = e.local, true
			for _, o := range e.inflight {
				readyChanged = readyChanged || o.changed
			}
		}
	}
	s.mu.Unlock()
	var err error
	for attempt := 0; ; attempt++ {
		if !loaded {
			var value []byte
			if rev, value, err = s.read(ctx, e.key); err != nil {
				break
			}
			s.mu.Lock()
			s.loadedLocked(e.key, e.kind, e.id, rev, value)
			loaded, rev, base, ready = true, e.rev, s.baseLocked(e), nil
			s.mu.Unlock()
		}
		if attempt == casAttempts {
			err = fmt.Errorf("session update: %d compare-and-set conflicts in a row", casAttempts)
			break
		}
		rec, changed := ready, readyChanged
		if rec == nil {
			rec = clone(base)
			for _, o := range e.inflight {
				changed = s.apply(e, rec, o) || changed
			}
		}
		if !changed {
			s.done(e, 0, nil, nil)
			return nil
		}
		if !s.fits(e, rec) {
			s.stats.tooLarge.Add(uint64(len(e.inflight)))
			s.mu.Lock()
			if e.foreign {
				e.foreign = false
				s.notifyLocked()
			}
			s.dropInflightLocked(e)
			s.rebuildLocked(e)
			s.settleLocked(e)
			s.mu.Unlock()
			return nil
		}
		b, merr := s.encode(rec)
		if merr != nil {
			err = merr
			break
		}
		s.mu.Lock()
		e.writing, e.writeRec = b, rec
		s.mu.Unlock()
		var newRev uint64
		kv := s.bucket() // open: the change was queued for it
		start := time.Now()
		if rev == 0 {
			newRev, err = kv.Create(ctx, e.key, b)
		} else {
			newRev, err = kv.Update(ctx, e.key, b, rev)
		}
		s.conn.Took("sessions", "write", start)
		if err == nil {
			s.done(e, newRev, b, rec)
			return nil
		}
		s.mu.Lock()
		e.writing, e.writeRec, e.echoed = nil, nil, false
		s.mu.Unlock()
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			s.mu.Lock()
			echoed := e.echoed
			s.mu.Unlock()
			if echoed { // the reply was lost or late, but the watch saw the write stored
				s.done(e, 0, nil, nil)
				return nil
			}
			break
		}
		s.stats.conflicts.Add(1)
		loaded = false // another replica wrote first: read again and reapply
	}
	// Not stored: the changes go back to the front of the queue, in order.
	s.stats.failures.Add(1)
	s.mu.Lock()
	e.pending = append(e.inflight, e.pending...)
	e.inflight = nil
	if e.foreign {
		e.foreign = false
		s.rebuildLocked(e)
		s.notifyLocked()
	}
	s.mu.Unlock()
	return err
}

// done records a successful write of e's changes (rev 0: nothing needed writing).
func (s *Store) done(e *entry, rev uint64, value []byte, rec any) {
	s.stats.writes.Add(btou(rev != 0))
	s.stats.coalesced.Add(uint64(len(e.inflight) - 1))
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev > e.rev { // else the watch delivered this write, or a later one, first
		e.rev, e.base, e.baseRec = rev, value, rec
	}
	e.writing, e.writeRec, e.echoed = nil, nil, false
	s.dropInflightLocked(e)
	if e.foreign {
		// Another replica's value arrived during the write: the local record is the new base
		// with what is still queued.
		e.foreign = false
		s.rebuildLocked(e)
		s.notifyLocked() // views change now, not at the value's delivery
	}
	s.settleLocked(e)
}

func btou(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (s *Store) dropInflightLocked(e *entry) {
	for _, o := range e.inflight {
		s.queuedBytes -= o.size
	}
	e.inflight = nil
}

// settleLocked moves an entry with nothing queued back into the local copy.
func (s *Store) settleLocked(e *entry) {
	if len(e.pending) > 0 || len(e.inflight) > 0 || s.dirty[e.key] != e {
		return
	}
	delete(s.dirty, e.key)
	if e.loaded {
		if len(e.pending) == 0 && e.local != nil && e.baseRec != nil {
			setLocal(e, nil) // the base is the record: no second copy
		}
		s.keepLocked(e)
	}
}

// Flush stores everything queued now, waiting until it is stored or ctx ends.
func (s *Store) Flush(ctx context.Context) error {
	for {
		s.mu.Lock()
		var e *entry
		for _, d := range s.dirty {
			if len(d.pending) > 0 {
				e = d
				break
			}
		}
		busy := len(s.dirty) > 0
		s.mu.Unlock()
		if e == nil && !busy {
			return nil
		}
		if e != nil {
			if err := s.flushKey(ctx, e); err != nil {
				return err
			}
			continue
		}
		// Only writes in progress: wait for them (each entry's flush lock).
		s.mu.Lock()
		var inflight []*entry
		for _, d := range s.dirty {
			inflight = append(inflight, d)
		}
		s.mu.Unlock()
		for _, d := range inflight {
			d.flush.Lock() // waits for the write in progress
			s.mu.Lock()
			s.settleLocked(d)
			s.mu.Unlock()
			d.flush.Unlock()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Close stores what is queued (for up to Options.CloseTimeout), then stops the watch and the
// writers. Changes it could not store are counted and logged; calls after Close write
// synchronously.
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.tune.CloseTimeout)
		defer cancel()
		err := s.Flush(ctx)
		s.mu.Lock()
		s.closing = true
		lost := 0
		for _, e := range s.dirty {
			lost += len(e.pending) + len(e.inflight)
		}
		s.mu.Unlock()
		close(s.stop)
		s.endLife()
		s.writers.Wait()
		if s.attached != nil {
			<-s.attached
		}
		s.mu.Lock()
		w := s.watch
		s.mu.Unlock()
		if w != nil {
			w.Close()
		}
		if lost > 0 {
			s.stats.lostAtClose.Add(uint64(lost))
			s.log.Error("cluster: session changes not stored at shutdown (NATS unavailable)", "changes", lost, "error", err)
		}
	})
}
