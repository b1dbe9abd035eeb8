package lru_test

import (
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/lru"
)

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := lru.New[string, int](2, 0, nil)
	c.Put("a", 1)
	c.Put("b", 2)
	if _, ok := c.Get("a"); !ok { // a is now more recent than b
		t.Fatal("a missing")
	}
	c.Put("c", 3)
	if _, ok := c.Get("b"); ok {
		t.Error("b should have been evicted")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s missing", k)
		}
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
}

func TestExpiresAfterTTL(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	c := lru.New[string, int](10, time.Minute, func() time.Time { return now })
	c.Put("a", 1)
	now = now.Add(59 * time.Second)
	if _, ok := c.Get("a"); !ok {
		t.Fatal("a expired too early")
	}
	now = now.Add(61 * time.Second) // the Get above refreshed the TTL
	if _, ok := c.Get("a"); ok {
		t.Fatal("a should have expired")
	}
}

func TestGetOrCreate(t *testing.T) {
	t.Parallel()
	c := lru.New[string, *int](4, 0, nil)
	calls := 0
	create := func() *int { calls++; v := calls; return &v }
	v1, existed := c.GetOrCreate("k", create)
	if existed {
		t.Fatalf("first GetOrCreate: existed is true")
	}
	if *v1 != 1 {
		t.Fatalf("first GetOrCreate: *v1 = %v, want 1", *v1)
	}
	v2, existed := c.GetOrCreate("k", create)
	if !existed {
		t.Fatal("second GetOrCreate: existed is false")
	}
	if v2 != v1 {
		t.Fatal("second GetOrCreate returned another value than the first")
	}
	if calls != 1 {
		t.Fatalf("second GetOrCreate created again (calls=%d)", calls)
	}
}

func TestByteBoundEvictsLeastRecentlyUsedFirst(t *testing.T) {
	t.Parallel()
	c := lru.New[string, int](100, 0, nil)
	c.SetMaxBytes(100)
	for _, k := range []string{"a", "b", "c"} {
		c.Put(k, 0)
		c.Resize(k, 30)
	}
	if _, ok := c.Get("a"); !ok { // a is now more recent than b
		t.Fatal("a missing")
	}
	c.Put("d", 0)
	c.Resize("d", 30) // 120 bytes: b, the least recently used, goes
	if _, ok := c.Get("b"); ok {
		t.Error("b should have been evicted")
	}
	if c.Len() != 3 || c.Bytes() != 90 {
		t.Errorf("Len = %d, Bytes = %d, want 3 and 90", c.Len(), c.Bytes())
	}
	c.Resize("d", 500) // larger than the bound alone: everything older goes, d stays
	if c.Len() != 1 || c.Bytes() != 500 {
		t.Errorf("after an oversized entry: Len = %d, Bytes = %d, want 1 and 500", c.Len(), c.Bytes())
	}
	c.Delete("d")
	if c.Bytes() != 0 {
		t.Errorf("Bytes after Delete = %d, want 0", c.Bytes())
	}
}
