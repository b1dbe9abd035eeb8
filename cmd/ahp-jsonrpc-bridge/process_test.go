package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// proc is a running ahp-jsonrpc-bridge driven over pipes.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr *clitest.Output
}

// childEnv is the test's environment without AHP_BRIDGE_* settings, so the flags alone decide.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AHP_BRIDGE_") {
			env = append(env, kv)
		}
	}
	return env
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	bin := needBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv()
	p := &proc{cmd: cmd, lines: make(chan string, 64), stderr: &clitest.Output{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				p.lines <- line
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return p
}

func (p *proc) send(t *testing.T, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if _, err := io.WriteString(p.stdin, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// next returns the next stdout line, checking that it is exactly one line of JSON.
func (p *proc) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("stdout ended; stderr:\n%s", p.stderr.String())
		}
		if !strings.HasSuffix(line, "\n") {
			t.Fatalf("stdout ended within a line: %q", line)
		}
		if !json.Valid([]byte(line)) {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		return strings.TrimSuffix(line, "\n")
	case <-time.After(testTimeout):
		t.Fatalf("no answer; stderr:\n%s", p.stderr.String())
	}
	return ""
}

// finish closes stdin and checks that stdout has nothing more and the process exits 0.
func (p *proc) finish(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	for line := range p.lines {
		t.Errorf("unexpected stdout line %q", line)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr:\n%s", err, p.stderr.String())
	}
}

func TestProcessPersistentStdioBothDialects(t *testing.T) {
	t.Parallel()
	p := startProc(t)
	p.send(t,
		harnessHandshake("r0"),
		hooksIntercept("e1", "rm -rf /"),
		hooksObserve("e2"),
		harnessEvent("r1", "rm -rf /"),
		harnessNotification(),
		hooksIntercept("e3", "ls"),
		"",
		harnessEvent("r2", "ls"),
		"this is not JSON",
	)
	want := []struct{ id, verdict string }{
		{`"r0"`, "handshake 2.4"},
		{`"e1"`, "deny: Refusing to recursively delete the filesystem root or the home directory."},
		{`"r1"`, "block: Refusing to recursively delete the filesystem root or the home directory."},
		{`"e3"`, "no-effect"},
		{`"r2"`, "allow"},
		{`null`, "error -32700"},
	}
	for _, w := range want {
		line := p.next(t)
		if a := decode(t, line); string(a.ID) != w.id {
			t.Errorf("answer id %s, want %s (%s)", a.ID, w.id, line)
		}
		if v := verdict(t, line); v != w.verdict {
			t.Errorf("answer %s: %s, want %s", w.id, v, w.verdict)
		}
	}
	p.finish(t)
	// Logs, if any, went to stderr, never to stdout (finish checked stdout is exhausted).
}

func TestProcessOnceAnswersExactlyOnceAndExitsZero(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		input []string
		want  string // "" means no answer
	}{
		{"deny", []string{hooksIntercept("e1", "rm -rf /")}, "deny: Refusing to recursively delete the filesystem root or the home directory."},
		{"no effect", []string{hooksIntercept("e1", "ls")}, "no-effect"},
		{"harness block", []string{harnessEvent("r1", "rm -rf /")}, "block: Refusing to recursively delete the filesystem root or the home directory."},
		{"only the first message", []string{hooksIntercept("e1", "ls"), hooksIntercept("e2", "rm -rf /")}, "no-effect"},
		{"notification", []string{hooksObserve("e1")}, ""},
		{"garbage", []string{"{nope"}, "error -32700"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, "-once")
			p.send(t, tc.input...)
			if tc.want != "" {
				if got := verdict(t, p.next(t)); got != tc.want {
					t.Errorf("answer %s, want %s", got, tc.want)
				}
			}
			p.finish(t)
		})
	}
}

func TestProcessStopsGracefullyOnSIGTERM(t *testing.T) {
	t.Parallel()
	sock := testkit.SocketPath(t)
	p := startProc(t, "-http", "127.0.0.1:0", "-unix", sock, "-log-format", "json")
	addrs := listening(t, p.stderr, "http", "unix")
	expectPost(t, "HTTP", "http://"+addrs["http"]+"/hooks", hooksIntercept("e1", "ls"), 200, "no-effect")
	info, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("socket file mode %v, want 0600", perm)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.finish(t)
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file left: %v", err)
	}
}

// TestProcessHooksRequestFixtures sends the Agent Hooks v0.1 conformance fixtures that are
// requests through stdio and HTTP: a valid one gets a result, an invalid one an error.
func TestProcessHooksRequestFixtures(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..", "shared", "conformance", "hooks-v0.1")
	data, err := os.ReadFile(filepath.Join(root, "fixtures", "0.1.0-draft.1", "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("skipping: the shared conformance fixtures are not checked out next to this repository")
	}
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Cases []struct {
			ID, Path, Binding, Schema string
			ExpectedValid             bool
		}
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "-http", "127.0.0.1:0", "-log-format", "json")
	addr := listening(t, p.stderr, "http")["http"]
	tested := 0
	for _, c := range manifest.Cases {
		if !strings.Contains(c.Schema, "request") {
			continue // responses and registrations are outputs, not inputs
		}
		body, err := os.ReadFile(filepath.Join(root, c.Path))
		if err != nil {
			t.Fatal(err)
		}
		var answers []string
		switch c.Binding {
		case "stdio-jsonl":
			// The file's bytes exactly as a harness would write them, through a per_event process.
			once := startProc(t, "-once")
			if _, err := once.stdin.Write(body); err != nil {
				t.Fatal(err)
			}
			once.stdin.Close()
			for line := range once.lines {
				answers = append(answers, line)
			}
			if err := once.cmd.Wait(); err != nil {
				t.Fatalf("%s: exit %v", c.ID, err)
			}
		case "http-json":
			status, b := post(t, "http://"+addr+"/hooks", string(body))
			if status != 200 {
				t.Errorf("%s: HTTP status %d", c.ID, status)
			}
			answers = []string{b}
		default:
			t.Errorf("%s: unknown binding %q", c.ID, c.Binding)
			continue
		}
		tested++
		if len(answers) != 1 {
			t.Errorf("%s: %d answers, want 1", c.ID, len(answers))
			continue
		}
		a := decode(t, answers[0])
		if valid := a.Result != nil && a.Error == nil; valid != c.ExpectedValid {
			t.Errorf("%s: answer %s, expected valid = %v", c.ID, answers[0], c.ExpectedValid)
		}
	}
	if tested == 0 {
		t.Fatal("no request fixtures found in the manifest")
	}
}

// startUpstream runs an ahp-server with the default policy on loopback for the test.
func startUpstream(tb testing.TB) string {
	tb.Helper()
	return clitest.Serve(tb, server.Config{Logger: slog.New(slog.DiscardHandler)})
}

func TestProcessUpstreamAndFailurePolicy(t *testing.T) {
	t.Parallel()
	up := startUpstream(t)
	deadURL := testkit.DownURL(t)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"upstream decides", []string{"-upstream", up, "-failure-policy", "fail-closed"}, "deny: Refusing to recursively delete the filesystem root or the home directory."},
		{"upstream down, fail-closed", []string{"-upstream", deadURL, "-failure-policy", "fail-closed", "-timeout-ms", "500"}, "deny: Required policy backend unavailable."},
		{"upstream down, fail-open", []string{"-upstream", deadURL, "-failure-policy", "fail-open", "-timeout-ms", "500"}, "no-effect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, append([]string{"-once"}, tc.args...)...)
			p.send(t, hooksIntercept("e1", "rm -rf /"))
			line := p.next(t)
			if got := verdict(t, line); got != tc.want {
				t.Errorf("answer %s, want %s", got, tc.want)
			}
			synthetic := strings.Contains(line, `"synthetic":true`)
			if wantSynthetic := strings.Contains(tc.name, "down"); synthetic != wantSynthetic {
				t.Errorf("synthetic marker %v in %s", synthetic, line)
			}
			p.finish(t)
		})
	}
}

// The built binary reads its environment: a bad value exits 2 before anything is served.
func TestProcessBadEnvironmentValueExitsTwo(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, needBinary(t), "-once")
	cmd.Env = append(childEnv(), "AHP_BRIDGE_TIMEOUT_MS=soon")
	cmd.Stdin = strings.NewReader(hooksIntercept("e1", "ls") + "\n")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("exit: %v, want status 2", err)
	}
	if code := exit.ExitCode(); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	if want := "environment variable AHP_BRIDGE_TIMEOUT_MS: -timeout-ms: "; !strings.Contains(string(exit.Stderr), want) {
		t.Errorf("stderr %q lacks %q", exit.Stderr, want)
	}
	if len(out) != 0 {
		t.Errorf("stdout %q, want nothing", out)
	}
}
