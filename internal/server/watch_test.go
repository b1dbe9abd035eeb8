package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/testkit"
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
	body := append([]byte{0, 0, 0, 0, 2}, "{}"...) // one uncompressed message: an empty WatchRequest
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+"/ahp.v1.ObservationService/Watch", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Connect-Protocol-Version", "1")
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
