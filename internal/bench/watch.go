package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/hub"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxWatchers bounds --watchers: by default each watcher has its own connection to the server.
const MaxWatchers = 1000

// watchFilter is a parsed --watch-filter: what every Watch request of the run asks for.
type watchFilter struct {
	decisionsOnly bool
	types         []ahpv1.EventType
	kinds         []ahpv1.ToolKind
	session       string // a literal session id ("": any session, unless worker ≥ 0)
	worker        int    // the session of this load worker, when ≥ 0
}

// parseWatchFilter reads a comma-separated list of terms:
//
//	decisions    decisions only, no observations (decisions_only)
//	type=T       events of type T: tool.before, TOOL_BEFORE or EVENT_TYPE_TOOL_BEFORE (repeatable)
//	tool=K       tools of kind K: shell, SHELL or TOOL_KIND_SHELL (repeatable)
//	session=S    the session of load worker S when S is a number, else the literal session id S
//
// The empty string matches everything.
func parseWatchFilter(s string) (watchFilter, error) {
	f := watchFilter{worker: -1}
	for term := range strings.SplitSeq(s, ",") {
		term = strings.TrimSpace(term)
		key, value, hasValue := strings.Cut(term, "=")
		switch {
		case term == "":
		case term == "decisions":
			f.decisionsOnly = true
		case hasValue && key == "type":
			t, err := enumValue(value, "EVENT_TYPE_", ahpv1.EventType_value)
			if err != nil {
				return f, fmt.Errorf("watch filter: type: %w", err)
			}
			f.types = append(f.types, ahpv1.EventType(t))
		case hasValue && key == "tool":
			k, err := enumValue(value, "TOOL_KIND_", ahpv1.ToolKind_value)
			if err != nil {
				return f, fmt.Errorf("watch filter: tool: %w", err)
			}
			f.kinds = append(f.kinds, ahpv1.ToolKind(k))
		case hasValue && key == "session":
			if value == "" || f.session != "" || f.worker >= 0 {
				return f, errors.New("watch filter: session: give one, non-empty")
			}
			if n, err := strconv.Atoi(value); err == nil && n >= 0 {
				f.worker = n
			} else {
				f.session = value
			}
		default:
			return f, fmt.Errorf("watch filter: unknown term %q: want decisions, type=T, tool=K or session=S", term)
		}
	}
	return f, nil
}

// enumValue maps "tool.before", "TOOL_BEFORE" or "EVENT_TYPE_TOOL_BEFORE" to its number.
func enumValue(name, prefix string, values map[string]int32) (int32, error) {
	n := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(strings.TrimSpace(name)))
	if !strings.HasPrefix(n, prefix) {
		n = prefix + n
	}
	v, ok := values[n]
	if !ok || v == 0 {
		return 0, fmt.Errorf("%q is not a defined value", name)
	}
	return v, nil
}

// request is the Watch request of the filter for the run's workload.
func (f watchFilter) request(wl *Workload) *ahpv1.WatchRequest {
	req := &ahpv1.WatchRequest{DecisionsOnly: f.decisionsOnly, EventTypes: f.types, ToolKinds: f.kinds, SessionId: f.session}
	if f.worker >= 0 {
		req.SessionId = wl.SessionID(f.worker)
	}
	return req
}

// hubFilter is what the server makes of req (as its Watch handler does), so that the benchmark
// knows which of its events each watcher must get.
func hubFilter(req *ahpv1.WatchRequest) hub.Filter {
	return hub.Filter{SessionID: req.GetSessionId(), EventTypes: req.GetEventTypes(), ToolKinds: req.GetToolKinds(), DecisionsOnly: req.GetDecisionsOnly()}
}

// watchGroup is the Watch subscribers of one system. They are connected anew for every phase of
// that system (warm-up included) and gone between its phases, so that another system measured on
// the same server — the same mode with fewer watchers — really runs without them.
type watchGroup struct {
	clients []ahpv1connect.ObservationServiceClient
	conns   []*http.Client // one per HTTP/2 connection; watcher i uses conns[i%len(conns)]
	req     *ahpv1.WatchRequest
	filter  hub.Filter
	// match says, per load worker, whether the items its requests publish pass the filter
	// (everything the filter looks at is fixed per worker).
	match []bool
	// decisions: the mode's requests are decided (their items carry a decision); otherwise they
	// are observed.
	decisions bool
	prefix    string // event ids of the run: prefix + decimal sequence number
	expect    *Expectation
	timeout   time.Duration // to subscribe, and for the watchers to catch up after a phase
	asConsole bool          // subscribeAsConsole was called
	url       string        // of the server
	// remote, when set, runs the watchers in a child process (inChildProcess): clients and
	// conns are then unused here.
	remote *watcherProcess
}

// newWatchGroup prepares n watchers of the ahp-server at url, on connections HTTP/2 connections
// (0 or more than n: one each). Each connection is an http.Client of its own; the streams of the
// watchers that share it are multiplexed on it, as a Connect or gRPC client process does.
func newWatchGroup(n, connections int, url string, opts []connect.ClientOption, f watchFilter, wl *Workload, concurrency int, decisions bool, expect *Expectation, timeout time.Duration) *watchGroup {
	g := &watchGroup{
		req: f.request(wl), decisions: decisions, prefix: wl.runID + "-",
		expect: expect, timeout: timeout, match: make([]bool, max(concurrency, 1)), url: url,
	}
	g.filter = hubFilter(g.req)
	for w := range g.match {
		it := hub.Item{Event: wl.ToolAfter(w, 0)}
		if decisions {
			it = hub.Item{Event: wl.ToolBefore(w, 0), Decision: noopAllow}
		}
		g.match[w] = g.filter.Match(it)
	}
	g.connect(n, connections, url, opts)
	return g
}

// connect makes the group's n clients on connections HTTP/2 connections (0 or more than n: one
// each).
func (g *watchGroup) connect(n, connections int, url string, opts []connect.ClientOption) {
	opts = append(append([]connect.ClientOption(nil), opts...), connect.WithCodec(leanWatchCodec{}))
	if connections <= 0 || connections > n {
		connections = n
	}
	for range connections {
		g.conns = append(g.conns, httpClient(url))
	}
	for i := range n {
		g.clients = append(g.clients, ahpv1connect.NewObservationServiceClient(g.conns[i%connections], url, opts...))
	}
}

// subscribeAsConsole makes the watchers subscribe as the web console does (docs/console.md): the
// Connect protocol with JSON, over HTTP/1.1 with one connection each (what a browser has for an
// http:// page), answers uncompressed, the Origin header a browser sends from the console's page
// (so the console's Origin check runs too), and the page's flush interval
// (ConsoleWatchFlushInterval) unless flushInterval is set (negative: none). They check every item
// but do not decode it in full (leanJSONWatchCodec): deployed, the page's parsing runs in a
// browser elsewhere.
func (g *watchGroup) subscribeAsConsole(url string, flushInterval time.Duration) {
	g.asConsole, g.url = true, url
	if flushInterval == 0 {
		flushInterval = ConsoleWatchFlushInterval
	}
	g.req.FlushIntervalMs = uint32(max(flushInterval, 0) / time.Millisecond)
	n := len(g.clients)
	g.conns, g.clients = g.conns[:0], g.clients[:0]
	for range n {
		hc := &http.Client{Transport: originHeader{origin: url, next: &http.Transport{}}}
		g.conns = append(g.conns, hc)
		g.clients = append(g.clients, ahpv1connect.NewObservationServiceClient(hc, url,
			connect.WithCodec(leanJSONWatchCodec{}), connect.WithAcceptCompression("gzip", nil, nil)))
	}
}

// ConsoleWatchFlushInterval is the flush interval the web console's Live page asks Watch for
// (WATCH_FLUSH_INTERVAL_MS in internal/console/web/assets/store.js).
const ConsoleWatchFlushInterval = 250 * time.Millisecond

// backfill asks the console for its recent items, as the page does before each Watch (which also
// keeps the server's console recording). A server without the console answers 404; either way
// the answer is read and dropped: the watchers check only what Watch sends.
func (g *watchGroup) backfill(ctx context.Context) {
	for _, hc := range g.conns {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url+"/ui/api/recent?limit=500", nil)
		if err != nil {
			return
		}
		resp, err := hc.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// originHeader sets Origin on every request, as a browser does on a fetch POST.
type originHeader struct {
	origin string
	next   http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (o originHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Origin", o.origin)
	return o.next.RoundTrip(r)
}

// items names what the watchers receive from the mode's requests.
func (g *watchGroup) items() string {
	if g.decisions {
		return "decisions"
	}
	return "events"
}

// watchPhase is the watchers of one phase.
type watchPhase struct {
	g        *watchGroup
	base     uint64     // the phase's event id base (see runPhase)
	answered [][]uint64 // per load worker: phase sequence numbers answered that pass the filter
	watchers []*phaseWatcher
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// phaseWatcher is one Watch stream of a phase.
type phaseWatcher struct {
	ended chan struct{}
	err   error // why the stream ended; written before ended is closed

	distinct atomic.Uint64 // distinct items of the phase received

	mu       sync.Mutex
	seen     []uint64 // bit set of the phase sequence numbers received
	other    uint64   // items not of this phase
	dup      uint64
	wrong    uint64
	wrongMsg map[string]uint64
	delivery Histogram
}

// begin subscribes every watcher and returns once each is subscribed (the server has sent the
// stream's headers, which it does after subscribing), has failed, or the timeout has passed.
func (g *watchGroup) begin(base uint64, concurrency int) *watchPhase {
	ctx, cancel := context.WithCancel(context.Background())
	p := &watchPhase{g: g, base: base, cancel: cancel, answered: make([][]uint64, max(concurrency, 1))}
	if g.remote != nil {
		g.remote.begin(base)
		return p
	}
	ready := make(chan struct{}, len(g.clients))
	giveUp := time.NewTimer(g.timeout)
	defer giveUp.Stop()
	if g.asConsole {
		g.backfill(ctx)
	}
	// The first watcher of each connection subscribes first: streams started at once on an HTTP
	// client with no connection yet would each dial their own, and watchers meant to share a
	// connection would not. Once it is up, the others are multiplexed on it.
	waves := [][]ahpv1connect.ObservationServiceClient{g.clients[:len(g.conns)], g.clients[len(g.conns):]}
	for _, wave := range waves {
		for _, c := range wave {
			p.watchers = append(p.watchers, p.subscribe(ctx, c, ready))
		}
		for range wave {
			select {
			case <-ready:
			case <-giveUp.C:
				return p
			}
		}
	}
	return p
}

// subscribe starts one watcher's stream; ready gets a value once the server has subscribed it
// (the stream's headers arrived) or the call failed.
func (p *watchPhase) subscribe(ctx context.Context, c ahpv1connect.ObservationServiceClient, ready chan<- struct{}) *phaseWatcher {
	pw := &phaseWatcher{ended: make(chan struct{})}
	p.wg.Go(func() {
		defer close(pw.ended)
		stream, err := c.Watch(ctx, connect.NewRequest(p.g.req))
		if err != nil {
			pw.err = err
			ready <- struct{}{}
			return
		}
		defer stream.Close()
		stream.ResponseHeader()
		ready <- struct{}{}
		for stream.Receive() {
			pw.take(stream.Msg(), p)
		}
		pw.err = stream.Err()
	})
	return pw
}

// phaseSeqBits bounds the bit set: sequence numbers of a phase stay below 2^40 (see runPhase),
// and a phase of more than 2^32 requests is not something ahp-bench runs.
const phaseSeqBits = 32

// take checks and counts one received item.
func (pw *phaseWatcher) take(msg *ahpv1.WatchResponse, p *watchPhase) {
	now := time.Now()
	g := p.g
	rest, ok := strings.CutPrefix(msg.GetEvent().GetId(), g.prefix)
	id, err := strconv.ParseUint(rest, 10, 64)
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if !ok || err != nil || id>>40 != p.base>>40 || id&(1<<40-1) >= 1<<phaseSeqBits {
		pw.other++
		return
	}
	seq := id & (1<<40 - 1)
	if t, err := time.Parse(time.RFC3339Nano, msg.GetTime()); err == nil {
		pw.delivery.Record(now.Sub(t))
	}
	var problem string
	switch d := msg.GetDecision(); {
	case !g.filter.Match(hub.Item{Event: msg.GetEvent(), Decision: d}):
		problem = "Watch: an item the watch filter excludes"
	case g.decisions && d == nil:
		problem = "Watch: an answered event arrived without its decision"
	case !g.decisions && d != nil:
		problem = "Watch: an observed event arrived with a decision"
	case d != nil:
		if err := g.expect.Check(id, VerdictOf(d)); err != nil {
			problem = "Watch: decision differs from the expected answer: " + err.Error()
		}
	}
	if problem != "" {
		pw.wrong++
		if pw.wrongMsg == nil {
			pw.wrongMsg = make(map[string]uint64)
		}
		pw.wrongMsg[problem]++
	}
	word, bit := int(seq/64), uint64(1)<<(seq%64)
	if word >= len(pw.seen) {
		pw.seen = append(pw.seen, make([]uint64, max(word+1-len(pw.seen), len(pw.seen)))...)
	}
	if pw.seen[word]&bit != 0 {
		pw.dup++
		return
	}
	pw.seen[word] |= bit
	pw.distinct.Add(1)
}

// answer notes that worker w's request seq of the phase was answered (accepted, for observations).
// Only worker w calls it during the load; finish reads it afterwards.
func (p *watchPhase) answer(w int, seq uint64) {
	if w < len(p.g.match) && p.g.match[w] {
		p.answered[w] = append(p.answered[w], seq)
	}
}

// holds reports whether pw has received every item of want (want has n bits set).
func (pw *phaseWatcher) holds(want []uint64, n uint64) bool {
	if pw.distinct.Load() < n {
		return false
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return missingBits(want, pw.seen) == 0
}

// await returns once pw holds every item of want, its stream has ended, or the deadline has
// passed. It polls: the wait comes after the measured load, and a millisecond is fine enough.
func (pw *phaseWatcher) await(want []uint64, n uint64, deadline time.Time) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !pw.holds(want, n) && time.Now().Before(deadline) {
		select {
		case <-pw.ended:
			return
		case <-tick.C:
		}
	}
}

// missingBits counts the bits of want not set in have.
func missingBits(want, have []uint64) uint64 {
	var n int
	for i, w := range want {
		if i < len(have) {
			w &^= have[i]
		}
		n += bits.OnesCount64(w)
	}
	return uint64(n)
}

// finish waits, up to the timeout, for every live watcher to have received every item answered
// during the phase that passes the filter; then it ends the streams, and adds what the watchers
// got to st.Watch and what went wrong to st's errors. After an interrupted phase nobody waits
// and nothing is counted as missing. Watchers in a child process (inChildProcess) are checked
// there, against the same list of answered items.
func (p *watchPhase) finish(st *Stats) {
	want, expected := p.wanted()
	var ws *WatchStats
	var errs []errorCount
	if p.g.remote != nil {
		ws, errs = p.g.remote.finish(want, expected, st.Interrupted, p.g.expect)
	} else {
		ws, errs = p.check(want, expected, st.Interrupted)
	}
	for _, e := range errs {
		st.AddErrors(e.Msg, e.N)
	}
	if st.Watch == nil {
		st.Watch = &WatchStats{}
	}
	st.Watch.merge(ws)
}

// errorCount is one kind of error and how often it happened.
type errorCount struct {
	Msg string
	N   uint64
}

// wanted returns the bit set of the phase sequence numbers answered that pass the filter, and
// how many there are.
func (p *watchPhase) wanted() (want []uint64, expected uint64) {
	for _, seqs := range p.answered {
		for _, seq := range seqs {
			word := int(seq / 64)
			for word >= len(want) {
				want = append(want, make([]uint64, len(want)+1)...)
			}
			if want[word]&(1<<(seq%64)) == 0 {
				want[word] |= 1 << (seq % 64)
				expected++
			}
		}
	}
	return want, expected
}

// check waits for the watchers to hold want (expected items), ends their streams and says what
// they received and what went wrong.
func (p *watchPhase) check(want []uint64, expected uint64, interrupted bool) (*WatchStats, []errorCount) {
	g := p.g
	var errs []errorCount
	addErrors := func(msg string, n uint64) {
		if n > 0 {
			errs = append(errs, errorCount{msg, n})
		}
	}
	ws := &WatchStats{Watchers: len(p.watchers), Connections: len(g.conns), AsConsole: g.asConsole, FlushIntervalMs: g.req.GetFlushIntervalMs(), Expected: expected}
	start := time.Now()
	if !interrupted {
		deadline := start.Add(g.timeout)
		for _, pw := range p.watchers {
			pw.await(want, expected, deadline)
		}
		ws.CatchUp = time.Since(start)
	}
	// A stream that ended before this point ended on its own: the server closed or cut it.
	early := make([]bool, len(p.watchers))
	for i, pw := range p.watchers {
		select {
		case <-pw.ended:
			early[i] = true
		default:
		}
	}
	p.cancel()
	p.wg.Wait()
	for _, hc := range g.conns {
		hc.CloseIdleConnections() // no idle connections linger into another system's phase
	}
	for i, pw := range p.watchers {
		received := pw.distinct.Load()
		ws.Received += received
		ws.Duplicates += pw.dup
		ws.Other += pw.other
		ws.Delivery.Merge(&pw.delivery)
		if early[i] {
			msg := "Watch stream ended early: the server closed it"
			if pw.err != nil {
				msg = fmt.Sprintf("Watch stream ended early: %v", pw.err)
				if connect.CodeOf(pw.err) == connect.CodeResourceExhausted {
					ws.CutOff++
				}
			}
			ws.EndedEarly++
			addErrors(msg, 1)
		}
		for msg, n := range pw.wrongMsg {
			addErrors(msg, n)
		}
		ws.Wrong += pw.wrong
		if !interrupted {
			missing := missingBits(want, pw.seen)
			ws.Missing += missing
			addErrors(fmt.Sprintf("Watch: %s answered while subscribed that a watcher never received", g.items()), missing)
		}
	}
	addErrors("Watch: an item delivered twice to the same watcher", ws.Duplicates)
	return ws, errs
}

// WatchStats is what the Watch subscribers of a phase received.
type WatchStats struct {
	// Watchers is the number of subscribers, and Connections the HTTP/2 connections they share.
	Watchers, Connections int
	// AsConsole is set when they subscribed as the web console does (subscribeAsConsole).
	AsConsole bool
	// FlushIntervalMs is the flush_interval_ms of their requests; Process is set when they ran in
	// a child process.
	FlushIntervalMs uint32
	Process         bool
	// Expected is the number of items each subscriber had to receive: the requests answered
	// during the phase whose items pass the filter.
	Expected uint64
	// Received counts the distinct items of the phase received, over all subscribers.
	Received uint64
	// Missing counts expected items a subscriber never received, over all subscribers.
	Missing uint64
	// Duplicates counts items a subscriber received more than once.
	Duplicates uint64
	// Wrong counts items that contradict the request (outside the filter, a wrong verdict, a
	// decision missing or unexpected).
	Wrong uint64
	// EndedEarly counts streams that ended before the benchmark closed them; CutOff counts those
	// of them the server ended with resource_exhausted (the hub's slow-subscriber or overload
	// cut-off).
	EndedEarly, CutOff uint64
	// Other counts items that were not the phase's own (from an earlier phase or another client).
	Other uint64
	// Delivery is the time from the server's publish time (WatchResponse.time) to receipt.
	Delivery Histogram
	// CatchUp is the longest wait, after the load of a phase, until every subscriber had every
	// expected item.
	CatchUp time.Duration
}

func (s *WatchStats) merge(o *WatchStats) {
	s.Watchers = max(s.Watchers, o.Watchers)
	s.Connections = max(s.Connections, o.Connections)
	s.AsConsole = s.AsConsole || o.AsConsole
	s.FlushIntervalMs = max(s.FlushIntervalMs, o.FlushIntervalMs)
	s.Process = s.Process || o.Process
	s.Expected += o.Expected
	s.Received += o.Received
	s.Missing += o.Missing
	s.Duplicates += o.Duplicates
	s.Wrong += o.Wrong
	s.EndedEarly += o.EndedEarly
	s.CutOff += o.CutOff
	s.Other += o.Other
	s.Delivery.Merge(&o.Delivery)
	s.CatchUp = max(s.CatchUp, o.CatchUp)
}

// leanWatchCodec is the watchers' codec. Watchers run in the load generator's process, on the
// cores the server uses, so what they spend is charged to the server: instead of decoding every
// WatchResponse in full (the tool input is a Struct, costly to unmarshal) it reads only the fields
// the checks use: the time, the decision's verdict, and the event's id, type, session id and tool
// kind. Everything else — the Watch request included — goes through the protobuf codec.
type leanWatchCodec struct{}

func (leanWatchCodec) Name() string { return "proto" }

func (leanWatchCodec) Marshal(m any) ([]byte, error) {
	msg, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", m)
	}
	return proto.Marshal(msg)
}

func (leanWatchCodec) Unmarshal(b []byte, m any) error {
	if resp, ok := m.(*ahpv1.WatchResponse); ok {
		return decodeWatchResponse(b, resp)
	}
	msg, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", m)
	}
	return proto.Unmarshal(b, msg)
}

// Field numbers the lean decoder reads, looked up by name so that they follow the schema.
var (
	fieldResponseEvent    = fieldNumber(&ahpv1.WatchResponse{}, "event")
	fieldResponseDecision = fieldNumber(&ahpv1.WatchResponse{}, "decision")
	fieldResponseTime     = fieldNumber(&ahpv1.WatchResponse{}, "time")
	fieldEventID          = fieldNumber(&ahpv1.Event{}, "id")
	fieldEventType        = fieldNumber(&ahpv1.Event{}, "type")
	fieldEventSession     = fieldNumber(&ahpv1.Event{}, "session")
	fieldEventTool        = fieldNumber(&ahpv1.Event{}, "tool")
	fieldSessionID        = fieldNumber(&ahpv1.Session{}, "id")
	fieldToolKind         = fieldNumber(&ahpv1.Tool{}, "kind")
	fieldDecisionVerdict  = fieldNumber(&ahpv1.Decision{}, "verdict")
)

func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	f := m.ProtoReflect().Descriptor().Fields().ByName(name)
	if f == nil {
		panic(fmt.Sprintf("%s has no field %s", m.ProtoReflect().Descriptor().FullName(), name))
	}
	return f.Number()
}

// decodeWatchResponse fills resp with the fields the watchers check.
func decodeWatchResponse(b []byte, resp *ahpv1.WatchResponse) error {
	return eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		var err error
		switch {
		case num == fieldResponseTime && typ == protowire.BytesType:
			resp.Time = string(v)
		case num == fieldResponseDecision && typ == protowire.BytesType:
			d := &ahpv1.Decision{}
			resp.Decision = d
			err = eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, n uint64) error {
				if num == fieldDecisionVerdict && typ == protowire.VarintType {
					d.Verdict = ahpv1.Verdict(int32(n))
				}
				return nil
			})
		case num == fieldResponseEvent && typ == protowire.BytesType:
			ev := &ahpv1.Event{}
			resp.Event = ev
			err = eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
				switch {
				case num == fieldEventID && typ == protowire.BytesType:
					ev.Id = string(v)
				case num == fieldEventType && typ == protowire.VarintType:
					ev.Type = ahpv1.EventType(int32(n))
				case num == fieldEventSession && typ == protowire.BytesType:
					ev.Session = &ahpv1.Session{}
					return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
						if num == fieldSessionID && typ == protowire.BytesType {
							ev.Session.Id = string(v)
						}
						return nil
					})
				case num == fieldEventTool && typ == protowire.BytesType:
					ev.Tool = &ahpv1.Tool{}
					return eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, n uint64) error {
						if num == fieldToolKind && typ == protowire.VarintType {
							ev.Tool.Kind = ahpv1.ToolKind(int32(n))
						}
						return nil
					})
				}
				return nil
			})
		}
		return err
	})
}

// eachField calls f with every field of the encoded message b: its number and wire type, and its
// value as bytes (length-delimited fields) or as a number (varints).
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(b)
		if tagLen < 0 {
			return protowire.ParseError(tagLen)
		}
		b = b[tagLen:]
		var v []byte
		var n uint64
		var valLen int
		switch typ {
		case protowire.BytesType:
			v, valLen = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			n, valLen = protowire.ConsumeVarint(b)
		default:
			valLen = protowire.ConsumeFieldValue(num, typ, b)
		}
		if valLen < 0 {
			return protowire.ParseError(valLen)
		}
		b = b[valLen:]
		if err := f(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}
