// Package contentstore keeps the binary content harnesses upload for Agent Hooks Protocol "draft"
// events (the content upload binding): bounded in bytes per item, in total bytes and in items,
// each item expiring after a TTL. Items belong to the principal that uploaded them (the
// authenticated credential's name; "" without authentication): one caller can neither look up nor
// learn of another's content. Within an owner, content is addressed by its SHA-256, so a repeated
// upload of the same bytes refreshes one item instead of storing two. Policies never see the
// bytes; events refer to an item by its ref and carry its metadata (media type, size, sha256).
//
// Besides the totals, each principal has its own byte and item quota (Limits.MaxOwnerBytes,
// MaxOwnerItems), so one caller cannot fill the store for every other.
package contentstore

import (
	"container/list"
	"errors"
	"sync"
	"time"
)

// Limits bound a Store. Zero fields take the defaults.
type Limits struct {
	// MaxItemBytes is the largest item accepted (default 8 MiB).
	MaxItemBytes int64
	// MaxTotalBytes bounds the bytes held at once (default 64 MiB).
	MaxTotalBytes int64
	// MaxItems bounds the number of items held at once (default 1024).
	MaxItems int
	// MaxOwnerBytes bounds the bytes one principal holds at once (default a quarter of
	// MaxTotalBytes, at least MaxItemBytes; never more than MaxTotalBytes).
	MaxOwnerBytes int64
	// MaxOwnerItems bounds the items one principal holds at once (default a quarter of MaxItems,
	// at least 1; never more than MaxItems).
	MaxOwnerItems int
	// TTL is how long an item stays referable after its last upload (default 10 minutes).
	TTL time.Duration
}

// Defaults of Limits.
const (
	DefaultMaxItemBytes  = 8 << 20
	DefaultMaxTotalBytes = 64 << 20
	DefaultMaxItems      = 1024
	DefaultTTL           = 10 * time.Minute
)

func (l Limits) withDefaults() Limits {
	if l.MaxItemBytes <= 0 {
		l.MaxItemBytes = DefaultMaxItemBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultMaxItems
	}
	if l.TTL <= 0 {
		l.TTL = DefaultTTL
	}
	if l.MaxOwnerBytes <= 0 {
		l.MaxOwnerBytes = max(l.MaxTotalBytes/4, l.MaxItemBytes)
	}
	l.MaxOwnerBytes = min(l.MaxOwnerBytes, l.MaxTotalBytes)
	if l.MaxOwnerItems <= 0 {
		l.MaxOwnerItems = max(l.MaxItems/4, 1)
	}
	l.MaxOwnerItems = min(l.MaxOwnerItems, l.MaxItems)
	return l
}

// Receipt confirms a stored item: the content-upload receipt {ref, size, sha256}.
type Receipt struct {
	Ref    string `json:"ref"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ErrTooLarge is returned for an item over MaxItemBytes; ErrFull when the store cannot make room
// without dropping unexpired items; ErrQuota when the uploading principal holds its
// MaxOwnerBytes or MaxOwnerItems already.
var (
	ErrTooLarge = errors.New("contentstore: item over the size limit")
	ErrFull     = errors.New("contentstore: store full")
	ErrQuota    = errors.New("contentstore: the principal's upload quota is used up")
)

type item struct {
	key     string // owner and ref
	owner   string
	receipt Receipt
	data    []byte
	expires time.Time
	elem    *list.Element // in Store.order, oldest expiry first
}

// Store is a bounded in-memory content store, safe for concurrent use.
type Store struct {
	limits Limits
	now    func() time.Time

	mu    sync.Mutex
	items map[string]*item // by owner and ref
	order *list.List       // of *item, by expiry (uploads refresh; TTL is constant)
	total int64
	owned map[string]*usage // by owner; entries dropped when an owner holds nothing
}

// usage is what one owner holds.
type usage struct {
	items int
	bytes int64
}

// New returns an empty Store; now is the clock (time.Now when nil).
func New(l Limits, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{limits: l.withDefaults(), now: now, items: map[string]*item{}, order: list.New(), owned: map[string]*usage{}}
}

// Limits reports the effective limits.
func (s *Store) Limits() Limits { return s.limits }

func key(owner, ref string) string { return owner + "\x00" + ref }

// Put stores data for owner, whose SHA-256 (64 lowercase hex) the caller has verified, and returns
// its receipt. The same bytes uploaded again by the same owner refresh the existing item.
func (s *Store) Put(owner string, data []byte, sha256Hex string) (Receipt, error) {
	size := int64(len(data))
	if size > s.limits.MaxItemBytes {
		return Receipt{}, ErrTooLarge
	}
	ref := "sha256-" + sha256Hex
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	k := key(owner, ref)
	if it, ok := s.items[k]; ok {
		it.expires = now.Add(s.limits.TTL)
		s.order.MoveToBack(it.elem)
		return it.receipt, nil
	}
	if len(s.items)+1 > s.limits.MaxItems || s.total+size > s.limits.MaxTotalBytes {
		return Receipt{}, ErrFull
	}
	u := s.owned[owner]
	if size > s.limits.MaxOwnerBytes || u != nil && (u.items+1 > s.limits.MaxOwnerItems || u.bytes+size > s.limits.MaxOwnerBytes) {
		return Receipt{}, ErrQuota
	}
	if u == nil {
		u = &usage{}
		s.owned[owner] = u
	}
	u.items++
	u.bytes += size
	it := &item{key: k, owner: owner, receipt: Receipt{Ref: ref, Size: size, SHA256: sha256Hex}, data: append([]byte(nil), data...), expires: now.Add(s.limits.TTL)}
	it.elem = s.order.PushBack(it)
	s.items[k] = it
	s.total += size
	return it.receipt, nil
}

// Lookup returns the receipt of a live item of owner.
func (s *Store) Lookup(owner, ref string) (Receipt, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	it, ok := s.items[key(owner, ref)]
	if !ok {
		return Receipt{}, false
	}
	return it.receipt, true
}

// Usage reports the number of live items owner holds and their bytes.
func (s *Store) Usage(owner string) (items int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	if u := s.owned[owner]; u != nil {
		return u.items, u.bytes
	}
	return 0, 0
}

// Len reports the number of live items and the bytes they hold.
func (s *Store) Len() (items int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(s.now())
	return len(s.items), s.total
}

// expire drops items whose TTL has passed; s.mu is held.
func (s *Store) expire(now time.Time) {
	for e := s.order.Front(); e != nil; e = s.order.Front() {
		it := e.Value.(*item)
		if now.Before(it.expires) {
			return
		}
		s.order.Remove(e)
		delete(s.items, it.key)
		s.total -= it.receipt.Size
		if u := s.owned[it.owner]; u != nil {
			if u.items--; u.items == 0 {
				delete(s.owned, it.owner)
			} else {
				u.bytes -= it.receipt.Size
			}
		}
	}
}
