// Package lru is a small, concurrency-safe least-recently-used cache with a per-entry time to live.
// The session memory and the idempotency store both use it, so their bounds behave the same way.
package lru

import (
	"container/list"
	"sync"
	"time"
)

// Cache holds at most a fixed number of entries, and, with SetMaxBytes, entries whose sizes (as
// Resize reports them) add up to at most a number of bytes; entries unused for longer than the TTL
// expire.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	capacity int
	maxBytes int // 0: no byte bound
	bytes    int // sum of the entries' sizes
	ttl      time.Duration
	now      func() time.Time
	order    *list.List // front = most recently used
	items    map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key     K
	value   V
	expires time.Time
	size    int
}

// New returns a cache holding at most capacity entries (minimum 1) that expire ttl after their last
// use (ttl <= 0 means never). now is the clock; nil means time.Now.
func New[K comparable, V any](capacity int, ttl time.Duration, now func() time.Time) *Cache[K, V] {
	if capacity < 1 {
		capacity = 1
	}
	if now == nil {
		now = time.Now
	}
	return &Cache[K, V]{capacity: capacity, ttl: ttl, now: now, order: list.New(), items: make(map[K]*list.Element)}
}

// Get returns the value for key and marks it used; expired entries are removed and not returned.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(key)
}

func (c *Cache[K, V]) getLocked(key K) (V, bool) {
	return c.getAtLocked(key, c.now())
}

func (c *Cache[K, V]) getAtLocked(key K, now time.Time) (V, bool) {
	var zero V
	el, ok := c.items[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*entry[K, V])
	if c.ttl > 0 && now.After(e.expires) {
		c.removeLocked(el)
		return zero, false
	}
	e.expires = now.Add(c.ttl)
	c.order.MoveToFront(el)
	return e.value, true
}

// Put stores value under key, evicting the least recently used entry when full.
func (c *Cache[K, V]) Put(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, value)
}

func (c *Cache[K, V]) putLocked(key K, value V) {
	c.putAtLocked(key, value, c.now())
}

func (c *Cache[K, V]) putAtLocked(key K, value V, now time.Time) {
	if el, ok := c.items[key]; ok {
		e := el.Value.(*entry[K, V])
		e.value, e.expires = value, now.Add(c.ttl)
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&entry[K, V]{key: key, value: value, expires: now.Add(c.ttl)})
	for c.order.Len() > c.capacity {
		c.removeLocked(c.order.Back())
	}
}

// removeLocked drops the entry of el.
func (c *Cache[K, V]) removeLocked(el *list.Element) {
	e := el.Value.(*entry[K, V])
	c.order.Remove(el)
	delete(c.items, e.key)
	c.bytes -= e.size
}

// SetMaxBytes bounds the sum of the entries' sizes (n <= 0: no byte bound); see Resize. Call it
// before the cache is used.
func (c *Cache[K, V]) SetMaxBytes(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxBytes = max(n, 0)
}

// Resize records that key's entry now takes size bytes (entries start at zero) and, while the
// entries take more than the byte bound, evicts the least recently used ones first; the last
// entry left stays however large it is. A missing key is ignored.
func (c *Cache[K, V]) Resize(key K, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return
	}
	e := el.Value.(*entry[K, V])
	c.bytes += size - e.size
	e.size = size
	for c.maxBytes > 0 && c.bytes > c.maxBytes && c.order.Len() > 1 {
		c.removeLocked(c.order.Back())
	}
}

// Bytes reports the sum of the entries' sizes, expired ones included until they are touched or
// evicted.
func (c *Cache[K, V]) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// GetOrCreate returns the live value for key, or stores and returns create() when there is none.
// The boolean reports whether the value already existed.
func (c *Cache[K, V]) GetOrCreate(key K, create func() V) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if v, ok := c.getAtLocked(key, now); ok {
		return v, true
	}
	v := create()
	c.putAtLocked(key, v, now)
	return v, false
}

// Delete removes key, if present.
func (c *Cache[K, V]) Delete(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.removeLocked(el)
	}
}

// Len reports the number of entries, expired ones included until they are touched or evicted.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
