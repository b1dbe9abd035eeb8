// Package idempotency remembers recent decisions and observations by (source, event id), so a
// retried event gets the same decision without being evaluated again, and a re-sent observation is
// not counted twice.
package idempotency

import (
	"crypto/sha256"
	"math"
	"sync"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
)

// Store is what the decision core needs; the in-process Memory implements it, and
// cluster/idemkv shares it between replicas. Keys are opaque strings (see Key); a Store must not
// assume their length or alphabet.
type Store interface {
	// Decision returns the decision remembered for key. A store whose lookups cost a round trip
	// may answer false for a remembered key, as long as RememberDecision then reports it (the
	// core replays what RememberDecision returns, so the caller gets the same answer; it only
	// evaluates the policy once more, without side effects).
	Decision(key string) (*ahpv1.Decision, bool)
	// RememberDecision stores d under key unless a decision is there already (another replica
	// may have decided the same event at the same moment: the first writer wins). It returns the
	// decision that stands — d, or the one remembered before — and whether d was stored. A Store
	// keeps what d says at the time of the call, never d itself (both implementations keep its
	// encoding), so the caller may go on changing d without changing what a retry replays.
	RememberDecision(key string, d *ahpv1.Decision) (stands *ahpv1.Decision, stored bool)
	// ForgetDecision removes key, so a decision that could not be recorded is made afresh on retry.
	ForgetDecision(key string)
	// FirstObservation records key and reports whether it was new.
	FirstObservation(key string) bool
	// ForgetObservation removes key, so an observation that could not be recorded can be retried.
	ForgetObservation(key string)
}

// Key builds the idempotency key of an event: a SHA-256 (32 bytes, not text) over its source, its
// id and its deterministic protobuf encoding. Events without a source (the Harness protocol has
// none) are scoped by agent id instead, so two agents cannot collide. A short fixed-size key keeps
// the stores' maps small and cheap to hash.
//
// The fingerprint matters for safety: a retry reuses the id and the content, so it is recognised;
// but an event that reuses an id with different content (Harness clients reuse JSON-RPC ids
// freely; a buggy or hostile Hooks client might) must be evaluated on its own, never handed the
// decision of the earlier, possibly harmless, event.
func Key(ev *ahpv1.Event) string {
	key, _ := KeyAndSize(ev)
	return key
}

// KeyAndSize is Key, and the size of ev's protobuf encoding, which Key computes anyway (-1 when
// ev cannot be encoded).
func KeyAndSize(ev *ahpv1.Event) (key string, size int) {
	buf := marshalBuffers.Get().(*[]byte)
	defer marshalBuffers.Put(buf)
	// One buffer, one hash: scope, 0, id, 0, encoding (issue 18: no hash state or sum on the heap).
	b := (*buf)[:0]
	if scope := ev.GetSource(); scope != "" {
		b = append(b, scope...)
	} else {
		agent := ev.GetHarness().GetAgentId()
		if agent == "" {
			agent = ev.GetSession().GetAgent().GetId()
		}
		b = append(append(b, "agent:"...), agent...)
	}
	b = append(append(append(b, 0), ev.GetId()...), 0)
	prefix := len(b)
	size = -1
	if enc, err := (proto.MarshalOptions{Deterministic: true}).MarshalAppend(b, ev); err != nil {
		b = append(b, "unmarshalable"...)
	} else {
		b, size = enc, len(enc)-prefix
	}
	if cap(b) <= maxPooledBuffer {
		*buf = b
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), size
}

// marshalBuffers recycles the buffers Key encodes events into; one over maxPooledBuffer (a huge
// event) is left to the garbage collector.
var marshalBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledBuffer = 64 << 10

// Memory is the in-process Store, bounded by entries, bytes and time.
//
// Its entries are cheap for the garbage collector to mark (issue 18: full stores of pointer-rich
// entries were most of the live heap each collection marks): keys are kept as fixed-size arrays,
// the recency list links slots by index, and a decision is kept as its protobuf encoding, one
// pointer-free byte slice per entry, decoded again only when a retry asks for it.
type Memory struct {
	decisions    *table
	observations *table
}

// DefaultMaxBytes bounds the encoded decisions a Memory keeps (with their per-entry overhead);
// the least recently used go first.
const DefaultMaxBytes = 64 << 20

// NewMemory keeps up to capacity decisions and capacity observations for ttl each (ttl <= 0:
// until evicted), the decisions within DefaultMaxBytes.
func NewMemory(capacity int, ttl time.Duration) *Memory {
	return &Memory{
		decisions:    newTable(capacity, DefaultMaxBytes, ttl, nil),
		observations: newTable(capacity, 0, ttl, nil),
	}
}

// Decision implements Store. The decision returned is the caller's own copy.
func (m *Memory) Decision(key string) (*ahpv1.Decision, bool) {
	b, odd, ok := m.decisions.get(fix(key))
	if !ok {
		return nil, false
	}
	return decode(b, odd)
}

// RememberDecision implements Store. What is kept is d's encoding, so changing d afterwards does
// not change what a retry gets; when d stands it is returned as it is.
func (m *Memory) RememberDecision(key string, d *ahpv1.Decision) (*ahpv1.Decision, bool) {
	b, err := proto.Marshal(d)
	size := len(b)
	var odd *ahpv1.Decision
	if err != nil {
		// Not encodable (a string that is not UTF-8 in a reason taken from the input, say): kept
		// as a copy of the message instead; rare, and still within the bounds.
		b, odd, size = nil, proto.CloneOf(d), proto.Size(d)
	}
	pb, prev, existed := m.decisions.getOrPut(fix(key), b, odd, size)
	if !existed {
		return d, true
	}
	stands, ok := decode(pb, prev)
	if !ok {
		return d, true // cannot happen: the bytes were encoded here
	}
	return stands, false
}

func decode(b []byte, odd *ahpv1.Decision) (*ahpv1.Decision, bool) {
	if odd != nil {
		return proto.CloneOf(odd), true
	}
	d := new(ahpv1.Decision)
	if err := proto.Unmarshal(b, d); err != nil {
		return nil, false
	}
	return d, true
}

// ForgetDecision implements Store.
func (m *Memory) ForgetDecision(key string) { m.decisions.delete(fix(key)) }

// FirstObservation implements Store.
func (m *Memory) FirstObservation(key string) bool {
	_, _, existed := m.observations.getOrPut(fix(key), nil, nil, 0)
	return !existed
}

// ForgetObservation implements Store.
func (m *Memory) ForgetObservation(key string) { m.observations.delete(fix(key)) }

// fixedKey is a key as a table keeps it: the key itself when it is as long as Key's (the usual
// case), else its SHA-256, marked as such so the two kinds never meet.
type fixedKey struct {
	sum    [sha256.Size]byte
	hashed bool
}

func fix(key string) fixedKey {
	var k fixedKey
	if len(key) == sha256.Size {
		copy(k.sum[:], key)
		return k
	}
	k.sum, k.hashed = sha256.Sum256([]byte(key)), true
	return k
}

// entryOverhead estimates an entry's bytes besides its encoding: its slot, its index entry and
// its slice header.
const entryOverhead = 128

// table is a least-recently-used map of fixed keys to immutable byte strings with a per-entry time
// to live (refreshed on use), bounded by entries and, when maxBytes > 0, by bytes. The index and
// the slots hold no pointers; data holds one per entry, to bytes the collector need not scan.
type table struct {
	mu       sync.Mutex
	capacity int
	maxBytes int
	bytes    int
	ttl      time.Duration
	now      func() time.Time
	index    map[fixedKey]int32
	slots    []slot
	data     [][]byte                  // by slot
	odd      map[int32]*ahpv1.Decision // by slot: decisions that would not encode
	head     int32                     // most recently used slot; -1 when empty
	tail     int32                     // least recently used; -1 when empty
	free     int32                     // first free slot, linked through next; -1 when none
}

type slot struct {
	key        fixedKey
	prev, next int32
	expires    int64 // UnixNano; unused when ttl <= 0
	size       int32 // estimated bytes, for the byte bound
}

func newTable(capacity, maxBytes int, ttl time.Duration, now func() time.Time) *table {
	capacity = max(capacity, 1)
	if now == nil {
		now = time.Now
	}
	return &table{
		capacity: capacity, maxBytes: max(maxBytes, 0), ttl: ttl, now: now,
		index: make(map[fixedKey]int32), odd: make(map[int32]*ahpv1.Decision),
		head: -1, tail: -1, free: -1,
	}
}

// lookupLocked finds k's live slot and marks it used; an expired entry is removed.
func (t *table) lookupLocked(k fixedKey, now int64) (int32, bool) {
	i, ok := t.index[k]
	if !ok {
		return -1, false
	}
	if t.ttl > 0 && now > t.slots[i].expires {
		t.removeLocked(i)
		return -1, false
	}
	t.slots[i].expires = now + int64(t.ttl)
	t.unlinkLocked(i)
	t.pushFrontLocked(i)
	return i, true
}

func (t *table) get(k fixedKey) ([]byte, *ahpv1.Decision, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.lookupLocked(k, t.now().UnixNano())
	if !ok {
		return nil, nil, false
	}
	return t.data[i], t.odd[i], true
}

// getOrPut returns the live entry of k (existed true), or keeps b (or odd) under k. size is the
// encoding's length, for the byte bound.
func (t *table) getOrPut(k fixedKey, b []byte, odd *ahpv1.Decision, size int) ([]byte, *ahpv1.Decision, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now().UnixNano()
	if i, ok := t.lookupLocked(k, now); ok {
		return t.data[i], t.odd[i], true
	}
	var i int32
	if t.free >= 0 {
		i, t.free = t.free, t.slots[t.free].next
	} else {
		i = int32(len(t.slots))
		t.slots = append(t.slots, slot{})
		t.data = append(t.data, nil)
	}
	t.slots[i] = slot{key: k, expires: now + int64(t.ttl), size: int32(min(entryOverhead+size, math.MaxInt32))}
	t.data[i] = b
	if odd != nil {
		t.odd[i] = odd
	}
	t.bytes += int(t.slots[i].size)
	t.index[k] = i
	t.pushFrontLocked(i)
	for len(t.index) > t.capacity || (t.maxBytes > 0 && t.bytes > t.maxBytes && len(t.index) > 1) {
		t.removeLocked(t.tail)
	}
	return nil, nil, false
}

func (t *table) delete(k fixedKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.index[k]; ok {
		t.removeLocked(i)
	}
}

func (t *table) removeLocked(i int32) {
	t.unlinkLocked(i)
	delete(t.index, t.slots[i].key)
	delete(t.odd, i)
	t.bytes -= int(t.slots[i].size)
	t.data[i] = nil
	t.slots[i] = slot{next: t.free, prev: -1}
	t.free = i
}

func (t *table) unlinkLocked(i int32) {
	s := &t.slots[i]
	if s.prev >= 0 {
		t.slots[s.prev].next = s.next
	} else {
		t.head = s.next
	}
	if s.next >= 0 {
		t.slots[s.next].prev = s.prev
	} else {
		t.tail = s.prev
	}
	s.prev, s.next = -1, -1
}

func (t *table) pushFrontLocked(i int32) {
	s := &t.slots[i]
	s.prev, s.next = -1, t.head
	if t.head >= 0 {
		t.slots[t.head].prev = i
	} else {
		t.tail = i
	}
	t.head = i
}
