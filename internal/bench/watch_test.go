package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/proto"
)

func TestParseWatchFilter(t *testing.T) {
	t.Parallel()
	wl, err := NewWorkload(0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseWatchFilter("decisions, type=tool.before,type=EVENT_TYPE_TOOL_AFTER,tool=shell,session=1")
	if err != nil {
		t.Fatal(err)
	}
	req := f.request(wl)
	if !req.GetDecisionsOnly() || req.GetSessionId() != wl.SessionID(1) ||
		len(req.GetEventTypes()) != 2 || req.GetEventTypes()[0] != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE ||
		req.GetEventTypes()[1] != ahpv1.EventType_EVENT_TYPE_TOOL_AFTER ||
		len(req.GetToolKinds()) != 1 || req.GetToolKinds()[0] != ahpv1.ToolKind_TOOL_KIND_SHELL {
		t.Errorf("request %v", req)
	}
	if f, err := parseWatchFilter("session=somebody-else"); err != nil {
		t.Errorf("literal session: %v", err)
	} else if f.request(wl).GetSessionId() != "somebody-else" {
		t.Errorf("literal session: f.request(wl).GetSessionId() = %v, want \"somebody-else\"", f.request(wl).GetSessionId())
	}
	if f, err := parseWatchFilter(""); err != nil {
		t.Errorf("empty filter: %v", err)
	} else if hubFilter(f.request(wl)).Match(hub.Item{Event: wl.ToolAfter(0, 0)}) != true {
		t.Errorf("empty filter: hubFilter(f.request(wl)).Match(hub.Item{Event: wl.ToolAfter(0, 0)}) = %v, want true", hubFilter(f.request(wl)).Match(hub.Item{Event: wl.ToolAfter(0, 0)}))
	}
	for _, bad := range []string{"type=nope", "tool=", "type=unspecified", "session=", "session=1,session=2", "everything", "decisions=yes"} {
		if _, err := parseWatchFilter(bad); err == nil {
			t.Errorf("parseWatchFilter(%q) accepted", bad)
		}
	}
}

func TestWatchGroupMatchesPerWorker(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(0)
	for _, c := range []struct {
		filter    string
		decisions bool
		want      []bool
	}{
		{"", true, []bool{true, true, true}},
		{"session=1", true, []bool{false, true, false}},
		{"decisions", false, []bool{false, false, false}},
		{"type=tool.after", false, []bool{true, true, true}},
		{"type=tool.after", true, []bool{false, false, false}},
		{"tool=file_read", true, []bool{false, false, false}},
	} {
		f, err := parseWatchFilter(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		g := newWatchGroup(0, 0, "http://127.0.0.1:1", nil, f, wl, 3, c.decisions, FixedExpectation(VerdictAllow, VerdictDeny), time.Second)
		for w, want := range c.want {
			if g.match[w] != want {
				t.Errorf("filter %q, decisions %v: worker %d matches %v, want %v", c.filter, c.decisions, w, g.match[w], want)
			}
		}
	}
}

func TestMissingBits(t *testing.T) {
	t.Parallel()
	want := []uint64{0b1011, 1 << 63, 1}
	if n := missingBits(want, []uint64{0b0011, 1 << 63}); n != 2 {
		t.Errorf("missing %d, want 2 (one in the first word, the whole third word)", n)
	}
	if n := missingBits(want, []uint64{^uint64(0), ^uint64(0), 1, 7}); n != 0 {
		t.Errorf("missing %d, want 0", n)
	}
}

// fakeWatch serves a Watch that sends a scripted list of items, then ends the stream with err.
type fakeWatch struct {
	ahpv1connect.UnimplementedObservationServiceHandler
	items []*ahpv1.WatchResponse
	err   error
	// accepted, when set, counts the TCP connections the server accepted.
	accepted *atomic.Int32
	// intervals, when set, gets each request's flush_interval_ms.
	intervals chan uint32
}

func (f fakeWatch) Watch(ctx context.Context, req *connect.Request[ahpv1.WatchRequest], stream *connect.ServerStream[ahpv1.WatchResponse]) error {
	if f.intervals != nil {
		f.intervals <- req.Msg.GetFlushIntervalMs()
	}
	for _, it := range f.items {
		if err := stream.Send(it); err != nil {
			return err
		}
	}
	if f.err != nil {
		return f.err
	}
	<-ctx.Done()
	return nil
}

func startFakeWatch(t *testing.T, f fakeWatch) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(ahpv1connect.NewObservationServiceHandler(f))
	srv := &http.Server{Handler: mux}
	if f.accepted != nil {
		srv.ConnState = func(_ net.Conn, state http.ConnState) {
			if state == http.StateNew {
				f.accepted.Add(1)
			}
		}
	}
	return testkit.ServeLoopback(t, srv)
}

// TestWatchPhaseReportsWhatWentWrong: a watcher that misses items, gets one twice, gets a wrong
// verdict and is then cut off by the server has all of it counted, as errors too.
func TestWatchPhaseReportsWhatWentWrong(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(0)
	base := uint64(1)<<56 | uint64(3)<<40
	now := time.Now().UTC().Format(time.RFC3339Nano)
	item := func(seq uint64, v ahpv1.Verdict) *ahpv1.WatchResponse {
		return &ahpv1.WatchResponse{Event: wl.ToolBefore(0, base+seq), Decision: &ahpv1.Decision{Verdict: v}, Time: now}
	}
	allow, deny := ahpv1.Verdict_VERDICT_ALLOW, ahpv1.Verdict_VERDICT_DENY
	items := []*ahpv1.WatchResponse{
		item(0, allow), item(0, allow), // twice
		item(1, allow), // rm -rf / allowed
		item(2, allow),
		// 3 and 4 never come
		{Event: wl.ToolBefore(0, 5), Decision: &ahpv1.Decision{Verdict: deny}, Time: now}, // another phase
	}
	url := startFakeWatch(t, fakeWatch{items: items, err: connect.NewError(connect.CodeResourceExhausted, errors.New("watcher too slow"))})
	f, _ := parseWatchFilter("")
	g := newWatchGroup(2, 0, url, nil, f, wl, 1, true, FixedExpectation(VerdictAllow, VerdictDeny), 5*time.Second)
	p := g.begin(base, 1)
	for seq := range uint64(5) {
		p.answer(0, seq)
	}
	st := &Stats{}
	p.finish(st)
	ws := st.Watch
	if ws == nil {
		t.Fatal("no watch stats")
	}
	if ws.Watchers != 2 || ws.Expected != 5 || ws.Received != 6 || ws.Missing != 4 || ws.Duplicates != 2 ||
		ws.Wrong != 2 || ws.EndedEarly != 2 || ws.CutOff != 2 || ws.Other != 2 || ws.Delivery.Count() != 8 {
		t.Errorf("watch stats %+v", *ws)
	}
	if st.Errors != 4+2+2+2 {
		t.Errorf("errors %d: %v", st.Errors, st.ErrorKinds)
	}
	var cut bool
	for msg := range st.ErrorKinds {
		cut = cut || strings.Contains(msg, "resource_exhausted")
	}
	if !cut {
		t.Errorf("the cut-off is not among the errors: %v", st.ErrorKinds)
	}
}

// TestWatchPhaseCompleteIsClean: a watcher that gets everything, then is closed by the benchmark,
// is no error.
func TestWatchPhaseCompleteIsClean(t *testing.T) {
	t.Parallel()
	for _, conns := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("connections=%d", conns), func(t *testing.T) { watchPhaseCompleteIsClean(t, conns) })
	}
}

// watchPhaseCompleteIsClean runs three watchers on conns HTTP/2 connections (0: one each).
func watchPhaseCompleteIsClean(t *testing.T, conns int) {
	t.Parallel()
	wl, _ := NewWorkload(0)
	base := uint64(2) << 40
	var items []*ahpv1.WatchResponse
	for seq := range uint64(100) {
		v := ahpv1.Verdict_VERDICT_ALLOW
		if seq%2 == 1 {
			v = ahpv1.Verdict_VERDICT_DENY
		}
		items = append(items, &ahpv1.WatchResponse{Event: wl.ToolBefore(0, base+seq), Decision: &ahpv1.Decision{Verdict: v}})
	}
	var accepted atomic.Int32
	url := startFakeWatch(t, fakeWatch{items: items, accepted: &accepted})
	f, _ := parseWatchFilter("")
	g := newWatchGroup(3, conns, url, nil, f, wl, 2, true, FixedExpectation(VerdictAllow, VerdictDeny), 5*time.Second)
	if want := map[int]int{0: 3, 1: 1, 2: 2}[conns]; len(g.conns) != want {
		t.Fatalf("%d HTTP clients for connections=%d, want %d", len(g.conns), conns, want)
	}
	p := g.begin(base, 2)
	for seq := range uint64(100) {
		p.answer(int(seq%2), seq)
	}
	st := &Stats{}
	p.finish(st)
	if ws := st.Watch; st.Errors != 0 {
		t.Errorf("st.Errors = %v, want 0", st.Errors)
	} else if ws.Expected != 100 {
		t.Errorf("ws.Expected = %v, want 100", ws.Expected)
	} else if ws.Received != 300 {
		t.Errorf("ws.Received = %v, want 300", ws.Received)
	} else if ws.Missing != 0 {
		t.Errorf("ws.Missing = %v, want 0", ws.Missing)
	} else if ws.EndedEarly != 0 {
		t.Errorf("ws.EndedEarly = %v, want 0", ws.EndedEarly)
	} else if ws.Connections != len(g.conns) {
		t.Errorf("ws.Connections = %v, want %v", ws.Connections, len(g.conns))
	}
	// The watchers that share an HTTP client share its one HTTP/2 connection.
	if n := int(accepted.Load()); n != len(g.conns) {
		t.Errorf("the server accepted %d connections from %d HTTP clients", n, len(g.conns))
	}
}

// TestLeanCodecReadsWhatTheChecksUse: the watchers' decoder gets the checked fields of a full
// WatchResponse right and skips the rest.
func TestLeanCodecReadsWhatTheChecksUse(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(300)
	ev := wl.ToolBefore(3, 41)
	full := &ahpv1.WatchResponse{
		Event:    ev,
		Decision: &ahpv1.Decision{DecisionId: "d", Verdict: ahpv1.Verdict_VERDICT_DENY, LatencyUs: 77, Effects: []*ahpv1.Effect{{RuleId: "r"}}},
		Time:     "2026-11-29T12:00:00.123456789Z",
	}
	b, err := proto.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var got ahpv1.WatchResponse
	if err := (leanWatchCodec{}).Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := &ahpv1.WatchResponse{
		Event: &ahpv1.Event{
			Id: ev.GetId(), Type: ev.GetType(), Session: &ahpv1.Session{Id: wl.SessionID(3)}, Tool: &ahpv1.Tool{Kind: ahpv1.ToolKind_TOOL_KIND_SHELL},
		},
		Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY},
		Time:     full.GetTime(),
	}
	if !proto.Equal(&got, want) {
		t.Errorf("decoded %v, want %v", &got, want)
	}
	var obs ahpv1.WatchResponse
	b, _ = proto.Marshal(&ahpv1.WatchResponse{Event: wl.ToolAfter(0, 1)})
	if err := (leanWatchCodec{}).Unmarshal(b, &obs); err != nil {
		t.Errorf("%v", err)
	} else if obs.Decision != nil {
		t.Errorf("obs.Decision = %v, want nil", obs.Decision)
	} else if obs.GetEvent().GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_AFTER {
		t.Errorf("obs.GetEvent().GetType() = %v, want EVENT_TYPE_TOOL_AFTER", obs.GetEvent().GetType())
	}
	if err := (leanWatchCodec{}).Unmarshal(b[:len(b)-3], &obs); err == nil {
		t.Error("a truncated message decoded")
	}
	// Other messages go through the protobuf codec.
	req := &ahpv1.WatchRequest{SessionId: "s", DecisionsOnly: true}
	enc, err := (leanWatchCodec{}).Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back ahpv1.WatchRequest
	if err := (leanWatchCodec{}).Unmarshal(enc, &back); err != nil {
		t.Errorf("WatchRequest round trip: %v", err)
	} else if !proto.Equal(&back, req) {
		t.Errorf("WatchRequest round trip: proto.Equal(&back, req) is false")
	}
}

// TestWatchersSubscribeAsConsole: with subscribeAsConsole the watchers speak as the console's page
// does — its backfill request, then Connect JSON over HTTP/1.1, with an Origin — and still get and
// check every item.
func TestWatchersSubscribeAsConsole(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(0)
	base := uint64(4) << 40
	var items []*ahpv1.WatchResponse
	for seq := range uint64(20) {
		items = append(items, &ahpv1.WatchResponse{Event: wl.ToolBefore(0, base+seq), Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW + ahpv1.Verdict(seq%2)}})
	}
	var mu sync.Mutex
	seen := map[string]int{}
	mux := http.NewServeMux()
	intervals := make(chan uint32, 2)
	mux.Handle(ahpv1connect.NewObservationServiceHandler(fakeWatch{items: items, intervals: intervals}))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[fmt.Sprintf("%s %s %s %s origin=%t", r.Method, r.URL.Path, r.Proto, r.Header.Get("Content-Type"), r.Header.Get("Origin") == "http://"+r.Host)]++
		mu.Unlock()
		mux.ServeHTTP(w, r)
	})}
	url := testkit.ServeLoopback(t, srv)
	f, _ := parseWatchFilter("")
	g := newWatchGroup(2, 0, url, nil, f, wl, 1, true, FixedExpectation(VerdictAllow, VerdictDeny), 5*time.Second)
	g.subscribeAsConsole(url, 0)
	p := g.begin(base, 1)
	for seq := range uint64(20) {
		p.answer(0, seq)
	}
	st := &Stats{}
	p.finish(st)
	if st.Errors != 0 || st.Watch.Received != 40 || st.Watch.Missing != 0 {
		t.Errorf("errors %d (%v), received %d, missing %d", st.Errors, st.ErrorKinds, st.Watch.Received, st.Watch.Missing)
	}
	for range 2 {
		if got := <-intervals; got != uint32(ConsoleWatchFlushInterval/time.Millisecond) {
			t.Errorf("flush_interval_ms %d, want the console page's %v", got, ConsoleWatchFlushInterval)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Each asks for the console's recent items first (here a 404), as the page does.
	if want := map[string]int{
		"GET /ui/api/recent HTTP/1.1  origin=true":                                            2,
		"POST /ahp.v1.ObservationService/Watch HTTP/1.1 application/connect+json origin=true": 2,
	}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", seen, want)
	}
}
