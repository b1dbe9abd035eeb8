package contentstore_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/contentstore"
)

func hash(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestStoreBoundsAndTTL(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 9, 15, 12, 0, 0, 0, time.UTC)}
	s := contentstore.New(contentstore.Limits{MaxItemBytes: 4, MaxTotalBytes: 6, MaxItems: 2, MaxOwnerBytes: 6, MaxOwnerItems: 2, TTL: time.Minute}, c.now)

	a := []byte("abcd")
	r, err := s.Put("alice", a, hash(a))
	if err != nil || r.Size != 4 || r.SHA256 != hash(a) || r.Ref != "sha256-"+hash(a) {
		t.Fatalf("Put = %+v, %v", r, err)
	}
	if _, err := s.Put("alice", []byte("abcde"), hash([]byte("abcde"))); !errors.Is(err, contentstore.ErrTooLarge) {
		t.Errorf("over MaxItemBytes: %v", err)
	}
	b := []byte("xyz")
	if _, err := s.Put("alice", b, hash(b)); !errors.Is(err, contentstore.ErrFull) {
		t.Errorf("over MaxTotalBytes: %v", err)
	}
	// Another principal does not see alice's item.
	if _, ok := s.Lookup("bob", r.Ref); ok {
		t.Errorf("bob sees alice's upload")
	}
	// The same bytes again refresh the item rather than take room.
	c.t = c.t.Add(50 * time.Second)
	if r2, err := s.Put("alice", a, hash(a)); err != nil || r2 != r {
		t.Errorf("repeat upload: %+v, %v", r2, err)
	}
	c.t = c.t.Add(30 * time.Second) // 80 s after the first upload, 30 s after the refresh
	if _, ok := s.Lookup("alice", r.Ref); !ok {
		t.Errorf("refreshed item expired early")
	}
	c.t = c.t.Add(31 * time.Second)
	if _, ok := s.Lookup("alice", r.Ref); ok {
		t.Errorf("item outlived its TTL")
	}
	if n, bytes := s.Len(); n != 0 || bytes != 0 {
		t.Errorf("after expiry: %d items, %d bytes", n, bytes)
	}
	one, two, three := []byte("1"), []byte("2"), []byte("3")
	for _, d := range [][]byte{one, two} {
		if _, err := s.Put("alice", d, hash(d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put("alice", three, hash(three)); !errors.Is(err, contentstore.ErrFull) {
		t.Errorf("over MaxItems: %v", err)
	}
}

// One principal's quota leaves room for the others: bob can store while alice is at her bound,
// and alice gets room back as her items expire.
func TestStorePerPrincipalQuota(t *testing.T) {
	t.Parallel()
	c := &clock{t: time.Date(2026, 9, 15, 12, 0, 0, 0, time.UTC)}
	s := contentstore.New(contentstore.Limits{MaxItemBytes: 4, MaxTotalBytes: 12, MaxItems: 6, MaxOwnerBytes: 5, MaxOwnerItems: 2, TTL: time.Minute}, c.now)
	put := func(owner, data string) error {
		_, err := s.Put(owner, []byte(data), hash([]byte(data)))
		return err
	}
	if err := put("alice", "abcd"); err != nil {
		t.Fatal(err)
	}
	// Bytes: 4 + 2 > 5.
	if err := put("alice", "ef"); !errors.Is(err, contentstore.ErrQuota) {
		t.Errorf("over alice's byte quota: %v", err)
	}
	if err := put("alice", "e"); err != nil {
		t.Fatal(err)
	}
	// A repeat of held bytes refreshes the item and takes no room.
	if err := put("alice", "e"); err != nil {
		t.Errorf("refreshing a held item counts against nothing: %v", err)
	}
	if n, b := s.Usage("alice"); n != 2 || b != 5 {
		t.Errorf("alice's usage = %d items, %d bytes; want 2, 5", n, b)
	}
	// Bob is unaffected by alice's quota, and has his own item bound.
	for _, d := range []string{"1", "2"} {
		if err := put("bob", d); err != nil {
			t.Fatalf("bob: %v", err)
		}
	}
	if err := put("bob", "3"); !errors.Is(err, contentstore.ErrQuota) {
		t.Errorf("over bob's item quota: %v", err)
	}
	if n, b := s.Len(); n != 4 || b != 7 {
		t.Errorf("store holds %d items, %d bytes; want 4, 7", n, b)
	}
	// Once alice's items expire, her quota is free again.
	c.t = c.t.Add(time.Minute)
	if n, b := s.Usage("alice"); n != 0 || b != 0 {
		t.Errorf("after expiry alice holds %d items, %d bytes", n, b)
	}
	if err := put("alice", "wxyz"); err != nil {
		t.Errorf("after expiry: %v", err)
	}
}

func TestStoreOwnerDefaults(t *testing.T) {
	t.Parallel()
	l := contentstore.New(contentstore.Limits{}, nil).Limits()
	if l.MaxOwnerBytes != contentstore.DefaultMaxTotalBytes/4 || l.MaxOwnerItems != contentstore.DefaultMaxItems/4 {
		t.Errorf("default owner quota = %d bytes, %d items", l.MaxOwnerBytes, l.MaxOwnerItems)
	}
	l = contentstore.New(contentstore.Limits{MaxItemBytes: 10, MaxTotalBytes: 12, MaxItems: 2, MaxOwnerBytes: 100, MaxOwnerItems: 100}, nil).Limits()
	if l.MaxOwnerBytes != 12 || l.MaxOwnerItems != 2 {
		t.Errorf("owner quota over the totals = %d bytes, %d items; want clamped to 12, 2", l.MaxOwnerBytes, l.MaxOwnerItems)
	}
	if l = contentstore.New(contentstore.Limits{MaxItemBytes: 10, MaxTotalBytes: 20, MaxItems: 2}, nil).Limits(); l.MaxOwnerBytes != 10 || l.MaxOwnerItems != 1 {
		t.Errorf("small store owner quota = %d bytes, %d items; want 10, 1", l.MaxOwnerBytes, l.MaxOwnerItems)
	}
}
