package server

// growStack makes the calling goroutine's stack at least about 16 KiB, in one step, while the stack
// is still shallow. net/http runs each HTTP/2 call on a new goroutine, which starts with the
// runtime's small initial stack; a Connect call then outgrows it two or three times — inside
// connect's buffer pool, inside protobuf's decoding of the nested event, in the policy's
// evaluation — and each growth copies the stack and adjusts every frame on it, which the CPU
// profile of ahp-bench's intercept mode put at about 12 µs of a call (issue 18, the Intercept ≤
// 1.25 × no-op goal). One frame of 12 KiB called at the top of the handler costs one copy of a
// few frames instead. 16 KiB is the largest stack size the runtime keeps in its per-P caches, so
// the grown stack is also cheap to get and to free. No check depends on it: it changes only when
// the stack grows.
//
//go:noinline
func growStack() {
	var buf [12 << 10]byte
	keep(buf[:])
}

// keep stops the compiler from dropping growStack's array; b does not escape.
//
//go:noinline
func keep(b []byte) { _ = b[len(b)-1] }
