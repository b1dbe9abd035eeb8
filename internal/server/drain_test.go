package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// TestShutdownEndsInterceptStreams: an open InterceptStream must not hold a shutdown up for its
// grace period; it ends with Unavailable so that its client reconnects elsewhere.
func TestShutdownEndsInterceptStreams(t *testing.T) {
	t.Parallel()
	addr, shutdown, served := serveOn(t, server.Config{Logger: testkit.Discard(), ShutdownTimeout: 30 * time.Second})
	defer shutdown()

	cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), "http://"+addr).InterceptStream(cctx)
	if err := stream.Send(&ahpv1.InterceptStreamRequest{Event: testkit.ShellEvent("drain-1", "ls"), RequestId: "r1"}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetRequestId() != "r1" {
		t.Fatalf("resp.GetRequestId() = %v, want \"r1\"", resp.GetRequestId())
	}
	if resp.GetEventId() != "drain-1" {
		t.Fatalf("resp.GetEventId() = %v, want \"drain-1\"", resp.GetEventId())
	}
	if resp.GetDecision().GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("resp.GetDecision().GetVerdict() = %v, want VERDICT_ALLOW", resp.GetDecision().GetVerdict())
	}

	shutdown()
	_, err = stream.Receive()
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("stream ended with %v; want unavailable", err)
	}
	if !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("stream ended with %v; want it to say the server is shutting down", err)
	}
	// testkit.WaitTimeout (25 s) is under the 30 s grace period the stream would hold.
	if err := testkit.Receive(t, served, "Serve did not return: the open InterceptStream held the shutdown up"); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestObserveStreamRateLimitCountsEvents: a batch larger than the rate limit's burst is paced, not
// refused, and the limit counts events, not messages.
func TestObserveStreamRateLimitCountsEvents(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, func(c *server.Config) { c.StreamRate = 20 })
	client := ts.observe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	batch := make([]*ahpv1.Event, 30)
	for i := range batch {
		batch[i] = observation("rate-" + string(rune('a'+i)))
	}
	began := time.Now()
	if sum := observeStream(t, ctx, client, &ahpv1.ObserveStreamRequest{Events: batch}); sum.GetAccepted() != 30 {
		t.Fatalf("ObserveStream: sum.GetAccepted() = %v, want 30", sum.GetAccepted())
	}
	// 20 events of burst at once, the other 10 at 20 per second: at least half a second. (A lower
	// bound the limiter guarantees, not a speed measurement.)
	if took := time.Since(began); took < 400*time.Millisecond {
		t.Errorf("30 events at 20/s took %v; the limit did not count the batch's events", took)
	}
}

// serveOn runs a server made from cfg with Serve on a loopback port (testkit.ServeTCP): its
// address, the function that shuts it down, and Serve's result once it has returned.
func serveOn(t *testing.T, cfg server.Config) (addr string, shutdown func(), served <-chan error) {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.ServeTCP(t, srv.Serve)
}
