package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/coder/websocket"
)

// testTimeout bounds every wait in these tests.
const testTimeout = clitest.Timeout

// binary is the ahp-jsonrpc-bridge built once for the process-level tests and benchmarks; buildErr
// says why there is none.
var binary, buildErr = "", error(nil)

func TestMain(m *testing.M) {
	var remove func()
	binary, remove, buildErr = clitest.Build("ahp-jsonrpc-bridge")
	code := m.Run()
	remove()
	os.Exit(code)
}

// needBinary skips a process-level test when the command could not be built, which happens while
// the dialect package (internal/bridge) is being written.
func needBinary(tb testing.TB) string {
	tb.Helper()
	if buildErr != nil {
		tb.Skipf("skipping: the ahp-jsonrpc-bridge binary did not build (is internal/bridge complete?): %v", buildErr)
	}
	return binary
}

// Messages of both dialects.

func hooksIntercept(id, command string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":%q,"source":"urn:bridge-test","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1"},"tool":{"callId":"c-%s","name":"Bash","kind":"shell","input":{"command":%q}}},"capabilities":{"effects":["deny"]}}}`, id, id, id, command)
}

func hooksObserve(id string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":%q,"source":"urn:bridge-test","type":"session.start","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`, id)
}

func harnessHandshake(id string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"a3s-ahp","version":"2.4.0","capabilities":["pre_action","post_action"]},"session_id":"s1","agent_id":"a1"}}`, id)
}

func harnessEvent(id, command string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":%q}}}}`, id, command)
}

func harnessNotification() string {
	return `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"status":"ok"}}}`
}

// answer is the part of a JSON-RPC answer of either dialect the tests check.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
		Effects         []struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"effects"`
		Extensions map[string]map[string]any `json:"extensions"`
		Decision   string                    `json:"decision"`
		Reason     string                    `json:"reason"`
		Protocol   string                    `json:"protocol_version"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decode(t testing.TB, line string) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("answer %q is not JSON: %v", line, err)
	}
	return a
}

// verdict summarises an answer: "deny: reason", "no-effect", "block: reason", "allow",
// "handshake 2.4" or "error CODE".
func verdict(t testing.TB, line string) string {
	t.Helper()
	a := decode(t, line)
	switch {
	case a.Error != nil:
		return fmt.Sprintf("error %d", a.Error.Code)
	case a.Result == nil:
		return "no result"
	case a.Result.ProtocolVersion == "0.1" && len(a.Result.Effects) == 0 && a.Result.Effects != nil:
		return "no-effect"
	case a.Result.ProtocolVersion == "0.1" && len(a.Result.Effects) == 1:
		return a.Result.Effects[0].Type + ": " + a.Result.Effects[0].Reason
	case a.Result.Decision == "block":
		return "block: " + a.Result.Reason
	case a.Result.Decision != "":
		return a.Result.Decision
	case a.Result.Protocol != "":
		return "handshake " + a.Result.Protocol
	}
	return "unrecognised: " + line
}

var noEnv = clitest.Env(nil)

// runBridge runs the command to completion with args, env and stdin.
func runBridge(args []string, env map[string]string, stdin string) clitest.Result {
	return clitest.Run(func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
		return run(ctx, args, stdin, stdout, stderr, clitest.Env(env))
	}, stdin)
}

// usageCase is a command line and environment that are a usage error, and what stderr says.
type usageCase struct {
	args   []string
	env    map[string]string
	stderr string
}

// check runs the command with stdin and checks that it exits 2 with nothing on stdout.
func (c usageCase) check(t *testing.T, stdin string) {
	t.Helper()
	what := fmt.Sprint(c.args, c.env)
	r := runBridge(c.args, c.env, stdin)
	r.Expect(t, what, 2, c.stderr)
	r.ExpectNoStdout(t, what)
}

func TestFlagErrorsAreUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []usageCase{
		{[]string{"-timeout-ms", "99"}, nil, "-timeout-ms: want a whole number of milliseconds from 100 to 30000"},
		{[]string{"-timeout-ms", "30001"}, nil, "-timeout-ms"},
		{nil, map[string]string{"AHP_BRIDGE_TIMEOUT_MS": "soon"}, `got "soon"`},
		{[]string{"-upstream", "http://127.0.0.1:1"}, nil, "-failure-policy fail-open|fail-closed is required with -upstream"},
		{[]string{"-upstream", "http://127.0.0.1:1", "-failure-policy", "fail-open", "-policy", "p.yaml"}, nil, "-policy is for embedded mode"},
		{[]string{"-upstream-token-env", "TOKEN"}, nil, "-upstream-token-env needs -upstream"},
		{[]string{"-failure-policy", "maybe"}, nil, "-failure-policy: want fail-open or fail-closed"},
		{[]string{"-once", "-http", "127.0.0.1:0"}, nil, "-once is stdio per_event mode on its own"},
		{[]string{"-once", "-stdio"}, nil, "-once"},
		{[]string{"-dialect", "mcp"}, nil, "-dialect"},
		{[]string{"-unix-mode", "0999"}, nil, "-unix-mode"},
		{[]string{"-unix", "@ahp-bridge"}, nil, "-unix \"@ahp-bridge\" is an abstract socket, which any local user can connect to; give -unix-allow-uid"},
		{nil, map[string]string{"AHP_BRIDGE_UNIX": "@ahp-bridge"}, "-unix-allow-uid"},
		{[]string{"-hooks-path", "hooks"}, nil, "-hooks-path must start with /"},
		{[]string{"-max-message-bytes", "10"}, nil, "-max-message-bytes"},
		{[]string{"-concurrency", "0"}, nil, "-concurrency"},
		{[]string{"-upstream-protocol", "soap"}, nil, "-upstream-protocol"},
		{[]string{"-policy-poll", "often"}, nil, "-policy-poll"},
		{[]string{"-shutdown-timeout", "0s"}, nil, "-shutdown-timeout"},
		{[]string{"-log-level", "loud"}, nil, "-log-level"},
		{[]string{"-log-format", "xml"}, nil, "-log-format"},
		{[]string{"stray"}, nil, `unexpected argument "stray"`},
		{[]string{"-no-such-flag"}, nil, "no-such-flag"},
	}
	for _, c := range cases {
		c.check(t, "")
	}
}

// A value in the environment that does not parse is a usage error naming the variable. Booleans
// used to count as unset, so that the bridge served stdio until EOF and exited 0.
func TestBadEnvironmentValueIsAUsageError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env, value, want string
	}{
		{"AHP_BRIDGE_STDIO", "maybe", `ahp-jsonrpc-bridge: environment variable AHP_BRIDGE_STDIO: invalid value "maybe" for -stdio: want true or false`},
		{"AHP_BRIDGE_ONCE", "yes", "environment variable AHP_BRIDGE_ONCE: "},
		{"AHP_BRIDGE_UPSTREAM_UNARY", "on", "environment variable AHP_BRIDGE_UPSTREAM_UNARY: "},
		{"AHP_BRIDGE_TIMEOUT_MS", "soon", `ahp-jsonrpc-bridge: environment variable AHP_BRIDGE_TIMEOUT_MS: -timeout-ms: want a whole number of milliseconds from 100 to 30000, got "soon"`},
		{"AHP_BRIDGE_CONCURRENCY", "many", "environment variable AHP_BRIDGE_CONCURRENCY: -concurrency: "},
		{"AHP_BRIDGE_UNIX_MODE", "rw", "environment variable AHP_BRIDGE_UNIX_MODE: -unix-mode: "},
		{"AHP_BRIDGE_UNIX_ALLOW_UID", "root", "environment variable AHP_BRIDGE_UNIX_ALLOW_UID: -unix-allow-uid: "},
		{"AHP_BRIDGE_HOOKS_PATH", "hooks", "environment variable AHP_BRIDGE_HOOKS_PATH: -hooks-path must start with /"},
		{"AHP_BRIDGE_DIALECT", "mcp", "environment variable AHP_BRIDGE_DIALECT: -dialect: "},
		{"AHP_BRIDGE_UPSTREAM_PROTOCOL", "soap", "environment variable AHP_BRIDGE_UPSTREAM_PROTOCOL: -upstream-protocol: "},
		{"AHP_BRIDGE_FAILURE_POLICY", "maybe", "environment variable AHP_BRIDGE_FAILURE_POLICY: -failure-policy: "},
		{"AHP_BRIDGE_POLICY_POLL", "often", "environment variable AHP_BRIDGE_POLICY_POLL: -policy-poll: "},
		{"AHP_BRIDGE_MAX_MESSAGE_BYTES", "10", "environment variable AHP_BRIDGE_MAX_MESSAGE_BYTES: -max-message-bytes: "},
		{"AHP_BRIDGE_SHUTDOWN_TIMEOUT", "0s", "environment variable AHP_BRIDGE_SHUTDOWN_TIMEOUT: -shutdown-timeout: "},
		{"AHP_BRIDGE_LOG_LEVEL", "loud", "environment variable AHP_BRIDGE_LOG_LEVEL: -log-level: "},
		{"AHP_BRIDGE_LOG_FORMAT", "xml", "environment variable AHP_BRIDGE_LOG_FORMAT: -log-format: "},
	}
	for _, c := range cases {
		usageCase{env: map[string]string{c.env: c.value}, stderr: c.want}.check(t, "")
	}
	// The command line wins over the environment, a bad value there included.
	env := map[string]string{"AHP_BRIDGE_TIMEOUT_MS": "soon", "AHP_BRIDGE_STDIO": "maybe"}
	runBridge([]string{"-timeout-ms", "500", "-stdio", "-log-level", "warn"}, env, "").Expect(t, "flags over bad variables", 0, "")
}

func TestHelpDocumentsEveryFlagAndItsEnvironmentVariable(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-help"}, strings.NewReader(""), &stdout, &stderr, noEnv); code != 0 {
		t.Fatalf("-help exit code %d", code)
	}
	help := stderr.String()
	for _, flag := range []string{
		"stdio", "once", "http", "hooks-path", "harness-path", "ws", "unix", "unix-mode", "dialect",
		"upstream", "upstream-token-env", "upstream-protocol", "timeout-ms", "failure-policy", "policy",
		"policy-poll", "max-message-bytes", "concurrency", "shutdown-timeout", "log-level", "log-format",
		"nats", "nats-prefix", "nats-creds", "nats-nkey", "nats-token-env", "nats-ca", "nats-cert", "nats-key",
	} {
		env := "AHP_BRIDGE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
		if !strings.Contains(help, "  -"+flag+" ") && !strings.Contains(help, "  -"+flag+"\n") {
			t.Errorf("-help does not document -%s", flag)
		}
		if !strings.Contains(help, "(env "+env+")") {
			t.Errorf("-help does not name %s", env)
		}
	}
	if stdout.String() != "" {
		t.Fatalf("-help wrote to stdout: %q", stdout.String())
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := runBridge([]string{"version"}, nil, "")
	r.Expect(t, "version", 0, "")
	if strings.TrimSpace(r.Stdout) == "" {
		t.Errorf("stdout %q, want a version", r.Stdout)
	}
}

func TestStartupFailuresExitOne(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args   []string
		stderr string
	}{
		{[]string{"-policy", "/nonexistent/policy.yaml"}, "/nonexistent/policy.yaml"},
		{[]string{"-upstream", "http://127.0.0.1:1", "-failure-policy", "fail-closed", "-upstream-token-env", "AHP_TEST_NO_SUCH_TOKEN"}, "AHP_TEST_NO_SUCH_TOKEN"},
		{[]string{"-upstream", "ftp://example", "-failure-policy", "fail-closed"}, "upstream URL"},
	}
	for _, tc := range cases {
		r := runBridge(tc.args, nil, "")
		r.Expect(t, fmt.Sprint(tc.args), 1, tc.stderr)
		r.ExpectNoStdout(t, fmt.Sprint(tc.args))
	}
}

func TestListenerFailureExitsOne(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	runBridge([]string{"-http", taken.Addr().String()}, nil, "").Expect(t, "-http on a taken port", 1, "cannot listen for HTTP")
}

func TestStdioInProcessUntilEOF(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		hooksIntercept("e1", "rm -rf /"),
		hooksObserve("e2"),
		harnessEvent("r1", "ls"),
		harnessNotification(),
		hooksIntercept("e3", "ls"),
	}, "\n") + "\n"
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-log-level", "warn"}, strings.NewReader(in), stdout, stderr, noEnv)
	})
	if code := c.Wait(t); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, c.Stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(c.Stdout.String(), "\n"), "\n")
	var got []string
	for _, l := range lines {
		got = append(got, verdict(t, l))
	}
	want := []string{
		"deny: Refusing to recursively delete the filesystem root or the home directory.",
		"allow",
		"no-effect",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("answers %q, want %q", got, want)
	}
}

// listening reads the JSON logs of a running bridge until every transport in want has logged its
// address, and returns the addresses by transport.
func listening(t testing.TB, logs *clitest.Output, want ...string) map[string]string {
	t.Helper()
	addrs := map[string]string{}
	logs.Wait(t, func(line string) bool {
		var rec struct{ Msg, Transport, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			addrs[rec.Transport] = rec.Addr
		}
		return len(addrs) == len(want)
	})
	return addrs
}

func post(t testing.TB, url, body string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: testTimeout}
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// expectPost posts body to url and reports a status other than status and, for an answer, a
// verdict other than want, or one that does not begin with a want ending in ": " (any reason);
// with want "" it reports any body.
func expectPost(t testing.TB, what, url, body string, status int, want string) {
	t.Helper()
	gotStatus, got := post(t, url, body)
	if gotStatus != status {
		t.Errorf("%s: status %d, want %d; body %s", what, gotStatus, status, got)
	}
	if want == "" {
		if got != "" {
			t.Errorf("%s: body %q, want none", what, got)
		}
		return
	}
	if v := verdict(t, got); v != want && !(strings.HasSuffix(want, ": ") && strings.HasPrefix(v, want)) {
		t.Errorf("%s: answer %s, want %s", what, v, want)
	}
}

func TestAllTransportsAtOnceInProcess(t *testing.T) {
	t.Parallel()
	sock := testkit.SocketPath(t)
	ctx := context.Background()
	args := []string{"-http", "127.0.0.1:0", "-ws", "127.0.0.1:0", "-unix", sock, "-log-format", "json"}
	bridge := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, args, strings.NewReader(""), stdout, stderr, noEnv)
	})
	addrs := listening(t, bridge.Stderr, "http", "websocket", "unix")

	// HTTP, both dialects on one listener.
	expectPost(t, "HTTP hooks/intercept", "http://"+addrs["http"]+"/hooks", hooksIntercept("h1", "rm -rf /"), 200, "deny: ")
	if status, body := post(t, "http://"+addrs["http"]+"/hooks", hooksObserve("h2")); status != 204 && status != 202 {
		t.Errorf("HTTP hooks/observe: status %d, want 204 or 202", status)
	} else if body != "" {
		t.Errorf("HTTP hooks/observe: body %q, want none", body)
	}
	expectPost(t, "HTTP ahp/event", "http://"+addrs["http"]+"/ahp", harnessEvent("r1", "ls"), 200, "allow")
	expectPost(t, "HTTP notification", "http://"+addrs["http"]+"/ahp", harnessNotification(), 204, "")

	// WebSocket.
	wctx, wcancel := context.WithTimeout(ctx, testTimeout)
	defer wcancel()
	c, _, err := websocket.Dial(wctx, "ws://"+addrs["websocket"]+"/ahp", &websocket.DialOptions{Subprotocols: []string{"ahp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for _, msg := range []string{harnessNotification(), harnessHandshake("w1"), hooksIntercept("w2", "ls")} {
		if err := c.Write(wctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"handshake 2.4", "no-effect"} {
		_, b, err := c.Read(wctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := verdict(t, string(b)); got != want {
			t.Errorf("WebSocket: %s, want %s", got, want)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Unix socket.
	uc, err := net.DialTimeout("unix", sock, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	uc.SetDeadline(time.Now().Add(testTimeout))
	fmt.Fprintf(uc, "%s\n%s\n%s\n", hooksObserve("u0"), hooksIntercept("u1", "rm -rf /"), harnessEvent("u2", "rm -rf /"))
	sc := bufio.NewScanner(uc)
	for _, want := range []string{"deny: ", "block: "} {
		if !sc.Scan() {
			t.Fatal(sc.Err())
		}
		if got := verdict(t, sc.Text()); !strings.HasPrefix(got, want) {
			t.Errorf("Unix socket: %s, want %s…", got, want)
		}
	}

	if code := bridge.Stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, bridge.Stderr.String())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file left: %v", err)
	}
	if bridge.Stdout.String() != "" {
		t.Fatalf("stdout without stdio: %q", bridge.Stdout.String())
	}
}
