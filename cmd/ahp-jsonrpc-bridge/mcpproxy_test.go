package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/mcpproxy/mcptest"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// This test binary is also the MCP server behind the proxy (mcptest), when run with
// mcptest.ServerEnv set: init runs before TestMain, so the server never starts the tests.
func init() {
	if os.Getenv(mcptest.ServerEnv) == "1" {
		os.Exit(mcptest.Run())
	}
}

// mcpPolicy names the server "files", as -server-name does below.
const mcpPolicy = `version: 1
name: mcp-gateway-test
rules:
  - id: deny-secret-write
    on: [tool.before]
    match: {tool_kinds: [mcp], tool_names: ["mcp__files__write_file"]}
    when: 'input.path.endsWith(".secret")'
    effect: {deny: {reason: "No writing secrets."}}
  - id: redirect-write
    on: [tool.before]
    match: {tool_names: ["mcp__files__write_file"]}
    when: 'input.path.endsWith("asked.txt")'
    effect: {modify: {merge_expr: '{"path": input.path.replace("asked.txt", "given.txt")}'}}
`

// mcpSession launches `ahp-jsonrpc-bridge mcp-proxy args -- <this test binary as the server>`
// with the SDK's CommandTransport, as an MCP client would.
func mcpSession(t *testing.T, dir string, args ...string) *mcp.ClientSession {
	t.Helper()
	bin := needBinary(t)
	args = append(append([]string{"mcp-proxy"}, args...), "--", os.Args[0])
	cmd := exec.Command(bin, args...)
	cmd.Env = append(childEnv(), mcptest.ServerEnv+"=1", mcptest.LogEnv+"="+filepath.Join(dir, "calls.log"))
	var stderr bytes.Buffer
	cmd.Stderr = testkit.LockedWriter(&stderr)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "process-test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting: %v; stderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := session.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
		if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
			t.Errorf("the proxy did not exit 0 after the client left: %v; stderr:\n%s", cmd.ProcessState, stderr.String())
		}
	})
	return session
}

func callText(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "|"), res.IsError
}

func TestMCPProxyProcess(t *testing.T) {
	t.Parallel()
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(mcpPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	up := clitest.Serve(t, server.Config{PolicyFile: policy, PolicyPollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"embedded", []string{"-policy", policy}},
		{"upstream", []string{"-upstream", up, "-failure-policy", "fail-closed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := mcpSession(t, dir, append(c.args, "-server-name", "files", "-log-level", "debug")...)
			if text, isErr := callText(t, s, "echo", map[string]any{"text": "hi"}); isErr || text != "echo: hi" {
				t.Errorf("allowed call: %q (isError %v)", text, isErr)
			}
			secret := filepath.Join(dir, "key.secret")
			if text, isErr := callText(t, s, "write_file", map[string]any{"path": secret, "content": "x"}); !isErr || text != "No writing secrets." {
				t.Errorf("denied call: %q (isError %v)", text, isErr)
			}
			if _, err := os.Stat(secret); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the denied write happened: %v", err)
			}
			if _, isErr := callText(t, s, "write_file", map[string]any{"path": filepath.Join(dir, "asked.txt"), "content": "y"}); isErr {
				t.Error("modified call failed")
			}
			if b, err := os.ReadFile(filepath.Join(dir, "given.txt")); err != nil || string(b) != "y" {
				t.Errorf("the modified call did not write where the policy said: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "asked.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the modified call wrote where the agent asked: %v", err)
			}
		})
	}
}

func TestMCPProxyProcessFailClosedWhenUpstreamIsDown(t *testing.T) {
	t.Parallel()
	url := testkit.DownURL(t)
	dir := t.TempDir()
	s := mcpSession(t, dir, "-upstream", url, "-failure-policy", "fail-closed", "-timeout-ms", "500")
	text, isErr := callText(t, s, "echo", map[string]any{"text": "hi"})
	if !isErr || !strings.HasPrefix(text, bridge.SyntheticDenyReason) || !strings.Contains(text, "fail-closed") {
		t.Errorf("call with the backend down: %q (isError %v), want the synthetic denial", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "calls.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call reached the server: %v", err)
	}
}

func TestMCPProxyProcessHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := mcptest.New(filepath.Join(dir, "calls.log"))
	target := testkit.StartLoopback(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(mcpPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "mcp-proxy", "-listen", "127.0.0.1:0", "-target", target, "-policy", policy, "-server-name", "files")
	line := p.stderr.Wait(t, func(l string) bool { return strings.Contains(l, "msg=listening") })
	_, addr, _ := strings.Cut(line, "addr=")
	addr, _, _ = strings.Cut(addr, " ")

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "http-process-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connecting: %v; stderr:\n%s", err, p.stderr.String())
	}
	if text, isErr := callText(t, s, "echo", map[string]any{"text": "hi"}); isErr || text != "echo: hi" {
		t.Errorf("allowed call: %q (isError %v)", text, isErr)
	}
	secret := filepath.Join(dir, "k.secret")
	if text, isErr := callText(t, s, "write_file", map[string]any{"path": secret, "content": "x"}); !isErr || text != "No writing secrets." {
		t.Errorf("denied call: %q (isError %v)", text, isErr)
	}
	if _, err := os.Stat(secret); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the denied write happened: %v", err)
	}
	s.Close()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, p.stderr.String())
	}
}

// TestMCPProxyProcessHeldForApproval: with -approval-wait, a tools/call an ahp-server holds for
// approval is answered when a person decides: approved, the server gets it; denied, it never does.
func TestMCPProxyProcessHeldForApproval(t *testing.T) {
	t.Parallel()
	up, approver := approvalUpstreamWith(t, `  - id: ask-hold-echo
    on: [tool.before]
    match: {tool_names: ["mcp__files__echo"]}
    when: 'input.text.startsWith("hold")'
    effect:
      ask:
        reason: echoing this needs a human
        approval: {hold: 1h}
`)
	dir := t.TempDir()
	s := mcpSession(t, dir, "-upstream", up, "-failure-policy", "fail-closed", "-approval-wait", "10m", "-server-name", "files", "-log-level", "warn")
	for _, c := range []struct {
		text    string
		approve bool
		comment string
		want    string
		isErr   bool
	}{
		{"hold one", true, "ok", "echo: hold one|approved by an unauthenticated approver: ok", false},
		{"hold two", false, "no", "denied by an unauthenticated approver: no", true},
	} {
		type answer struct {
			text  string
			isErr bool
		}
		got := make(chan answer, 1)
		go func() {
			// Not callText: t.Fatal belongs to the test's goroutine.
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": c.text}})
			if err != nil {
				got <- answer{"call failed: " + err.Error(), true}
				return
			}
			var parts []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					parts = append(parts, tc.Text)
				}
			}
			got <- answer{strings.Join(parts, "|"), res.IsError}
		}()
		approver.decideNext(t, c.approve, c.comment)
		if a := testkit.Receive(t, got, c.text+": no answer"); a.text != c.want || a.isErr != c.isErr {
			t.Errorf("%s: %q (isError %v), want %q (isError %v)", c.text, a.text, a.isErr, c.want, c.isErr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "calls.log")); err != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), "hold one") {
		t.Errorf("the server received %q (%v), want only the approved call", b, err)
	}
}

// In embedded mode no one can decide an approval: -approval-wait is ignored, with a warning.
func TestMCPProxyApprovalWaitIsIgnoredEmbedded(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	cfg, code := parseMCPProxyFlags([]string{"-approval-wait", "10m", "--", "true"}, &stderr, noEnv)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if w := cfg.heldCallWait(); w != 0 {
		t.Errorf("embedded wait %v, want 0", w)
	}
	if !strings.Contains(stderr.String(), "-approval-wait has no effect in embedded mode") {
		t.Errorf("stderr %q, want the warning", stderr.String())
	}
	cfg, _ = parseMCPProxyFlags([]string{"-approval-wait", "10m", "-upstream", "http://127.0.0.1:1", "-failure-policy", "fail-closed", "--", "true"}, &stderr, noEnv)
	if w := cfg.heldCallWait(); w != 10*time.Minute {
		t.Errorf("upstream wait %v, want 10m", w)
	}
}

func TestMCPProxyUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp-proxy"}, "name the MCP server to launch after --"},
		{[]string{"mcp-proxy", "-upstream", "http://127.0.0.1:1", "--", "true"}, "-failure-policy fail-open|fail-closed is required with -upstream"},
		{[]string{"mcp-proxy", "-max-output-bytes", "12", "--", "true"}, "-max-output-bytes: want a number of bytes"},
		{[]string{"mcp-proxy", "-listen", "127.0.0.1:0"}, "-listen and -target go together"},
		{[]string{"mcp-proxy", "-approval-wait", "25h", "--", "true"}, "-approval-wait: want a duration from 0 to 24h"},
		{[]string{"mcp-proxy", "-listen", "127.0.0.1:0", "-target", "http://127.0.0.1:1/mcp", "--", "true"}, "not both"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr, noEnv); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, stderr.String(), c.want)
		}
	}
}

// BenchmarkMCPProxyStartAndAnswer is what an MCP client pays to start a server and get its first
// tool answer: launch, handshake (server/discover, the SDK's default), one allowed tools/call —
// directly (the test MCP server alone) and through `mcp-proxy` in embedded mode (default policy),
// which adds a process and the decision core's start, and against an ahp-server on loopback.
// ns/op runs to the answer.
func BenchmarkMCPProxyStartAndAnswer(b *testing.B) {
	bin := needBinary(b)
	up := startUpstream(b)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"direct", nil},
		{"proxy-embedded", []string{bin, "mcp-proxy", "-log-level", "warn", "--"}},
		{"proxy-upstream", []string{bin, "mcp-proxy", "-log-level", "warn", "-upstream", up, "-failure-policy", "fail-closed", "--"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			log := filepath.Join(b.TempDir(), "calls.log")
			for b.Loop() {
				argv := append(append([]string(nil), c.args...), os.Args[0])
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = append(childEnv(), mcptest.ServerEnv+"=1", mcptest.LogEnv+"="+log)
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				s, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
				if err != nil {
					b.Fatal(err)
				}
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
				if err != nil || res.IsError {
					b.Fatalf("call: %v %v", res, err)
				}
				b.StopTimer()
				s.Close()
				cancel()
				b.StartTimer()
			}
		})
	}
}
