package session

import (
	"slices"
	"testing"
)

// The ring's window is the last n pushes, newest first; a snapshot never changes after later
// pushes; every item pushed is reported dropped exactly once it is no longer held, so the byte
// estimate covers everything kept.
func TestRingSnapshotsAndDrops(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 64} {
		r := newRing[int](n)
		if got := r.newestFirst(); len(got) != 0 {
			t.Fatalf("n=%d: empty ring has %v", n, got)
		}
		held := map[int]bool{}
		type snap struct{ got, want []int }
		var snaps []snap
		for i := range 5*ringSlots(n) + 3 {
			held[i] = true
			r.push(i, func(old int) {
				if !held[old] {
					t.Fatalf("n=%d: %d dropped twice or never pushed", n, old)
				}
				delete(held, old)
			})
			var want []int
			for j := i; j >= 0 && j > i-n; j-- {
				want = append(want, j)
			}
			got := r.newestFirst()
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d after %d: window %v, want %v", n, i, got, want)
			}
			if cap(got) != len(got) {
				t.Fatalf("n=%d: window capacity %d beyond its length %d", n, cap(got), len(got))
			}
			for _, w := range want {
				if !held[w] {
					t.Fatalf("n=%d: %d reported dropped while in the window", n, w)
				}
			}
			if len(held) > ringSlots(n) {
				t.Fatalf("n=%d: %d items held, more than %d slots", n, len(held), ringSlots(n))
			}
			snaps = append(snaps, snap{got, want})
		}
		for _, s := range snaps {
			if !slices.Equal(s.got, s.want) {
				t.Fatalf("n=%d: an earlier snapshot changed to %v, want %v", n, s.got, s.want)
			}
		}
	}
}
