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
func flushCountingServer(t *testing.T, buffer int, flushes *atomic.Int64) *httptest.Server {
	t.Helper()
	h := hub.New(1024)
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

// A watcher whose buffer fills up while Watch holds its items back is written to at once: the
// interval does not get it cut off, even with a buffer far smaller than an interval's items.
func TestWatchFlushIntervalNeverCutsOff(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int64
	ts := flushCountingServer(t, 4, &flushes)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	stream, err := ahpv1connect.NewObservationServiceClient(ts.Client(), ts.URL).
		Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{FlushIntervalMs: 1000}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	_ = stream.ResponseHeader()
	// The watcher reads as the decisions are made; each decision waits for its answer, so the
	// hub hands them over one or two at a time and the buffer of 4 is half full after two.
	type made struct {
		ids []string
		err error
	}
	done := make(chan made, 1)
	go func() {
		ids, err := decide(ctx, ts, "cut", 40)
		done <- made{ids, err}
	}()
	var got []*ahpv1.WatchResponse
	for len(got) < 40 {
		if !stream.Receive() {
			t.Fatalf("stream ended after %d of 40 decisions: %v", len(got), stream.Err())
		}
		got = append(got, stream.Msg())
	}
	m := testkit.Receive(t, done, "the decisions were not made")
	if m.err != nil {
		t.Fatal(m.err)
	}
	ids := m.ids
	for i, msg := range got {
		if want := fmt.Sprintf("cut-%d", i); msg.GetEvent().GetId() != want || msg.GetDecision().GetDecisionId() != ids[i] {
			t.Fatalf("item %d = event %s; want %s, decision %s", i, msg.GetEvent().GetId(), want, ids[i])
		}
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
