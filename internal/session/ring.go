package session

import (
	"google.golang.org/protobuf/types/known/structpb"
)

// ring keeps the last n items pushed and hands out newest-first snapshots that share its storage
// instead of copying it (issue 18: the copy was a quarter of the bytes a decision allocated).
//
// Items are written from the back of buf towards the front, so buf[at:at+size] is always the
// window, newest first, and a slot once written is never written again: a snapshot taken earlier
// stays valid while later pushes go below it. When the front is reached, the newest n-1 items move
// to the back of a fresh buffer; the old one stays with whatever snapshots still hold it and is
// collected after them. The buffer is n + headroom slots, so one reallocation copies n-1 items
// every headroom pushes; items that slid out of the window stay in the buffer (unreachable from
// new snapshots) until that reallocation, which is when push reports them dropped.
type ring[T any] struct {
	n    int
	buf  []T // nil until the first push
	at   int // index of the newest item in buf
	size int // items in the window, ≤ n
}

func newRing[T any](n int) ring[T] { return ring[T]{n: n} }

// ringHeadroom is how many slots beyond n a ring of n keeps: a quarter more memory for one copy
// of the window every n/4 pushes.
func ringHeadroom(n int) int { return max(n/4, 1) }

// ringSlots is how many slots a ring of n holds once it has been pushed to.
func ringSlots(n int) int { return n + ringHeadroom(n) }

// push adds v; dropped is called for each item the ring no longer holds, in no particular order.
func (r *ring[T]) push(v T, dropped func(T)) {
	if r.buf == nil {
		r.buf = make([]T, ringSlots(r.n))
		r.at = len(r.buf)
	}
	if r.at == 0 {
		keep := min(r.size, r.n-1)
		nb := make([]T, len(r.buf))
		copy(nb[len(nb)-keep:], r.buf[:keep])
		if dropped != nil {
			for _, old := range r.buf[keep:] {
				dropped(old)
			}
		}
		r.buf, r.at, r.size = nb, len(nb)-keep, keep
	}
	r.at--
	r.buf[r.at] = v
	r.size = min(r.size+1, r.n)
}

// newestFirst returns the window, most recent first. The slice shares the ring's storage and
// must not be written to; its capacity ends at its length, so appending to it copies.
func (r *ring[T]) newestFirst() []T {
	if r.size == 0 {
		return []T{}
	}
	return r.buf[r.at : r.at+r.size : r.at+r.size]
}

// stringField returns the first non-empty string among keys of an object payload.
func stringField(v *structpb.Value, keys ...string) string {
	fields := v.GetStructValue().GetFields()
	for _, k := range keys {
		if s := fields[k].GetStringValue(); s != "" {
			return s
		}
	}
	return ""
}
