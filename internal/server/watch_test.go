package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"google.golang.org/protobuf/types/known/structpb"
)

// Watchers on every protocol, fed in batches with responses shared between them, each see every
// decision exactly once, in the same order, matching what the intercept callers were answered.
func TestWatchersSeeEveryDecisionInOneOrder(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const perProtocol, workers, perWorker = 3, 4, 25
	type watcher struct {
		name   string
		stream *connect.ServerStreamForClient[ahpv1.WatchResponse]
	}
	var watchers []watcher
	for _, proto := range protocols {
		observe := ts.observe(proto.opts...)
		for i := range perProtocol {
			s, err := observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: "order", DecisionsOnly: true}))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			watchers = append(watchers, watcher{fmt.Sprintf("%s #%d", proto.name, i), s})
		}
	}

	// Concurrent callers: batches form, and the publish order is the hub's to choose.
	intercept := ts.intercept()
	answered := make(map[string]string) // event id → decision id
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				ev := testkit.ShellEvent(fmt.Sprintf("order-%d-%03d", w, i), "ls")
				ev.Session.Id = "order"
				resp, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				answered[ev.GetId()] = resp.Msg.GetDecision().GetDecisionId()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	const total = workers * perWorker
	var first []string
	for _, w := range watchers {
		var got []string
		for len(got) < total && w.stream.Receive() {
			msg := w.stream.Msg()
			id := msg.GetEvent().GetId()
			want := answered[id]
			if want == "" {
				t.Fatalf("%s: event %s came, but no caller was answered for it", w.name, id)
			}
			if got := msg.GetDecision().GetDecisionId(); got != want {
				t.Fatalf("%s: event %s came with decision %q, the caller got %q", w.name, id, got, want)
			}
			if _, err := time.Parse(time.RFC3339Nano, msg.GetTime()); err != nil {
				t.Fatalf("%s: time %q: %v", w.name, msg.GetTime(), err)
			}
			got = append(got, id)
		}
		if len(got) < total {
			t.Fatalf("%s: received %d of %d decisions: %v", w.name, len(got), total, w.stream.Err())
		}
		// One caller's calls were sequential, so they were published in its order.
		for wk := range workers {
			prefix := fmt.Sprintf("order-%d-", wk)
			var mine []string
			for _, id := range got {
				if len(id) > len(prefix) && id[:len(prefix)] == prefix {
					mine = append(mine, id)
				}
			}
			if len(mine) != perWorker {
				t.Fatalf("%s: len(mine) = %v, want %v", w.name, len(mine), perWorker)
			}
			if !slices.IsSorted(mine) {
				t.Fatalf("%s: slices.IsSorted(mine) is false", w.name)
			}
		}
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Fatalf("%s saw another order than %s:\n%v\n%v", w.name, watchers[0].name, got, first)
		}
	}
}

// A Watch whose client deadline passes ends with deadline_exceeded, never with OK: a client whose
// own timer has not fired yet would take OK for a stream the server closed normally. The request
// is written by hand so that only the server's side of the deadline (Connect-Timeout-Ms) acts.
func TestWatchEndsWithTheClientDeadline(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	req := watchRequest(t, ctx, ts.url)
	req.Header.Set("Connect-Timeout-Ms", "100")
	resp, err := ts.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200 (a Connect stream reports its end in the body)", resp.StatusCode)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	var end []byte // the payload of the end-of-stream message (flag 0x02)
	for len(data) >= 5 {
		n := int(binary.BigEndian.Uint32(data[1:5]))
		if len(data) < 5+n {
			t.Fatalf("truncated message: %q", data)
		}
		if data[0]&0x02 != 0 {
			end = data[5 : 5+n]
		}
		data = data[5+n:]
	}
	if end == nil {
		t.Fatal("the stream has no end-of-stream message")
	}
	if !bytes.Contains(end, []byte(`"code":"deadline_exceeded"`)) {
		t.Errorf("end of stream = %s, want the error deadline_exceeded", end)
	}
}

// watchRequest is a Connect Watch request with an empty WatchRequest, written by hand.
func watchRequest(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	body := append([]byte{0, 0, 0, 0, 2}, "{}"...) // one uncompressed message
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/ahp.v1.ObservationService/Watch", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Connect-Protocol-Version", "1")
	return req
}

// A Watch client over HTTP/1.1 that never reads while large decisions are published is cut off
// by the write timeout: the handler returns, its subscription ends and the server closes the
// connection, instead of the buffered decisions staying pinned until the client hangs up. The
// hub's own bounds are far away, so only the write timeout can end it.
func TestWatchClientThatDoesNotReadIsCutOffByTheWriteTimeout(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{NoRuntimeMetrics: true, Logger: testkit.Discard()})
	const writeTimeout = 100 * time.Millisecond
	srv, err := server.New(server.Config{Metrics: m, Logger: testkit.Discard(), WatchWriteTimeout: writeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer()
	// The first connection is the watcher's; it closes once its handler has returned.
	var watcher atomic.Pointer[net.Conn]
	closed := make(chan struct{})
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			watcher.CompareAndSwap(nil, &c)
		}
		if st == http.StateClosed && watcher.Load() != nil && *watcher.Load() == c {
			close(closed)
		}
	}
	mem := memhttp.Serve(t, hs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testkit.WaitTimeout)
	defer cancel()

	resp, err := mem.HTTP1Client().Do(watchRequest(t, ctx, mem.URL()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // never read
	if gauge(t, m, "ahp_watch_subscribers", "") != 1 {
		t.Fatal("the watcher is not subscribed")
	}
	intercept := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL())
	payload := strings.Repeat("x", 256<<10) // one decision is far more than the connection buffers
	start := time.Now()
	for i := range 8 {
		// The bulk is in a field no rule reads, so the policy's command patterns do not scan it:
		// the test is about the stream, not about the time regexes take under -race.
		ev := testkit.ShellEvent(fmt.Sprintf("unread-%d", i), "echo unread")
		ev.Tool.Input.Fields["note"] = structpb.NewStringValue(payload)
		if _, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
			t.Fatalf("intercept %d: %v", i, err)
		}
	}
	testkit.Receive(t, closed, "the connection of a watcher that does not read was not closed")
	if d := time.Since(start); d < writeTimeout {
		t.Errorf("cut off after %v, before the write timeout of %v", d, writeTimeout)
	}
	// The subscription ended with the handler, not by a cut-off of the hub.
	if n := gauge(t, m, "ahp_watch_subscribers", ""); n != 0 {
		t.Errorf("ahp_watch_subscribers = %v after the handler returned, want 0", n)
	}
	if n := gauge(t, m, "ahp_watch_cutoffs_total", ""); n != 0 {
		t.Errorf("ahp_watch_cutoffs_total = %v, want 0: the hub's bounds were not reached", n)
	}
}
