package core

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestUUIDv7: decision ids parse as version 7, variant RFC 9562 UUIDs carrying the current
// millisecond, and later ids sort after earlier ones (as text, too: they are lower-case hex).
func TestUUIDv7(t *testing.T) {
	t.Parallel()
	before := time.Now().UnixMilli()
	prev := ""
	for range 10_000 {
		s := newUUIDv7()
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != s {
			t.Fatalf("%q: version %d variant %v text %q", s, u.Version(), u.Variant(), u.String())
		}
		if ms := u.Time(); ms == 0 {
			t.Fatalf("%q: no time", s)
		}
		if s <= prev {
			t.Fatalf("%q after %q: not increasing", s, prev)
		}
		prev = s
	}
	u := uuid.MustParse(prev)
	sec, nsec := u.Time().UnixTime()
	if ms := sec*1000 + nsec/1e6; ms < before || ms > time.Now().UnixMilli()+1 {
		t.Fatalf("id time %d ms, want between %d and now", ms, before)
	}
}
