package session

import "sync/atomic"

// Window keeps the last n items pushed, newest first, like ring, but its copies share storage
// safely: a Window is a small value (copy it with =), and pushing to one copy never changes what
// another copy, or a slice NewestFirst returned earlier, holds (issue 15: the cluster session
// store derives a record from another for every change, and copied 64 recent events each time).
//
// Items are written from the back of the buffer towards the front, so the window is always
// items[at:at+size]. The buffer remembers the lowest slot written (low): a copy whose window
// starts there claims the slot below it with a compare-and-swap and writes it in place; any
// other copy (one that another copy's push went below, or one pushing concurrently and losing the
// race) moves its window to a fresh buffer first. A slot is written once, before any window
// includes it, and never again, so windows and the slices handed out stay valid for as long as
// they are held; the old buffer is collected after its last holder. The buffer has a quarter
// more slots than the window, so one copy of the window serves n/4 pushes.
//
// Copies of one Window may be pushed to from different goroutines; one copy must not be used
// concurrently with itself (the usual rule for a value that changes).
type Window[T any] struct {
	buf  *windowBuf[T] // nil until the first push
	at   int           // index of the newest item in buf.items
	size int           // items in the window
}

type windowBuf[T any] struct {
	low   atomic.Int64 // lowest slot written so far
	items []T
}

// Push adds v and keeps the newest n items (n ≥ 1; a smaller n is taken as 1). It returns the
// item that left the window to make room, if one did.
func (w *Window[T]) Push(v T, n int) (left T, ok bool) {
	n = max(n, 1)
	if w.size > n { // a smaller bound than before: the oldest beyond it leave (not reported)
		w.size = n
	}
	if w.size == n {
		left, ok = w.buf.items[w.at+w.size-1], true
		w.size--
	}
	if w.buf == nil || w.at == 0 || !w.buf.low.CompareAndSwap(int64(w.at), int64(w.at-1)) {
		w.move(n)
		w.buf.low.Store(int64(w.at - 1))
	}
	w.at--
	w.buf.items[w.at] = v
	w.size++
	return left, ok
}

// move puts the window at the back of a fresh buffer sized for n, with room for pushes.
func (w *Window[T]) move(n int) {
	nb := &windowBuf[T]{items: make([]T, ringSlots(n))}
	at := len(nb.items) - w.size
	if w.size > 0 {
		copy(nb.items[at:], w.buf.items[w.at:w.at+w.size])
	}
	nb.low.Store(int64(at))
	w.buf, w.at = nb, at
}

// Len is the number of items in the window.
func (w *Window[T]) Len() int { return w.size }

// NewestFirst returns the window, most recent first. The slice shares the window's storage and
// must not be written to; its capacity ends at its length, so appending to it copies. Later
// pushes to w or to its copies never change it.
func (w *Window[T]) NewestFirst() []T {
	if w.size == 0 {
		return []T{}
	}
	return w.buf.items[w.at : w.at+w.size : w.at+w.size]
}
