package service_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/service"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// flushCounter counts the flushes that reach the connection of Watch responses: one per write
// Watch makes to the network.
type flushCounter struct {
	http.ResponseWriter
	flushes *atomic.Int64
}

func (f flushCounter) Flush() {
	f.flushes.Add(1)
	f.ResponseWriter.(http.Flusher).Flush()
}

func (f flushCounter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// flushCountingServer serves the services with a hub on loopback; flushes counts the flushes of
// Watch responses. Watchers have buffers of buffer items.
func flushCountingServer(t *testing.T, buffer int, flushes *atomic.Int64, opts ...hub.Option) *httptest.Server {
	t.Helper()
	h := hub.New(1024, opts...)
	t.Cleanup(h.Close)
	p := policy.Default()
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard(), Hub: h})
	s, err := service.New(c, service.Options{Logger: testkit.Discard(), Watcher: h, WatchBuffer: buffer})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == ahpv1connect.ObservationServiceWatchProcedure {
			w = flushCounter{ResponseWriter: w, flushes: flushes}
		}
		mux.ServeHTTP(w, r)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

// decide makes n decisions on events prefix-0 … and returns their decision ids.
func decide(ctx context.Context, ts *httptest.Server, prefix string, n int) ([]string, error) {
	intercept := ahpv1connect.NewInterceptServiceClient(ts.Client(), ts.URL)
	var ids []string
	for i := range n {
		resp, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent(fmt.Sprintf("%s-%d", prefix, i), "ls")}))
		if err != nil {
			return ids, err
		}
		ids = append(ids, resp.Msg.GetDecision().GetDecisionId())
	}
	return ids, nil
}

// receiveDecisions checks that stream delivers exactly the decisions ids of events prefix-0 …,
// in order.
func receiveDecisions(t *testing.T, stream *connect.ServerStreamForClient[ahpv1.WatchResponse], prefix string, ids []string) {
	t.Helper()
	for i, id := range ids {
		if !stream.Receive() {
			t.Fatalf("stream ended after %d of %d decisions: %v", i, len(ids), stream.Err())
		}
		msg := stream.Msg()
		if want := fmt.Sprintf("%s-%d", prefix, i); msg.GetEvent().GetId() != want || msg.GetDecision().GetDecisionId() != id {
			t.Fatalf("item %d = event %s, decision %s; want event %s, decision %s", i, msg.GetEvent().GetId(), msg.GetDecision().GetDecisionId(), want, id)
		}
	}
}

// With a flush interval, Watch writes to the stream at most once per interval (plus the headers
// and the first item after a quiet spell), and still delivers every item once, in order.
func TestWatchFlushIntervalSpacesWrites(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int64
	ts := flushCountingServer(t, 1024, &flushes)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	const interval = 200 * time.Millisecond
	stream, err := ahpv1connect.NewObservationServiceClient(ts.Client(), ts.URL, connect.WithProtoJSON()).
		Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{FlushIntervalMs: uint32(interval / time.Millisecond)}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	_ = stream.ResponseHeader() // subscribed
	start := time.Now()
	flushes.Store(0)
	const n = 60
	ids, err := decide(ctx, ts, "fl", n)
	if err != nil {
		t.Fatal(err)
	}
	receiveDecisions(t, stream, "fl", ids)
	// Watch wrote at most once per started interval since the first write, which came at once.
	elapsed := time.Since(start)
	if got, most := flushes.Load(), int64(elapsed/interval)+2; got > most {
		t.Fatalf("%d items over %v: %d writes, want at most %d (one per %v)", n, elapsed, got, most, interval)
	}
}

// A watcher whose buffer becomes half full while Watch holds its items back is written to at
// once: the interval does not make the hub cut it off. With a buffer of 2 one held item is half
// of it, so every item goes out as soon as it arrives; the test makes each decision only after
// the watcher received the one before, so the buffer never holds more than that one item, and
// nothing depends on how the scheduler interleaves the dispatcher and Watch. Were the item held
// for the interval instead, 40 decisions would take 40 s, past the test's deadline.
func TestWatchFlushIntervalNeverCutsOff(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int64
	ts := flushCountingServer(t, 2, &flushes)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	stream, err := ahpv1connect.NewObservationServiceClient(ts.Client(), ts.URL).
		Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{FlushIntervalMs: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	_ = stream.ResponseHeader() // subscribed
	const n = 40
	for i := range n {
		prefix := fmt.Sprintf("cut%d", i)
		ids, err := decide(ctx, ts, prefix, 1)
		if err != nil {
			t.Fatal(err)
		}
		receiveDecisions(t, stream, prefix, ids)
	}
	if got := flushes.Load(); got < n {
		t.Fatalf("%d items came in %d writes; want one write each", n, got)
	}
}

// A flush interval above a second is refused, naming the field.
func TestWatchFlushIntervalIsBounded(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int64
	ts := flushCountingServer(t, 16, &flushes)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	stream, err := ahpv1connect.NewObservationServiceClient(ts.Client(), ts.URL).
		Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{FlushIntervalMs: 1001}))
	if err == nil {
		defer stream.Close()
		stream.Receive()
		err = stream.Err()
	}
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "flush_interval_ms") {
		t.Fatalf("flush_interval_ms 1001: %v, want invalid_argument naming the field", err)
	}
}
