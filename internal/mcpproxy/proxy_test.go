package mcpproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/mcpproxy"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// testRules are the MCP rules of the tests' policy, beside testkit.PolicyYAML's.
const testRules = `  - id: deny-forbidden-write
    on: [tool.before]
    match: {tool_kinds: [mcp], tool_names: ["mcp__testserver__write_file"]}
    when: 'tool.mcp.server == "testserver" && tool.mcp.tool == "write_file" && input.path.contains("forbidden")'
    effect: {deny: {reason: "Writing under forbidden/ is not allowed.", code: dev.ahpgateway.test.mcp}}
  - id: redirect-write
    on: [tool.before]
    match: {tool_names: ["mcp__testserver__write_file"]}
    when: 'input.path.endsWith("redirect-me.txt")'
    effect: {modify: {merge_expr: '{"path": input.path.replace("redirect-me.txt", "redirected.txt")}'}}
  - id: ask-echo
    on: [tool.before]
    match: {tool_names: ["mcp__testserver__echo"]}
    when: 'input.text == "ask me"'
    effect: {ask: {reason: "echoing this needs a human"}}
  - id: note-echo
    on: [tool.before]
    match: {tool_names: ["mcp__testserver__echo"]}
    when: 'input.text == "note"'
    effect: {message: {text: "The policy saw this echo."}}
`

// writePolicy writes the tests' policy file.
func writePolicy(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(testkit.PolicyYAML("mcp-test", testRules)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// embedded starts the decision core in-process with the tests' policy.
func embedded(t testing.TB) bridge.Clients {
	t.Helper()
	clients, closer, err := bridge.NewEmbedded(server.Config{PolicyFile: writePolicy(t), PolicyPollInterval: -1, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "embedded decision core", closer.Close)
	return clients
}

// recorder wraps the clients to see what the gateway asks and records.
type recorder struct {
	ahpv1connect.InterceptServiceClient
	ahpv1connect.ObservationServiceClient
	before   chan *ahpv1.Event
	observed chan *ahpv1.Event
	// hold, when set, makes Intercept of a matching event wait for its context to end.
	hold    func(*ahpv1.Event) bool
	holding chan struct{}
}

func record(c bridge.Clients) *recorder {
	return &recorder{
		InterceptServiceClient: c.Intercept, ObservationServiceClient: c.Observation,
		before: make(chan *ahpv1.Event, 64), observed: make(chan *ahpv1.Event, 64), holding: make(chan struct{}, 8),
	}
}

func (r *recorder) clients() bridge.Clients {
	return bridge.Clients{Intercept: r, Observation: r}
}

func (r *recorder) Intercept(ctx context.Context, req *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	r.before <- req.Msg.GetEvent()
	if r.hold != nil && r.hold(req.Msg.GetEvent()) {
		r.holding <- struct{}{}
		<-ctx.Done()
		return nil, connect.NewError(connect.CodeCanceled, ctx.Err())
	}
	return r.InterceptServiceClient.Intercept(ctx, req)
}

func (r *recorder) Observe(ctx context.Context, req *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	r.observed <- req.Msg.GetEvent()
	return r.ObservationServiceClient.Observe(ctx, req)
}

// rig is one proxied session: the SDK client on one side, the test server process on the other.
type rig struct {
	t       testing.TB
	session *mcp.ClientSession
	proc    *mcpproxy.Process
	served  chan error
	dir     string
	logPath string
	stderr  *clitest.Output
}

type rigOptions struct {
	clients    bridge.Clients
	startErr   error
	failure    bridge.FailurePolicy
	limit      int
	serverName string
	clientOpts *mcp.ClientOptions
	// protocol is the MCP protocol version the client asks for (default: the SDK's latest).
	protocol string
	// command is the MCP server to run (default: this binary as the mcptest server).
	command []string
	// maxInFlight is Config.MaxInFlight.
	maxInFlight int
	// timeout and approvalWait are Config.Timeout and Config.ApprovalWait.
	timeout, approvalWait time.Duration
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	if o.limit == 0 {
		o.limit = mcpproxy.DefaultMaxMessageBytes
	}
	r := &rig{t: t, dir: t.TempDir(), served: make(chan error, 1), stderr: &clitest.Output{}}
	r.logPath = filepath.Join(r.dir, "calls.log")
	proxy, err := mcpproxy.New(mcpproxy.Config{
		Clients: o.clients, StartErr: o.startErr, FailurePolicy: o.failure, ServerName: o.serverName,
		MaxMessageBytes: o.limit, MaxInFlight: o.maxInFlight,
		Timeout: o.timeout, ApprovalWait: o.approvalWait,
		Logger: slog.New(slog.NewTextHandler(testkit.LockedWriter(r.stderr), &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), testServerEnv+"=1", testLogEnv+"="+r.logPath)
	if o.command != nil {
		cmd = exec.Command(o.command[0], o.command[1:]...)
	}
	cmd.Stderr = r.stderr
	if r.proc, err = mcpproxy.StartProcess(cmd, o.limit, 0); err != nil {
		t.Fatal(err)
	}
	toProxyR, toProxyW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	clientSide := mcpproxy.NewStream(toProxyR, toClientW, o.limit, func() error {
		toProxyR.Close()
		return toClientW.Close()
	})
	go func() { r.served <- proxy.Serve(context.Background(), clientSide, r.proc) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v1"}, o.clientOpts)
	client.AddRoots(&mcp.Root{URI: "file:///work/root", Name: "root"})
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if r.session, err = client.Connect(ctx, &mcp.IOTransport{Reader: toClientR, Writer: toProxyW}, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol}); err != nil {
		t.Fatalf("connecting through the proxy: %v; logs:\n%s", err, r.stderr.String())
	}
	t.Cleanup(func() {
		r.session.Close()
		<-r.proc.Done()
	})
	return r
}

func (r *rig) call(name string, args any) (*mcp.CallToolResult, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	return r.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// mustCall calls a tool and fails the test on a protocol error.
func (r *rig) mustCall(name string, args any) *mcp.CallToolResult {
	r.t.Helper()
	res, err := r.call(name, args)
	if err != nil {
		r.t.Fatalf("calling %s: %v; logs:\n%s", name, err, r.stderr.String())
	}
	return res
}

// received is what reached the test server, tool by tool.
func (r *rig) received() []map[string]any {
	r.t.Helper()
	f, err := os.Open(r.logPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			r.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func TestAllowedCallReachesServerAndIsObserved(t *testing.T) {
	t.Parallel()
	rec := record(embedded(t))
	r := newRig(t, rigOptions{clients: rec.clients()})
	res := r.mustCall("echo", map[string]any{"text": "hi"})
	if res.IsError || strings.Join(texts(res), "|") != "echo: hi" {
		t.Fatalf("result %+v, want the server's echo unchanged", texts(res))
	}
	if got := r.received(); len(got) != 1 || got[0]["tool"] != "echo" {
		t.Fatalf("server received %v, want one echo", got)
	}
	before := testkit.Receive(t, rec.before, "no tool.before")
	if before.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE || before.GetTool().GetKind() != ahpv1.ToolKind_TOOL_KIND_MCP ||
		before.GetTool().GetName() != "mcp__testserver__echo" || before.GetTool().GetMcp().GetServer() != testServer ||
		before.GetTool().GetMcp().GetTool() != "echo" || before.GetTool().GetInput().GetFields()["text"].GetStringValue() != "hi" {
		t.Errorf("tool.before = %v", before)
	}
	if before.GetOrigin().GetProvider() != "mcp" || before.GetSession().GetId() == "" {
		t.Errorf("origin %v, session %v", before.GetOrigin(), before.GetSession())
	}
	after := testkit.Receive(t, rec.observed, "no tool.after")
	if after.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_AFTER {
		t.Errorf("observed %v, want tool.after", after.GetType())
	}
	if after.GetTool().GetCallId() != before.GetTool().GetCallId() || !strings.HasPrefix(after.GetTool().GetCallId(), "mcp-"+before.GetSession().GetId()+"-") {
		t.Errorf("call ids %q (before) and %q (after): want the same, naming the session", before.GetTool().GetCallId(), after.GetTool().GetCallId())
	}
	out, _ := json.Marshal(after.GetTool().GetOutput().AsInterface())
	if !strings.Contains(string(out), "echo: hi") {
		t.Errorf("tool.after output %s, want the server's result", out)
	}
}

func TestDeniedCallNeverReachesServer(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{clients: embedded(t)})
	target := filepath.Join(r.dir, "forbidden", "x.txt")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	res := r.mustCall("write_file", map[string]any{"path": target, "content": "secret"})
	if !res.IsError || len(texts(res)) == 0 || texts(res)[0] != "Writing under forbidden/ is not allowed." {
		t.Fatalf("result isError=%v %q, want the policy's reason as a tool error", res.IsError, texts(res))
	}
	if id, _ := res.Meta["dev.ahpgateway/decision_id"].(string); id == "" {
		t.Errorf("refusal _meta %v has no decision id", res.Meta)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the denied write happened: %v", err)
	}
	if got := r.received(); len(got) != 0 {
		t.Fatalf("server received %v, want nothing", got)
	}
	// The session goes on.
	if res := r.mustCall("echo", map[string]any{"text": "still here"}); res.IsError {
		t.Errorf("echo after a denial: %q", texts(res))
	}
}

func TestModifiedCallWritesWherePolicySays(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{clients: embedded(t)})
	asked := filepath.Join(r.dir, "redirect-me.txt")
	res := r.mustCall("write_file", map[string]any{"path": asked, "content": "abc"})
	if res.IsError {
		t.Fatalf("result %q, want success", texts(res))
	}
	if _, err := os.Stat(asked); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file was written where the agent asked: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(r.dir, "redirected.txt")); err != nil || string(b) != "abc" {
		t.Errorf("redirected file: %q, %v", b, err)
	}
	got := r.received()
	if len(got) != 1 {
		t.Fatalf("server received %v", got)
	}
	if args := got[0]["args"].(map[string]any); args["path"] != filepath.Join(r.dir, "redirected.txt") || args["content"] != "abc" {
		t.Errorf("server received arguments %v, want the rewritten path and the content unchanged", args)
	}
}

func TestAskFallsBackToDenialAndMessagesReachTheModel(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{clients: embedded(t)})
	res := r.mustCall("echo", map[string]any{"text": "ask me"})
	if !res.IsError || !strings.Contains(strings.Join(texts(res), " "), "approval required") {
		t.Errorf("ask: isError=%v %q, want a denial saying approval is required", res.IsError, texts(res))
	}
	res = r.mustCall("echo", map[string]any{"text": "note"})
	if res.IsError || strings.Join(texts(res), "|") != "echo: note|The policy saw this echo." {
		t.Errorf("message: %q, want the server's result and the policy's note", texts(res))
	}
	if got := r.received(); len(got) != 1 || got[0]["tool"] != "echo" {
		t.Errorf("server received %v, want only the noted echo", got)
	}
}

// TestEverythingElsePassesThrough runs both handshakes: the stateless server/discover of
// protocol 2026-07-28 (the SDK's default) and the initialize of 2025-11-25.
func TestEverythingElsePassesThrough(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			testPassThrough(t, protocol)
		})
	}
}

func testPassThrough(t *testing.T, protocol string) {
	progress := make(chan float64, 16)
	rec := record(embedded(t))
	r := newRig(t, rigOptions{clients: rec.clients(), protocol: protocol, clientOpts: &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Progress
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if info := r.session.InitializeResult().ServerInfo; info == nil || info.Name != testServer || info.Version != "v0.0.1" {
		t.Errorf("serverInfo %+v", info)
	}
	tools, err := r.session.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 8 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
	rr, err := r.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://hello"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello from the resource" {
		t.Errorf("resources/read: %v, %v", rr, err)
	}
	pr, err := r.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	if err != nil || len(pr.Messages) != 1 {
		t.Errorf("prompts/get: %v, %v", pr, err)
	}
	if err := r.session.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	// Progress notifications of a call, with the request's progress token kept.
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("tok-1")
	if _, err := r.session.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	for want := 1.0; want <= 3; want++ {
		if got := testkit.Receive(t, progress, "progress notification not relayed"); got != want {
			t.Errorf("progress %v, want %v", got, want)
		}
	}
	ev := testkit.Receive(t, rec.before, "no tool.before")
	if ev.GetTool().GetMcp().GetServer() != testServer {
		t.Errorf("server identity %q, want the server's own name from the handshake", ev.GetTool().GetMcp().GetServer())
	}
	if info := ev.GetPayload().GetStructValue().GetFields()["mcp_client_info"]; info.GetStructValue().GetFields()["name"].GetStringValue() != "test-client" {
		t.Errorf("payload %v has no client info", ev.GetPayload())
	}
	if protocol != "" {
		// A request from the server to the client in the middle of a tool call (the stateless
		// protocol has none: it returns input requests instead).
		if res := r.mustCall("roots", map[string]any{}); strings.Join(texts(res), "") != "file:///work/root" {
			t.Errorf("roots through the proxy: %q", texts(res))
		}
	}
}

func TestCancelledWhileDecidingIsNeverForwarded(t *testing.T) {
	t.Parallel()
	rec := record(embedded(t))
	rec.hold = func(ev *ahpv1.Event) bool {
		return ev.GetTool().GetInput().GetFields()["text"].GetStringValue() == "hold"
	}
	r := newRig(t, rigOptions{clients: rec.clients()})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := r.session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hold"}})
		errc <- err
	}()
	testkit.Receive(t, rec.holding, "the call never reached the policy")
	cancel()
	if err := testkit.Receive(t, errc, "the cancelled call did not return"); err == nil {
		t.Fatal("cancelled call succeeded")
	}
	testkit.Receive(t, r.mustCallAsync("echo", map[string]any{"text": "after"}), "later call not answered")
	if got := r.received(); len(got) != 1 || got[0]["args"].(map[string]any)["text"] != "after" {
		t.Errorf("server received %v, want only the later call", got)
	}
	r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "cancelled the call while it was being decided") })
}

// TestCancelledForwardedCallsFreeTheirSlot cancels more forwarded calls than the in-flight limit
// holds: each cancellation frees its slot, so later calls still go through.
func TestCancelledForwardedCallsFreeTheirSlot(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 8)
	r := newRig(t, rigOptions{clients: embedded(t), maxInFlight: 4, clientOpts: &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { started <- struct{}{} },
	}})
	for i := range 6 {
		ctx, cancel := context.WithCancel(context.Background())
		params := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}
		params.SetProgressToken(fmt.Sprint("w", i))
		errc := make(chan error, 1)
		go func() {
			_, err := r.session.CallTool(ctx, params)
			errc <- err
		}()
		// The server reports progress once it has the call.
		testkit.Receive(t, started, "the call did not reach the server")
		cancel()
		testkit.Receive(t, errc, "the cancelled call did not return")
	}
	if res := r.mustCall("echo", map[string]any{"text": "still room"}); res.IsError {
		t.Errorf("after the cancellations: %q", texts(res))
	}
}

// mustCallAsync calls a tool and delivers the result on a channel.
func (r *rig) mustCallAsync(name string, args any) <-chan *mcp.CallToolResult {
	ch := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := r.call(name, args)
		if err != nil {
			r.t.Errorf("calling %s: %v", name, err)
			close(ch)
			return
		}
		ch <- res
	}()
	return ch
}

func TestFailurePolicy(t *testing.T) {
	t.Parallel()
	down := errors.New("backend down")
	t.Run("fail-closed", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, rigOptions{startErr: down, failure: bridge.FailClosed})
		res := r.mustCall("echo", map[string]any{"text": "hi"})
		if !res.IsError || texts(res)[0] != bridge.SyntheticDenyReason || !strings.Contains(texts(res)[1], "fail-closed") {
			t.Errorf("result %q, want the synthetic denial and a notice", texts(res))
		}
		if got := r.received(); len(got) != 0 {
			t.Errorf("server received %v", got)
		}
	})
	t.Run("fail-open", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, rigOptions{startErr: down, failure: bridge.FailOpen})
		res := r.mustCall("echo", map[string]any{"text": "hi"})
		if res.IsError || texts(res)[0] != "echo: hi" || !strings.Contains(texts(res)[1], "fail-open") {
			t.Errorf("result %q, want the server's answer and a notice", texts(res))
		}
		if got := r.received(); len(got) != 1 {
			t.Errorf("server received %v", got)
		}
	})
}

func TestServerCrashIsAClearErrorAndEndsTheSession(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{clients: embedded(t)})
	_, err := r.call("crash", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "the MCP server exited (exit status 3) before answering") {
		t.Fatalf("crash: %v, want an error saying the server exited", err)
	}
	served := testkit.Receive(t, r.served, "the proxy did not end the session")
	var exit *mcpproxy.ServerExitError
	if !errors.As(served, &exit) {
		t.Fatalf("Serve returned %v, want a ServerExitError", served)
	}
	if _, err := r.call("echo", map[string]any{"text": "x"}); err == nil {
		t.Error("a call after the crash succeeded")
	}
}

func TestClientDisconnectStopsServer(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{clients: embedded(t)})
	r.mustCall("echo", map[string]any{"text": "hi"})
	r.session.Close()
	if err := testkit.Receive(t, r.served, "the proxy did not end the session"); err != nil {
		t.Errorf("Serve: %v, want nil when the client leaves", err)
	}
	testkit.Receive(t, r.proc.Done(), "the server was not stopped")
}

func TestOversizedMessagesAreRefusedAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	const limit = 16 << 10
	r := newRig(t, rigOptions{clients: embedded(t), limit: limit})
	_, err := r.call("echo", map[string]any{"text": strings.Repeat("a", 2*limit)})
	if err == nil || !strings.Contains(err.Error(), "over the 16384-byte limit") {
		t.Fatalf("oversized request: %v, want a size error", err)
	}
	_, err = r.call("big", map[string]any{"bytes": 2 * limit})
	if err == nil || !strings.Contains(err.Error(), "answer was over the gateway's size limit") {
		t.Fatalf("oversized answer: %v, want a size error", err)
	}
	if res := r.mustCall("echo", map[string]any{"text": "small"}); texts(res)[0] != "echo: small" {
		t.Errorf("after the refusals: %q", texts(res))
	}
	got := r.received()
	if len(got) != 2 || got[0]["tool"] != "big" || got[1]["tool"] != "echo" {
		t.Errorf("server received %v, want big (its answer refused) and the small echo", got)
	}
}

func TestToolErrorsAreObservedAsToolError(t *testing.T) {
	t.Parallel()
	rec := record(embedded(t))
	r := newRig(t, rigOptions{clients: rec.clients(), serverName: "fixed-name"})
	if res := r.mustCall("fail", map[string]any{}); !res.IsError {
		t.Fatal("fail did not fail")
	}
	before := testkit.Receive(t, rec.before, "no tool.before")
	if before.GetTool().GetMcp().GetServer() != "fixed-name" || before.GetTool().GetName() != "mcp__fixed-name__fail" {
		t.Errorf("configured server name not used: %v", before.GetTool())
	}
	ev := testkit.Receive(t, rec.observed, "no observation")
	if ev.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_ERROR || ev.GetTool().GetError().GetMessage() != "it failed" {
		t.Errorf("observed %v %v, want tool.error with the tool's message", ev.GetType(), ev.GetTool().GetError())
	}
}

func TestUpstreamServerDecides(t *testing.T) {
	t.Parallel()
	url := clitest.Serve(t, server.Config{PolicyFile: writePolicy(t), PolicyPollInterval: -1, Logger: testkit.Discard()})
	clients, closer, err := bridge.NewUpstream(url, bridge.UpstreamOptions{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "upstream clients", closer.Close)
	r := newRig(t, rigOptions{clients: clients, failure: bridge.FailClosed})
	target := filepath.Join(r.dir, "forbidden-too.txt")
	if res := r.mustCall("write_file", map[string]any{"path": target, "content": "x"}); !res.IsError || texts(res)[0] != "Writing under forbidden/ is not allowed." {
		t.Errorf("upstream denial: %q", texts(res))
	}
	if res := r.mustCall("echo", map[string]any{"text": "hi"}); res.IsError {
		t.Errorf("upstream allow: %q", texts(res))
	}
	if got := r.received(); len(got) != 1 || got[0]["tool"] != "echo" {
		t.Errorf("server received %v", got)
	}
}
