package idempotency

import (
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

func key(i int) fixedKey {
	return fix(strings.Repeat(string(rune('a'+i%26)), 32) + string(rune('0'+i/26)))
}

func TestTableEvictsLeastRecentlyUsed(t *testing.T) {
	tb := newTable(3, 0, 0, nil)
	for i := range 3 {
		tb.getOrPut(key(i), []byte{byte(i)}, nil, 1)
	}
	if _, _, ok := tb.get(key(0)); !ok { // 0 is now the most recently used
		t.Fatal("entry 0 missing before the table was full")
	}
	tb.getOrPut(key(3), []byte{3}, nil, 1) // evicts 1, the least recently used
	for i, want := range []bool{true, false, true, true} {
		if b, _, ok := tb.get(key(i)); ok != want || (ok && b[0] != byte(i)) {
			t.Errorf("entry %d: present %v (%v), want %v", i, ok, b, want)
		}
	}
	if len(tb.index) != 3 {
		t.Fatalf("%d entries kept, capacity 3", len(tb.index))
	}
	tb.delete(key(0))
	tb.delete(key(0))
	if _, _, ok := tb.get(key(0)); ok || len(tb.index) != 2 {
		t.Fatalf("deleted entry still there (%d entries)", len(tb.index))
	}
	for i := 10; i < 20; i++ { // reuses freed slots, never more than capacity
		tb.getOrPut(key(i), []byte{byte(i)}, nil, 1)
	}
	if len(tb.slots) > 4 || len(tb.index) != 3 {
		t.Fatalf("%d slots, %d entries after churn; want ≤ 4 and 3", len(tb.slots), len(tb.index))
	}
}

func TestTableByteBound(t *testing.T) {
	tb := newTable(100, 3*(entryOverhead+100), 0, nil)
	for i := range 10 {
		tb.getOrPut(key(i), make([]byte, 100), nil, 100)
		if tb.bytes > tb.maxBytes {
			t.Fatalf("after %d: %d bytes kept, bound %d", i, tb.bytes, tb.maxBytes)
		}
	}
	if len(tb.index) != 3 {
		t.Fatalf("%d entries within the byte bound, want 3", len(tb.index))
	}
	// One entry larger than the bound stays alone rather than not at all.
	tb.getOrPut(key(50), make([]byte, 5000), nil, 5000)
	if _, _, ok := tb.get(key(50)); !ok || len(tb.index) != 1 {
		t.Fatalf("oversized entry kept %v, %d entries", ok, len(tb.index))
	}
}

func TestTableExpires(t *testing.T) {
	now := time.Unix(1000, 0)
	tb := newTable(10, 0, time.Minute, func() time.Time { return now })
	tb.getOrPut(key(1), []byte{1}, nil, 1)
	now = now.Add(50 * time.Second)
	if _, _, ok := tb.get(key(1)); !ok { // a use refreshes the time to live
		t.Fatal("entry expired before its time to live")
	}
	now = now.Add(50 * time.Second)
	if _, _, ok := tb.get(key(1)); !ok {
		t.Fatal("a use did not refresh the time to live")
	}
	now = now.Add(61 * time.Second)
	if _, _, ok := tb.get(key(1)); ok {
		t.Fatal("entry outlived its time to live")
	}
	if _, _, existed := tb.getOrPut(key(1), []byte{2}, nil, 1); existed || len(tb.index) != 1 {
		t.Fatal("an expired entry blocked a new one")
	}
}

// Keys of other lengths are hashed into the same table without meeting the 32-byte ones.
func TestFixKeepsKeysApart(t *testing.T) {
	long := strings.Repeat("k", 40)
	short := "k"
	h := fix(long)
	if fix(string(h.sum[:])) == h || fix(long) != h || fix(short) == h || fix(short) != fix("k") {
		t.Fatal("fixed keys collide or are unstable")
	}
	m := NewMemory(10, time.Minute)
	m.RememberDecision(long, &ahpv1.Decision{DecisionId: "long"})
	m.RememberDecision(string(h.sum[:]), &ahpv1.Decision{DecisionId: "its hash"})
	if d, _ := m.Decision(long); d.GetDecisionId() != "long" {
		t.Fatalf("Decision(long key) = %v", d)
	}
}
