// Package idempotency remembers recent decisions and observations by (source, event id), so a
// retried event gets the same decision without being evaluated again, and a re-sent observation is
// not counted twice.
package idempotency

import (
	"crypto/sha256"
	"sync"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/lru"
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
	// decision that stands — d, or the one remembered before — and whether d was stored.
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
	scope := ev.GetSource()
	if scope == "" {
		agent := ev.GetHarness().GetAgentId()
		if agent == "" {
			agent = ev.GetSession().GetAgent().GetId()
		}
		scope = "agent:" + agent
	}
	buf := marshalBuffers.Get().(*[]byte)
	defer marshalBuffers.Put(buf)
	h := sha256.New()
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write([]byte(ev.GetId()))
	h.Write([]byte{0})
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend((*buf)[:0], ev)
	if err != nil {
		h.Write([]byte("unmarshalable"))
	} else {
		h.Write(b)
		if cap(b) <= maxPooledBuffer {
			*buf = b
		}
	}
	return string(h.Sum(make([]byte, 0, sha256.Size)))
}

// marshalBuffers recycles the buffers Key encodes events into; one over maxPooledBuffer (a huge
// event) is left to the garbage collector.
var marshalBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledBuffer = 64 << 10

// Memory is the in-process Store, bounded by size and time.
type Memory struct {
	decisions    *lru.Cache[string, *ahpv1.Decision]
	observations *lru.Cache[string, struct{}]
}

// NewMemory keeps up to capacity decisions and capacity observations for ttl each.
func NewMemory(capacity int, ttl time.Duration) *Memory {
	return &Memory{
		decisions:    lru.New[string, *ahpv1.Decision](capacity, ttl, nil),
		observations: lru.New[string, struct{}](capacity, ttl, nil),
	}
}

// Decision implements Store.
func (m *Memory) Decision(key string) (*ahpv1.Decision, bool) { return m.decisions.Get(key) }

// RememberDecision implements Store.
func (m *Memory) RememberDecision(key string, d *ahpv1.Decision) (*ahpv1.Decision, bool) {
	stands, existed := m.decisions.GetOrCreate(key, func() *ahpv1.Decision { return d })
	return stands, !existed
}

// ForgetDecision implements Store.
func (m *Memory) ForgetDecision(key string) { m.decisions.Delete(key) }

// FirstObservation implements Store.
func (m *Memory) FirstObservation(key string) bool {
	_, existed := m.observations.GetOrCreate(key, func() struct{} { return struct{}{} })
	return !existed
}

// ForgetObservation implements Store.
func (m *Memory) ForgetObservation(key string) { m.observations.Delete(key) }
