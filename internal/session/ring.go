package session

import (
	"google.golang.org/protobuf/types/known/structpb"
)

// ring keeps the last n items pushed.
type ring[T any] struct {
	items []T
	next  int
	full  bool
}

func newRing[T any](n int) ring[T] { return ring[T]{items: make([]T, n)} }

// push adds v and returns the item it replaced, if the ring was full.
func (r *ring[T]) push(v T) (old T, replaced bool) {
	old, replaced = r.items[r.next], r.full
	r.items[r.next] = v
	r.next = (r.next + 1) % len(r.items)
	if r.next == 0 {
		r.full = true
	}
	return old, replaced
}

// newestFirst copies the items, most recent first.
func (r *ring[T]) newestFirst() []T {
	n := r.next
	if r.full {
		n = len(r.items)
	}
	out := make([]T, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.items[(r.next-i+len(r.items))%len(r.items)])
	}
	return out
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
