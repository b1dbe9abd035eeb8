package session_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/ahp-gateway/ahp/internal/session"
)

// Copies of a window and the slices they hand out never change when another copy is pushed to:
// every copy reads as the pushes it saw, whichever copy pushed first, and the window is the last
// n pushes, newest first.
func TestWindowCopiesAreIndependent(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 64} {
		type held struct {
			w    session.Window[int]
			snap []int
			want []int
		}
		var all []held
		var w session.Window[int]
		var pushed []int
		for i := range 5*n + 7 {
			// Fork a copy every few pushes and push something else to it: the original must not
			// see it, and the copy must keep it.
			if i%3 == 0 {
				c := w
				c.Push(-i, n)
				all = append(all, held{c, c.NewestFirst(), newestFirst(append(slices.Clone(pushed), -i), n)})
			}
			left, ok := w.Push(i, n)
			if want := len(pushed) >= n; ok != want || ok && left != pushed[len(pushed)-n] {
				t.Fatalf("n=%d push %d: left %d, %v; want %v", n, i, left, ok, want)
			}
			pushed = append(pushed, i)
			all = append(all, held{w, w.NewestFirst(), newestFirst(pushed, n)})
		}
		for j, h := range all {
			if !slices.Equal(h.snap, h.want) || !slices.Equal(h.w.NewestFirst(), h.want) {
				t.Fatalf("n=%d copy %d: snapshot %v, window %v; want %v", n, j, h.snap, h.w.NewestFirst(), h.want)
			}
			if s := h.w.NewestFirst(); cap(s) != len(s) {
				t.Fatalf("n=%d: window capacity %d beyond its length %d", n, cap(s), len(s))
			}
		}
	}
}

// A smaller bound than a window was pushed with keeps only the newest.
func TestWindowBoundShrinks(t *testing.T) {
	var w session.Window[int]
	for i := range 10 {
		w.Push(i, 8)
	}
	w.Push(10, 3)
	if got := w.NewestFirst(); !slices.Equal(got, []int{10, 9, 8}) {
		t.Fatalf("window after a push bounded to 3 = %v, want [10 9 8]", got)
	}
}

// Copies pushed to from different goroutines (the race detector checks the sharing).
func TestWindowCopiesPushedConcurrently(t *testing.T) {
	var base session.Window[int]
	for i := range 5 {
		base.Push(i, 16)
	}
	var wg sync.WaitGroup
	got := make([][]int, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := base
			for i := range 40 {
				c.Push(100*g+i, 16)
			}
			got[g] = c.NewestFirst()
		}()
	}
	wg.Wait()
	for g, s := range got {
		var want []int
		for i := 39; i >= 24; i-- {
			want = append(want, 100*g+i)
		}
		if !slices.Equal(s, want) {
			t.Fatalf("goroutine %d: window %v, want %v", g, s, want)
		}
	}
	if b := base.NewestFirst(); !slices.Equal(b, []int{4, 3, 2, 1, 0}) {
		t.Fatalf("the original changed to %v", b)
	}
}

func newestFirst(pushed []int, n int) []int {
	var out []int
	for i := len(pushed) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, pushed[i])
	}
	if out == nil {
		out = []int{}
	}
	return out
}
