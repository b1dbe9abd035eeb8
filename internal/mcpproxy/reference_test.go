package mcpproxy_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/mcpproxy"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// The reference MCP servers of the protocol's authors, from npm (package.json devDependencies;
// `npm ci` at the repository root installs them, as .ci/run does).

// referenceServer finds node_modules/.bin/NAME above the package directory, or in
// $AHP_MCP_REFERENCE_BIN, and skips the test when it is not installed — or fails it when
// AHP_MCP_REFERENCE_OPTIONAL=0 (CI installs them, so a missing server must not pass as a skip).
func referenceServer(t *testing.T, name string) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("AHP_MCP_REFERENCE_OPTIONAL") == "0" {
		skip = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("skipping: node is not installed (the reference MCP servers run on Node.js)")
	}
	var dirs []string
	if d := os.Getenv("AHP_MCP_REFERENCE_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		dirs = append(dirs, filepath.Join(d, "node_modules", ".bin"))
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	skip("skipping: %s is not installed (run `npm ci` at the repository root, or set AHP_MCP_REFERENCE_BIN)", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

const referenceRules = `  - id: deny-env-writes
    on: [tool.before]
    match: {tool_kinds: [mcp], tool_names: ["mcp__filesystem__write_file", "mcp__filesystem__edit_file"]}
    when: 'input.path.endsWith(".env")'
    effect: {deny: {reason: "Agents may not write .env files."}}
  - id: drafts-go-to-drafts
    on: [tool.before]
    match: {tool_names: ["mcp__filesystem__write_file"]}
    when: 'input.path.endsWith("/draft.txt")'
    effect: {modify: {merge_expr: '{"path": input.path.replace("/draft.txt", "/drafts/draft.txt")}'}}
  - id: no-secret-echo
    on: [tool.before]
    match: {tool_kinds: [mcp]}
    when: 'tool.mcp.server.contains("everything") && tool.mcp.tool == "echo" && input.message.contains("secret")'
    effect: {deny: {reason: "Not echoing secrets."}}
`

func referenceClients(t *testing.T) bridge.Clients {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(testkit.PolicyYAML("mcp-reference", referenceRules)), 0o600); err != nil {
		t.Fatal(err)
	}
	clients, closer, err := bridge.NewEmbedded(server.Config{PolicyFile: path, PolicyPollInterval: -1, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "embedded decision core", closer.Close)
	return clients
}

func TestReferenceFilesystemServer(t *testing.T) {
	t.Parallel()
	bin := referenceServer(t, "mcp-server-filesystem")
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "drafts"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigOptions{clients: referenceClients(t), serverName: "filesystem", command: []string{bin, root}})

	// Denied: the file does not exist afterwards.
	env := filepath.Join(root, ".env")
	res := r.mustCall("write_file", map[string]any{"path": env, "content": "TOKEN=1"})
	if !res.IsError || texts(res)[0] != "Agents may not write .env files." {
		t.Errorf("denied write: isError=%v %q", res.IsError, texts(res))
	}
	if fileExists(env) {
		t.Error("the denied write reached the server: .env exists")
	}
	// Modified: written where the policy said.
	res = r.mustCall("write_file", map[string]any{"path": filepath.Join(root, "draft.txt"), "content": "v1"})
	if res.IsError {
		t.Errorf("modified write: %q", texts(res))
	}
	if b, err := os.ReadFile(filepath.Join(root, "drafts", "draft.txt")); err != nil || string(b) != "v1" {
		t.Errorf("drafts/draft.txt: %q, %v", b, err)
	}
	if fileExists(filepath.Join(root, "draft.txt")) {
		t.Error("the modified write went where the agent asked")
	}
	// Allowed: unchanged.
	res = r.mustCall("write_file", map[string]any{"path": filepath.Join(root, "notes.txt"), "content": "hello"})
	if res.IsError {
		t.Errorf("allowed write: %q", texts(res))
	}
	res = r.mustCall("read_text_file", map[string]any{"path": filepath.Join(root, "notes.txt")})
	if res.IsError || strings.Join(texts(res), "") != "hello" {
		t.Errorf("read back: %q", texts(res))
	}

	// The server crashes: the client gets a clear error, the session ends.
	if err := syscall.Kill(-r.proc.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	served := testkit.Receive(t, r.served, "the proxy did not notice the server's end")
	var exit *mcpproxy.ServerExitError
	if !errors.As(served, &exit) || !strings.Contains(served.Error(), "signal: killed") {
		t.Errorf("Serve: %v, want the server's exit", served)
	}
	if _, err := r.call("list_allowed_directories", map[string]any{}); err == nil {
		t.Error("a call after the crash succeeded")
	}
}

func TestReferenceEverythingServer(t *testing.T) {
	t.Parallel()
	bin := referenceServer(t, "mcp-server-everything")
	progress := make(chan float64, 16)
	sampled := make(chan struct{}, 1)
	r := newRig(t, rigOptions{clients: referenceClients(t), command: []string{bin, "stdio"}, clientOpts: &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Progress
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled <- struct{}{}
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled text"}}, nil
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if name := r.session.InitializeResult().ServerInfo.Name; !strings.Contains(name, "everything") {
		t.Errorf("serverInfo.name %q", name)
	}
	tools, err := r.session.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) < 5 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
	if _, err := r.session.ListResources(ctx, nil); err != nil {
		t.Errorf("resources/list: %v", err)
	}
	if _, err := r.session.ListPrompts(ctx, nil); err != nil {
		t.Errorf("prompts/list: %v", err)
	}
	// The server's name comes from its own handshake here (no -server-name).
	if res := r.mustCall("echo", map[string]any{"message": "a secret"}); !res.IsError || texts(res)[0] != "Not echoing secrets." {
		t.Errorf("denied echo: %q", texts(res))
	}
	if res := r.mustCall("echo", map[string]any{"message": "hello"}); res.IsError || !strings.Contains(strings.Join(texts(res), ""), "hello") {
		t.Errorf("allowed echo: %q", texts(res))
	}
	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.03, "steps": 3}}
	params.SetProgressToken("op-1")
	if _, err := r.session.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	for want := 1.0; want <= 3; want++ {
		if got := testkit.Receive(t, progress, "progress not relayed"); got != want {
			t.Errorf("progress %v, want %v", got, want)
		}
	}
	// A request of the server to the client (sampling) in the middle of a tool call.
	res := r.mustCall("trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 10})
	testkit.Receive(t, sampled, "the server's sampling request did not reach the client")
	if res.IsError || !strings.Contains(strings.Join(texts(res), ""), "sampled text") {
		t.Errorf("sampling through the proxy: %q", texts(res))
	}

	// The client leaves: the server is stopped.
	r.session.Close()
	if err := testkit.Receive(t, r.served, "the session did not end"); err != nil {
		t.Errorf("Serve: %v", err)
	}
	testkit.Receive(t, r.proc.Done(), "the server was not stopped")
}

// startEverythingHTTP runs the everything server's Streamable HTTP transport on a free loopback
// port and returns the port once that server answers an MCP initialize there. The port is free
// when chosen but may be taken (a parallel test's listener or outgoing connection) before node
// listens on it; the server then prints "listening on port" anyway (Express calls the listen
// callback with the error), then "already in use", and exits: it is started again on another
// port.
func startEverythingHTTP(t *testing.T, bin string) (string, *clitest.Output) {
	t.Helper()
	const attempts = 5
	for attempt := 1; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
		cmd := exec.Command(bin, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out := &clitest.Output{}
		cmd.Stderr, cmd.Stdout = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
		out.Wait(t, func(l string) bool {
			return strings.Contains(l, "listening on port") || strings.Contains(l, "already in use")
		})
		// Whichever comes first: the server answers, or it exits (a taken port's listener may
		// never answer the probe).
		ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
		probed := make(chan error, 1)
		go func() { probed <- initializes(ctx, port) }()
		select {
		case err = <-probed:
		case <-exited:
			err = errors.New("the server exited")
		}
		cancel()
		if err == nil {
			return port, out
		}
		select {
		case <-exited:
		case <-time.After(testkit.WaitTimeout):
			t.Fatalf("the everything server neither answered on port %s (%v) nor exited; its output:\n%s", port, err, out.String())
		}
		if !strings.Contains(out.String(), "already in use") || attempt == attempts {
			t.Fatalf("the everything server on port %s: %v; its output:\n%s", port, err, out.String())
		}
		t.Logf("port %s was taken before the everything server could listen on it; starting it again on another", port)
	}
}

// initializes is nil when the MCP server on port is the everything server.
func initializes(ctx context.Context, port string) error {
	s, err := mcp.NewClient(&mcp.Implementation{Name: "probe"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1:" + port + "/mcp"}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if name := s.InitializeResult().ServerInfo.Name; !strings.Contains(name, "everything") {
		return errors.New("another MCP server answers there: " + name)
	}
	return nil
}

func TestReferenceEverythingServerOverHTTP(t *testing.T) {
	t.Parallel()
	bin := referenceServer(t, "mcp-server-everything")
	port, out := startEverythingHTTP(t, bin)

	proxy, err := mcpproxy.New(mcpproxy.Config{Clients: referenceClients(t), ServerName: "everything", Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := proxy.NewHTTP("http://127.0.0.1:"+port+"/mcp", mcpproxy.HTTPOptions{LoopbackHostsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "HTTP gateway", h.Close)
	gateway := testkit.StartLoopback(t, h)

	progress := make(chan float64, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "reference-http"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progress <- req.Params.Progress },
	})
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gateway + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connecting through the HTTP gateway: %v; server output:\n%s", err, out.String())
	}
	defer s.Close()
	if tools, err := s.ListTools(ctx, nil); err != nil || len(tools.Tools) < 5 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if res := call("echo", map[string]any{"message": "a secret"}); !res.IsError || texts(res)[0] != "Not echoing secrets." {
		t.Errorf("denied echo: %q", texts(res))
	}
	if res := call("echo", map[string]any{"message": "hello"}); res.IsError || !strings.Contains(strings.Join(texts(res), ""), "hello") {
		t.Errorf("allowed echo: %q", texts(res))
	}
	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.03, "steps": 3}}
	params.SetProgressToken("op-http")
	if _, err := s.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	for want := 1.0; want <= 3; want++ {
		if got := testkit.Receive(t, progress, "progress not relayed over HTTP"); got != want {
			t.Errorf("progress %v, want %v", got, want)
		}
	}
}
