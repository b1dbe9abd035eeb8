package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/server/reflection"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"google.golang.org/protobuf/types/known/structpb"
)

var basePolicy = testkit.PolicyYAML("server-test", `  - id: audit-curl
    mode: dry-run
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("curl ")'
    effect: {deny: {reason: "would block curl"}}
`)

// testServer runs a full ahp-server in memory with its production http.Server settings
// (HTTP/1.1 and h2c).
type testServer struct {
	srv  *server.Server
	url  string
	hc   *http.Client // h2c
	mem  *memhttp.Server
	file string
}

func start(t *testing.T, policyYAML string, tweak func(*server.Config)) *testServer {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{PolicyFile: file, PolicyPollInterval: 10 * time.Millisecond, Logger: testkit.Discard()}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mem := memhttp.Serve(t, srv.HTTPServer())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.WatchPolicy(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &testServer{srv: srv, url: mem.URL(), hc: mem.Client(), mem: mem, file: file}
}

// decide has ts intercept ev for a caller with caps (nil: none advertised) and returns the
// decision.
func (ts *testServer) decide(t *testing.T, ev *ahpv1.Event, caps *ahpv1.Capabilities) *ahpv1.Decision {
	t.Helper()
	resp, err := ts.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev, Capabilities: caps}))
	if err != nil {
		t.Fatalf("Intercept %s: %v", ev.GetId(), err)
	}
	return resp.Msg.GetDecision()
}

// observeStream sends msgs on one ObserveStream of c and returns its summary, failing the test on
// an error.
func observeStream(t *testing.T, ctx context.Context, c ahpv1connect.ObservationServiceClient, msgs ...*ahpv1.ObserveStreamRequest) *ahpv1.ObserveStreamResponse {
	t.Helper()
	cs := c.ObserveStream(ctx)
	for _, m := range msgs {
		if err := cs.Send(m); err != nil {
			t.Fatalf("ObserveStream: Send: %v", err)
		}
	}
	sum, err := cs.CloseAndReceive()
	if err != nil {
		t.Fatalf("ObserveStream: %v", err)
	}
	return sum.Msg
}

// The service clients of ts, over h2c.
func (ts *testServer) intercept(opts ...connect.ClientOption) ahpv1connect.InterceptServiceClient {
	return ahpv1connect.NewInterceptServiceClient(ts.hc, ts.url, opts...)
}

func (ts *testServer) typed(opts ...connect.ClientOption) ahpv1connect.TypedDecisionServiceClient {
	return ahpv1connect.NewTypedDecisionServiceClient(ts.hc, ts.url, opts...)
}

func (ts *testServer) observe(opts ...connect.ClientOption) ahpv1connect.ObservationServiceClient {
	return ahpv1connect.NewObservationServiceClient(ts.hc, ts.url, opts...)
}

func (ts *testServer) harness(opts ...connect.ClientOption) ahpv1connect.HarnessServiceClient {
	return ahpv1connect.NewHarnessServiceClient(ts.hc, ts.url, opts...)
}

// clients are the four service clients of one server together; no two share a method name.
type clients struct {
	ahpv1connect.InterceptServiceClient
	ahpv1connect.TypedDecisionServiceClient
	ahpv1connect.ObservationServiceClient
	ahpv1connect.HarnessServiceClient
}

// clients returns the four clients of ts, each made with opts.
func (ts *testServer) clients(opts ...connect.ClientOption) clients {
	return clients{ts.intercept(opts...), ts.typed(opts...), ts.observe(opts...), ts.harness(opts...)}
}

// protocol is a wire protocol by name and the client options that select it.
type protocol struct {
	name string
	opts []connect.ClientOption
}

// eachProtocol runs f as a parallel subtest for every protocol, with the protocol's name and
// clients of ts that speak it.
func eachProtocol(t *testing.T, ts *testServer, f func(t *testing.T, proto string, c clients)) {
	eachWireProtocol(t, func(t *testing.T, proto protocol) { f(t, proto.name, ts.clients(proto.opts...)) })
}

// eachWireProtocol runs f as a parallel subtest for every protocol, for tests that make their
// own clients.
func eachWireProtocol(t *testing.T, f func(t *testing.T, proto protocol)) {
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			t.Parallel()
			f(t, proto)
		})
	}
}

// protocols are the three wire protocols every RPC is exercised over.
var protocols = []protocol{
	{"connect", nil},
	{"connect+json", []connect.ClientOption{connect.WithProtoJSON()}},
	{"grpc", []connect.ClientOption{connect.WithGRPC()}},
	{"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}},
}

func TestEveryRPCOverEveryProtocol(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	eachProtocol(t, ts, func(t *testing.T, proto string, c clients) {
		ctx := context.Background()
		id := func(s string) string { return proto + "-" + s }

		// Intercept (unary), with the decision id and rule ids.
		resp, err := c.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent(id("rm"), "rm -rf x")}))
		if err != nil {
			t.Fatal(err)
		}
		d := resp.Msg.GetDecision()
		if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
			t.Fatalf("Intercept: d.GetVerdict() = %v, want VERDICT_DENY in %v", d.GetVerdict(), d)
		}
		if d.GetDecisionId() == "" {
			t.Fatalf("Intercept: d.GetDecisionId() == \"\" in %v", d)
		}
		if d.GetMatchedRuleIds()[0] != "deny-rm" {
			t.Fatalf("Intercept: d.GetMatchedRuleIds()[0] = %v, want \"deny-rm\" in %v", d.GetMatchedRuleIds()[0], d)
		}
		// Invalid input: a precise InvalidArgument.
		_, err = c.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE}}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("invalid Intercept err: connect.CodeOf(err) = %v, want connect.CodeInvalidArgument: %v", connect.CodeOf(err), err)
		}
		if !strings.Contains(err.Error(), "event.id") {
			t.Fatalf("invalid Intercept err: strings.Contains(err.Error(), \"event.id\") is false: %v", err)
		}

		// InterceptBatch.
		batch, err := c.InterceptBatch(ctx, connect.NewRequest(&ahpv1.InterceptBatchRequest{Events: []*ahpv1.Event{testkit.ShellEvent(id("b1"), "ls"), testkit.ShellEvent(id("b2"), "rm y")}}))
		if err != nil {
			t.Fatalf("InterceptBatch: %v", err)
		}
		if len(batch.Msg.GetDecisions()) != 2 {
			t.Fatalf("InterceptBatch: len(batch.Msg.GetDecisions()) = %v, want 2", len(batch.Msg.GetDecisions()))
		}
		if batch.Msg.GetDecisions()[1].GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
			t.Fatalf("InterceptBatch: batch.Msg.GetDecisions()[1].GetVerdict() = %v, want VERDICT_DENY", batch.Msg.GetDecisions()[1].GetVerdict())
		}

		// Typed decision.
		rl, err := c.HandleRateLimit(ctx, connect.NewRequest(&ahpv1.HandleRateLimitRequest{Event: &ahpv1.Event{
			Id: id("rl"), Body: &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{
				SessionId: "s1", RetryAfterMs: 1500, CurrentUsage: "95000/100000 tokens",
				LimitType: &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Known{Known: ahpv1.RateLimitKind_RATE_LIMIT_KIND_LLM_TOKEN_LIMIT}},
			}},
		}}))
		if err != nil {
			t.Fatalf("HandleRateLimit: %v", err)
		}
		if rl.Msg.GetDecision().GetRateLimit().GetRetry().GetRetryAfterMs() == 0 {
			t.Fatalf("HandleRateLimit: rl.Msg.GetDecision().GetRateLimit().GetRetry().GetRetryAfterMs() == 0")
		}

		// Observe (unary) and its idempotency.
		after := testkit.Event(id("after"), ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)
		for i, want := range []bool{false, true} {
			o, err := c.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: after}))
			if err != nil {
				t.Fatalf("Observe #%d: %v", i, err)
			}
			if o.Msg.GetDuplicate() != want {
				t.Fatalf("Observe #%d: o.Msg.GetDuplicate() = %v, want %v", i, o.Msg.GetDuplicate(), want)
			}
		}

		// Harness calls.
		hs, err := c.Handshake(ctx, connect.NewRequest(&ahpv1.HandshakeRequest{ProtocolVersion: "2.4", AgentInfo: &ahpv1.AgentInfo{Framework: "test"}}))
		if err != nil {
			t.Fatalf("Handshake: %v", err)
		}
		if hs.Msg.GetProtocolVersion() != "2.4" {
			t.Fatalf("Handshake: hs.Msg.GetProtocolVersion() = %v, want \"2.4\"", hs.Msg.GetProtocolVersion())
		}
		_, err = c.Handshake(ctx, connect.NewRequest(&ahpv1.HandshakeRequest{ProtocolVersion: "3.0", AgentInfo: &ahpv1.AgentInfo{}}))
		if connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("Handshake 3.0 err = %v", err)
		}
		q, err := c.Query(ctx, connect.NewRequest(&ahpv1.QueryRequest{QueryType: "should_i_proceed", Payload: structpb.NewStringValue("?")}))
		if err != nil {
			t.Fatalf("Query: %v", err)
		}
		if !q.Msg.GetAnswer().GetBoolValue() {
			t.Fatalf("Query: q.Msg.GetAnswer().GetBoolValue() is false")
		}
		caps, err := c.GetCapabilities(ctx, connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
		if err != nil {
			t.Fatalf("GetCapabilities: %v", err)
		}
		if caps.Msg.GetHarnessProtocolVersion() != "2.4" {
			t.Fatalf("GetCapabilities: caps.Msg.GetHarnessProtocolVersion() = %v, want \"2.4\"", caps.Msg.GetHarnessProtocolVersion())
		}
	})
}

func TestStreamingShapes(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	// Bidi and client streams need HTTP/2 for every protocol; connect-go also serves them over
	// HTTP/1.1 for Connect and gRPC-Web only as unary or server streams.
	eachProtocol(t, ts, func(t *testing.T, proto string, c clients) {
		ctx := context.Background()

		// Watch first so it sees what follows.
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		watch, err := c.Watch(watchCtx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: "stream-" + proto}))
		if err != nil {
			t.Fatal(err)
		}

		// Bidi: answers correlated by event id; a bad event gets a per-event error.
		stream := c.InterceptStream(ctx)
		events := map[string]string{"rm -rf a": "VERDICT_DENY", "ls": "VERDICT_ALLOW", "git push": "VERDICT_ASK"}
		sent := map[string]string{}
		i := 0
		for cmd, want := range events {
			ev := testkit.ShellEvent(fmt.Sprintf("%s-bidi-%d", proto, i), cmd)
			ev.Session.Id = "stream-" + proto
			sent[ev.GetId()] = want
			if err := stream.Send(&ahpv1.InterceptStreamRequest{Event: ev}); err != nil {
				t.Fatal(err)
			}
			i++
		}
		if err := stream.Send(&ahpv1.InterceptStreamRequest{Event: &ahpv1.Event{Id: "bad", Type: ahpv1.EventType_EVENT_TYPE_SESSION_END}}); err != nil {
			t.Fatal(err)
		}
		if err := stream.CloseRequest(); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for range len(sent) + 1 {
			resp, err := stream.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetEventId() == "bad" {
				if resp.GetError().GetCode() != "invalid_argument" {
					t.Fatalf("bad event answer = %v", resp)
				}
				continue
			}
			got[resp.GetEventId()] = resp.GetDecision().GetVerdict().String()
		}
		for id, want := range sent {
			if got[id] != want {
				t.Errorf("%s: verdict %s, want %s", id, got[id], want)
			}
		}
		if err := stream.CloseResponse(); err != nil {
			t.Fatal(err)
		}

		// Client stream.
		var obs []*ahpv1.ObserveStreamRequest
		for j := range 5 {
			ev := testkit.Event(fmt.Sprintf("%s-obs-%d", proto, j%4), ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("stream-"+proto))
			obs = append(obs, &ahpv1.ObserveStreamRequest{Event: ev})
		}
		sum := observeStream(t, ctx, c, obs...)
		if sum.GetAccepted() != 4 {
			t.Fatalf("ObserveStream: sum.GetAccepted() = %v, want 4", sum.GetAccepted())
		}
		if sum.GetDuplicates() != 1 {
			t.Fatalf("ObserveStream: sum.GetDuplicates() = %v, want 1", sum.GetDuplicates())
		}

		// Server stream: the watcher saw the 3 decisions and 4 observations of this session.
		decisions, observations := 0, 0
		for decisions+observations < 7 && watch.Receive() {
			if watch.Msg().GetDecision() != nil {
				decisions++
			} else {
				observations++
			}
		}
		if decisions != 3 {
			t.Fatalf("watch saw %d decisions, want 3 (err %v)", decisions, watch.Err())
		}
		if observations != 4 {
			t.Fatalf("watch saw %d observations, want 4 (err %v)", observations, watch.Err())
		}
	})
}

func TestWatchFilters(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	observe := ts.observe()
	intercept := ts.intercept()

	decisionsOnly, err := observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{DecisionsOnly: true, SessionId: "wf"}))
	if err != nil {
		t.Fatal(err)
	}
	byKind, err := observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: "wf", ToolKinds: []ahpv1.ToolKind{ahpv1.ToolKind_TOOL_KIND_FILE_READ}}))
	if err != nil {
		t.Fatal(err)
	}
	byType, err := observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: "wf", EventTypes: []ahpv1.EventType{ahpv1.EventType_EVENT_TYPE_SESSION_END}}))
	if err != nil {
		t.Fatal(err)
	}

	ev := testkit.ShellEvent("wf-1", "ls")
	ev.Session.Id = "wf"
	if _, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
		t.Fatal(err)
	}
	read := testkit.Event("wf-2", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, testkit.Session("wf"), testkit.Tool("Read", ahpv1.ToolKind_TOOL_KIND_FILE_READ))
	end := testkit.Event("wf-3", ahpv1.EventType_EVENT_TYPE_SESSION_END, testkit.Session("wf"))
	other := testkit.Event("wf-4", ahpv1.EventType_EVENT_TYPE_SESSION_END, testkit.Session("another"))
	for _, e := range []*ahpv1.Event{read, end, other} {
		if _, err := observe.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: e})); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(name string, s *connect.ServerStreamForClient[ahpv1.WatchResponse], wantID string) {
		t.Helper()
		if !s.Receive() {
			t.Fatalf("%s: %v", name, s.Err())
		}
		if got := s.Msg().GetEvent().GetId(); got != wantID {
			t.Fatalf("%s: first item %s, want %s", name, got, wantID)
		}
	}
	expect("decisions only", decisionsOnly, "wf-1")
	expect("tool kind", byKind, "wf-2")
	expect("event type", byType, "wf-3")
}

func TestSlowWatcherIsCutOff(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, func(c *server.Config) { c.WatchBuffer = 4 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	observe := ts.observe()
	slow, err := observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	// Never reading while many items are published overflows the tiny buffer (HTTP/2 flow control
	// lets the server write ahead only so far). Intercepts keep succeeding meanwhile.
	intercept := ts.intercept()
	payload := strings.Repeat("x", 16<<10)
	for i := range 400 {
		ev := testkit.ShellEvent(fmt.Sprintf("slow-%d", i), "echo slow")
		ev.Tool.Input.Fields["note"] = structpb.NewStringValue(payload) // no rule scans it: the test is about the stream
		if _, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
			t.Fatalf("intercept %d while a watcher lags: %v", i, err)
		}
	}
	for slow.Receive() {
	}
	if connect.CodeOf(slow.Err()) != connect.CodeResourceExhausted {
		t.Fatalf("slow watcher ended with: connect.CodeOf(slow.Err()) = %v, want connect.CodeResourceExhausted in %v", connect.CodeOf(slow.Err()), slow.Err())
	}
	if !strings.Contains(slow.Err().Error(), "too slow") {
		t.Fatalf("slow watcher ended with: strings.Contains(slow.Err().Error(), \"too slow\") is false in %v", slow.Err())
	}
}

func TestDryRunRecordsWithoutEffect(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	d := ts.decide(t, testkit.ShellEvent("dry", "curl example.com"), nil)
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("dry-run decision: d.GetVerdict() = %v, want VERDICT_ALLOW in %v", d.GetVerdict(), d)
	}
	if len(d.GetEffects()) != 0 {
		t.Fatalf("dry-run decision: len(d.GetEffects()) = %v, want 0 in %v", len(d.GetEffects()), d)
	}
	if len(d.GetDryRuns()) != 1 {
		t.Fatalf("dry-run decision: len(d.GetDryRuns()) = %v, want 1 in %v", len(d.GetDryRuns()), d)
	}
	if d.GetDryRuns()[0].GetRuleId() != "audit-curl" {
		t.Fatalf("dry-run decision: d.GetDryRuns()[0].GetRuleId() = %v, want \"audit-curl\" in %v", d.GetDryRuns()[0].GetRuleId(), d)
	}
}

func TestCapabilityNarrowing(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	denyOnly := &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY}}
	d := ts.decide(t, testkit.ShellEvent("narrow", "git push origin main"), denyOnly)
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("deny-only caller got: d.GetVerdict() = %v, want VERDICT_DENY in %v", d.GetVerdict(), d)
	}
	if len(d.GetFallbacks()) != 1 {
		t.Fatalf("deny-only caller got: len(d.GetFallbacks()) = %v, want 1 in %v", len(d.GetFallbacks()), d)
	}
	if d.GetEffects()[0].GetDeny() == nil {
		t.Fatalf("deny-only caller got: d.GetEffects()[0].GetDeny() is nil in %v", d)
	}
}

func TestHotReload(t *testing.T) {
	t.Parallel()
	// The server logs each reload after it has swapped the policy in (or kept the old one): the
	// test waits for those lines.
	var logs testkit.LogBuffer
	ts := start(t, basePolicy, func(c *server.Config) { c.Logger = logs.Logger() })
	verdict := func(id, cmd string) ahpv1.Verdict { return ts.decide(t, testkit.ShellEvent(id, cmd), nil).GetVerdict() }
	if v := verdict("hr-0", "touch f"); v != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("before reload: %v", v)
	}
	updated := basePolicy + `
  - id: deny-touch
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("touch ")'
    effect: {deny: {reason: "no touching"}}
`
	testkit.ReplaceFile(t, ts.file, updated)
	logs.WaitFor(t, `msg="policy reloaded"`, 1)
	if v := verdict("hr-1", "touch f"); v != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("after good reload: %v", v)
	}
	// A broken file keeps the last good policy and is counted.
	testkit.ReplaceFile(t, ts.file, "rules: [this is: not valid")
	logs.WaitFor(t, `msg="policy reload failed`, 1)
	if _, f := ts.srv.ReloadStats(); f == 0 {
		t.Error("ReloadStats counts no failed reload after the log said one failed")
	}
	if v := verdict("hr-2", "touch f"); v != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("after broken reload: %v", v)
	}
	if v := verdict("hr-3", "rm -rf x"); v != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("old rules lost: %v", v)
	}
}

func TestHealthAndReflection(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, func(c *server.Config) { c.Reflection = reflection.Mount })
	// Health over the Connect protocol with JSON, as curl would call it.
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/grpc.health.v1.Health/Check", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.mem.HTTP1Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := make([]byte, 256)
	n, _ := resp.Body.Read(body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: resp.StatusCode = %v, want http.StatusOK", resp.StatusCode)
	}
	if !strings.Contains(string(body[:n]), "SERVING") {
		t.Fatalf("health: strings.Contains(string(body[:n]), \"SERVING\") is false")
	}
	// Reflection (v1; the client falls back to v1alpha on its own) lists every service.
	stream := grpcreflect.NewClient(ts.hc, ts.url, connect.WithGRPC()).NewStream(context.Background())
	defer stream.Close()
	names, err := stream.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	listed := fmt.Sprint(names)
	for _, want := range []string{"ahp.v1.InterceptService", "ahp.v1.TypedDecisionService", "ahp.v1.ObservationService", "ahp.v1.HarnessService", "grpc.health.v1.Health"} {
		if !strings.Contains(listed, want) {
			t.Errorf("reflection does not list %s: %s", want, listed)
		}
	}
	if _, err := stream.FileContainingSymbol("ahp.v1.InterceptService"); err != nil {
		t.Errorf("reflection cannot resolve ahp.v1.InterceptService: %v", err)
	}
}

// TestNoReflectionUnlessMounted: without Config.Reflection (the bridge's embedded server) health
// is still served, reflection is not.
func TestNoReflectionUnlessMounted(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	stream := grpcreflect.NewClient(ts.hc, ts.url, connect.WithGRPC()).NewStream(context.Background())
	defer stream.Close()
	if names, err := stream.ListServices(); err == nil || connect.CodeOf(err) != connect.CodeUnimplemented {
		t.Errorf("reflection without Config.Reflection: %v, %v; want unimplemented", names, err)
	}
	c := grpchealth.NewClient(ts.hc, ts.url)
	if _, err := c.Check(context.Background(), &grpchealth.CheckRequest{}); err != nil {
		t.Errorf("health: %v", err)
	}
}

func TestDefaultPolicyWhenNoFile(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Policy().Name() != "default" {
		t.Fatalf("policy = %q", srv.Policy().Name())
	}
}

func TestBrokenPolicyFileFailsStartup(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bad.yaml")
	testkit.ReplaceFile(t, file, "version: 1\nrules:\n  - id: x\n    when: 'nope('\n    effect: {deny: {reason: r}}\n")
	_, err := server.New(server.Config{PolicyFile: file, Logger: testkit.Discard()})
	if err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestStreamsEndAtTheirMaximumDuration(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, func(c *server.Config) { c.MaxStreamDuration = 200 * time.Millisecond })
	observe := ts.observe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watch, err := observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for watch.Receive() {
	}
	if connect.CodeOf(watch.Err()) != connect.CodeDeadlineExceeded {
		t.Fatalf("watch ended with: connect.CodeOf(watch.Err()) = %v, want connect.CodeDeadlineExceeded in %v", connect.CodeOf(watch.Err()), watch.Err())
	}
	if !strings.Contains(watch.Err().Error(), "maximum stream duration") {
		t.Fatalf("watch ended with: strings.Contains(watch.Err().Error(), \"maximum stream duration\") is false in %v", watch.Err())
	}
}
