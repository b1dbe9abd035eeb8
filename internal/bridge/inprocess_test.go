package bridge

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func quietLog() *slog.Logger { return testkit.Discard() }

// embeddedPair returns the Clients of NewEmbedded (unary calls in-process) and the Clients of a
// second embedded server reached the old way, every call through its HTTP handler on a pipe.
func embeddedPair(t *testing.T) (local, pipe Clients) {
	t.Helper()
	cfg := server.Config{Logger: quietLog(), Version: "2.4.0", Limits: ServerLimits(nil)}
	local, closer, err := NewEmbedded(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "the in-process server", closer.Close)
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pipe, pipeCloser, err := embeddedOverPipe(srv)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "the piped server", pipeCloser.Close)
	return local, pipe
}

func newTestBridge(t *testing.T, c Clients) *Bridge {
	t.Helper()
	b, err := New(Config{Clients: c, Logger: quietLog(), Version: "2.4.0"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Values that differ between two servers making the same decision.
var volatileJSON = regexp.MustCompile(`"([^"]*(?:decisionId|decision_id|latency_us|latencyUs|session_token|sessionToken))":("[^"]*"|[0-9]+)`)

// The Bridge answers every kind of message identically through NewEmbedded's in-process
// clients and through the HTTP/2 pipe they replace: allowed, denied, asked, invalid, replayed,
// recorded, typed and harness calls alike.
func TestEmbeddedInProcessAnswersAsThePipe(t *testing.T) {
	t.Parallel()
	local, pipe := embeddedPair(t)
	bl, bp := newTestBridge(t, local), newTestBridge(t, pipe)
	hooks := func(id, command string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"` + id + `","source":"urn:inprocess-test","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1"},"tool":{"callId":"c-` + id + `","name":"Bash","kind":"shell","input":{"command":"` + command + `"}}},"capabilities":{"effects":["deny","ask"]}}}`
	}
	harness := func(id, eventType, payload string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"ahp/event","params":{"event_type":"` + eventType + `","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":` + payload + `}}`
	}
	messages := []string{
		hooks("allow", "ls -la"),
		hooks("deny", "rm -rf /"),
		hooks("ask", "git push --force origin main"),
		hooks("deny", "rm -rf /"), // replayed
		`{"jsonrpc":"2.0","id":"bad","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"","source":"urn:x","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`,
		`{"jsonrpc":"2.0","id":"obs","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":"o1","source":"urn:inprocess-test","type":"session.start","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`,
		`{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":"o2","source":"urn:inprocess-test","type":"session.start","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`,
		`{"jsonrpc":"2.0","id":"caps","method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`,
		`{"jsonrpc":"2.0","id":"hs","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"f","version":"1","capabilities":["pre_action"]},"session_id":"s1","agent_id":"a1"}}`,
		`{"jsonrpc":"2.0","id":"hs-old","method":"ahp/handshake","params":{"protocol_version":"1.0","agent_info":{"framework":"f","version":"1","capabilities":[]},"session_id":"s1","agent_id":"a1"}}`,
		harness("pre-ok", "pre_action", `{"tool_name":"bash","arguments":{"command":"ls"}}`),
		harness("pre-deny", "pre_action", `{"tool_name":"bash","arguments":{"command":"mkfs.ext4 /dev/sda1"}}`),
		harness("rl", "rate_limit", `{"session_id":"s1","limit_type":{"custom":"gpu_minutes"},"retry_after_ms":1500,"current_usage":"100%"}`),
		harness("post", "post_action", `{"tool_name":"bash","status":"ok"}`),
		`{"jsonrpc":"2.0","id":"b1","method":"ahp/batch","params":{"events":[{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"ls"}}},{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"rm -rf ~"}}}]}}`,
		`{"jsonrpc":"2.0","id":"q","method":"ahp/query","params":{"session_id":"s1","agent_id":"a1","query_type":"should_i_proceed","payload":{}}}`,
		`{"jsonrpc":"2.0","id":"q-bad","method":"ahp/query","params":{"session_id":"s1","agent_id":"a1","query_type":"","payload":{}}}`,
	}
	ctx := context.Background()
	for _, tr := range []Transport{TransportStdio, TransportHTTP} {
		for _, msg := range messages {
			got, want := bl.Handle(ctx, []byte(msg), tr), bp.Handle(ctx, []byte(msg), tr)
			g, w := volatileJSON.ReplaceAllString(string(got.Body), `"$1":_`), volatileJSON.ReplaceAllString(string(want.Body), `"$1":_`)
			if got.HTTPStatus != want.HTTPStatus {
				t.Errorf("transport %d, message %s: HTTP status in-process %d, pipe %d", tr, msg, got.HTTPStatus, want.HTTPStatus)
			}
			if g != w {
				t.Errorf("transport %d, message %s:\nin-process %s\npipe       %s", tr, msg, got.Body, want.Body)
			}
		}
	}
	for name, b := range map[string]*Bridge{"in-process": bl, "pipe": bp} {
		if c := b.Counters(); c.FailOpen+c.FailClosed+c.ObserveFailures+c.Panics > 0 {
			t.Errorf("%s: failures %+v", name, c)
		}
	}
}

// The streaming RPCs of NewEmbedded's clients go over the pipe, which starts on first use and
// shares the core with the in-process calls; Close ends streams and later calls.
func TestEmbeddedStreams(t *testing.T) {
	t.Parallel()
	clients, closer, err := NewEmbedded(server.Config{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	streams := clients.Intercept.(localIntercept).streams
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	event := func(id string) *ahpv1.Event { return testkit.ShellEvent(id, "rm -rf /") }

	if _, err := clients.Intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: event("u1")})); err != nil {
		t.Fatal(err)
	}
	if streams.t != nil {
		t.Fatal("a unary call started the HTTP/2 path")
	}

	watch, err := clients.Observation.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	// Watch answers once the server has subscribed (it sends its headers then), so a decision
	// made now reaches it.
	if _, err := clients.Intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: event("w1")})); err != nil {
		t.Fatal(err)
	}
	if !watch.Receive() {
		t.Fatalf("Watch saw no in-process decision: %v", watch.Err())
	}

	stream := clients.Intercept.InterceptStream(ctx)
	if err := stream.Send(&ahpv1.InterceptStreamRequest{Event: event("s1")}); err != nil {
		t.Fatal(err)
	}
	answer, err := stream.Receive()
	if err != nil {
		t.Fatalf("InterceptStream: %v", err)
	}
	if v := answer.GetDecision().GetVerdict(); v != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("InterceptStream verdict %v, want deny: %v", v, answer)
	}
	_ = stream.CloseRequest()
	_ = stream.CloseResponse()

	os := clients.Observation.ObserveStream(ctx)
	if err := os.Send(&ahpv1.ObserveStreamRequest{Event: testkit.Event("os1", ahpv1.EventType_EVENT_TYPE_SESSION_START)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.CloseAndReceive(); err != nil {
		t.Fatalf("ObserveStream: %v", err)
	}

	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	for watch.Receive() {
	}
	_, err = clients.Harness.GetCapabilities(ctx, connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("unary call after Close: %v, want unavailable", err)
	}
	if connect.IsWireError(err) {
		t.Errorf("unary call after Close: %v came over the wire, want the client's own error", err)
	}
	after := clients.Intercept.InterceptStream(ctx)
	_ = after.Send(&ahpv1.InterceptStreamRequest{Event: event("late")})
	if _, err := after.Receive(); err == nil {
		t.Error("a stream opened after Close answered")
	}
	if err := closer.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Closing before any stream ever started leaves nothing to dial.
func TestEmbeddedCloseWithoutStreams(t *testing.T) {
	t.Parallel()
	clients, closer, err := NewEmbedded(server.Config{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	watch, err := clients.Observation.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
	if err == nil {
		if watch.Receive() {
			t.Fatal("Watch after Close received something")
		}
		err = watch.Err()
	}
	if !errors.Is(err, errClosed) {
		t.Errorf("Watch after Close: %v, want errClosed", err)
	}
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Errorf("Watch after Close: %v, want unavailable", err)
	}
}

// With an interceptor only the HTTP path runs (tracing here), every call takes that path.
func TestEmbeddedWithTracingUsesThePipe(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var tracing connect.UnaryInterceptorFunc = func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			calls.Add(1)
			return next(ctx, req)
		}
	}
	clients, closer, err := NewEmbedded(server.Config{Logger: quietLog(), Tracing: tracing})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	if _, err := clients.Harness.GetCapabilities(context.Background(), connect.NewRequest(&ahpv1.GetCapabilitiesRequest{})); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("the tracing interceptor saw %d calls, want 1", calls.Load())
	}
}
