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
	s := contentstore.New(contentstore.Limits{MaxItemBytes: 4, MaxTotalBytes: 6, MaxItems: 2, TTL: time.Minute}, c.now)

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
