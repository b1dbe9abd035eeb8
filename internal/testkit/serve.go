package testkit

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// ServeTCP runs serve, a Serve(ctx, ln) method, on a new loopback TCP listener. It returns the
// listener's address, stop, which cancels serve's context (a second call does nothing), and a
// channel that receives serve's result once it has returned. When the test ends it stops serve and
// waits for it to return.
func ServeTCP(t testing.TB, serve func(context.Context, net.Listener) error) (addr string, stop func(), served <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	var returned sync.WaitGroup
	returned.Go(func() { result <- serve(ctx, ln) })
	t.Cleanup(func() {
		cancel()
		returned.Wait()
	})
	return ln.Addr().String(), cancel, result
}

// Receive returns the next value from ch. When none comes within WaitTimeout it fails the test
// with the message failure, which says what did not happen ("Serve did not return").
func Receive[T any](t testing.TB, ch <-chan T, failure string) T {
	t.Helper()
	timeout := time.NewTimer(WaitTimeout)
	defer timeout.Stop()
	select {
	case v := <-ch:
		return v
	case <-timeout.C:
		t.Fatalf("%s (waited %v)", failure, WaitTimeout)
	}
	var zero T
	return zero
}
