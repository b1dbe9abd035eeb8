package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
)

var noEnv = clitest.Env(nil)

// runServer runs the command to completion with args and env.
func runServer(args []string, env map[string]string) clitest.Result {
	return clitest.Run(func(ctx context.Context, _ io.Reader, stdout, stderr io.Writer) int {
		return run(ctx, args, stdout, stderr, clitest.Env(env))
	}, "")
}

// listenURL is the URL of the one line a serving ahp-server prints on stdout.
func listenURL(t *testing.T, c *clitest.Command) string {
	t.Helper()
	line := c.WaitStdout(t, func(string) bool { return true })
	url, ok := strings.CutPrefix(line, "ahp-server listening on ")
	if !ok {
		t.Fatalf("stdout line %q does not say where the server listens", line)
	}
	return url
}

func TestServePrintsOneLineAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-addr", "127.0.0.1:0"}, stdout, stderr, noEnv)
	})
	url := listenURL(t, c)
	req, _ := http.NewRequest(http.MethodPost, url+"/ahp.v1.HarnessService/GetCapabilities", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GetCapabilities status %d", resp.StatusCode)
	}
	if code := c.Stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr: %s", code, c.Stderr.String())
	}
	if out := c.Stdout.String(); out != "ahp-server listening on "+url+"\n" {
		t.Fatalf("stdout %q, want the one listening line", out)
	}
}

func TestPolicyCheckAndTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	tests := filepath.Join(dir, "tests.yaml")
	failing := filepath.Join(dir, "failing.yaml")
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(good, `version: 1
name: t
rules:
  - id: deny-rm
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("rm ")'
    effect: {deny: {reason: no rm}}
`)
	write(bad, "version: 1\nrules:\n  - id: broken\n    when: 'input.('\n    effect: {deny: {reason: r}}\n")
	write(tests, `cases:
  - name: rm is denied
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "rm -rf x"}}}
    expect: {verdict: deny}
`)
	write(failing, `cases:
  - name: ls is denied (wrong on purpose)
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "ls"}}}
    expect: {verdict: deny}
`)
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"policy", "check", good}, 0, "OK (1 rules", ""},
		{[]string{"policy", "check", bad}, 1, "", `"broken"`},
		{[]string{"policy", "test", good, tests}, 0, "rm is denied", ""},
		{[]string{"policy", "test", good, failing}, 1, "ls is denied (wrong on purpose)", ""},
		{[]string{"policy", "frobnicate"}, 2, "", "usage"},
		{[]string{"-no-such-flag"}, 2, "", "no-such-flag"},
		{[]string{"-help"}, 0, "", "-policy"},
	}
	for _, tc := range cases {
		r := runServer(tc.args, nil)
		r.Expect(t, fmt.Sprint(tc.args), tc.code, tc.stderr)
		if !strings.Contains(r.Stdout, tc.stdout) {
			t.Errorf("%v: stdout %q lacks %q", tc.args, r.Stdout, tc.stdout)
		}
	}
}

func TestEnvironmentSetsDefaults(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AHP_ADDR": "127.0.0.1:0", "AHP_POLICY": "/nonexistent/policy.yaml"}
	runServer(nil, env).Expect(t, "AHP_POLICY of a missing file", 1, "/nonexistent/policy.yaml")
}

// A value in the environment that does not parse is a usage error naming the variable; it used to
// be ignored, so that the server started with the default instead. Every case also points
// AHP_POLICY at a missing file: a server that ignored the bad value would exit 1 instead of serving.
func TestBadEnvironmentValueIsAUsageError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		env, value, want string
	}{
		{"AHP_BATCH_SIZE", "lots", `environment variable AHP_BATCH_SIZE: invalid value "lots" for -batch-size: want a whole number`},
		{"AHP_MAX_DEPTH", "1.5", "environment variable AHP_MAX_DEPTH: "},
		{"AHP_TIMEOUT_MS", "10s", "environment variable AHP_TIMEOUT_MS: "},
		{"AHP_WATCH_BUFFER", "-", "environment variable AHP_WATCH_BUFFER: "},
		{"AHP_AUDIT", "yes", `environment variable AHP_AUDIT: invalid value "yes" for -audit: want true or false`},
		{"AHP_AUDIT_REQUIRED", "on", "environment variable AHP_AUDIT_REQUIRED: "},
		{"AHP_POLICY_POLL", "5", `environment variable AHP_POLICY_POLL: invalid value "5" for -policy-poll: want a duration such as 10s`},
		{"AHP_SHUTDOWN_TIMEOUT", "soon", "environment variable AHP_SHUTDOWN_TIMEOUT: "},
		{"AHP_MAX_STREAM_DURATION", "forever", "environment variable AHP_MAX_STREAM_DURATION: "},
		{"AHP_STREAM_RATE", "fast", `environment variable AHP_STREAM_RATE: invalid value "fast" for -stream-rate: want a number`},
		{"AHP_LOG_LEVEL", "loud", `environment variable AHP_LOG_LEVEL: -log-level: slog: level string "loud": unknown name`},
		{"AHP_LOG_FORMAT", "xml", `environment variable AHP_LOG_FORMAT: -log-format: want text or json, got "xml"`},
	}
	for _, c := range cases {
		what := c.env + "=" + c.value
		r := runServer(nil, map[string]string{"AHP_ADDR": "127.0.0.1:0", "AHP_POLICY": "/nonexistent/policy.yaml", c.env: c.value})
		r.Expect(t, what, 2, "ahp-server: "+c.want)
		r.ExpectNoStdout(t, what)
	}
}

// The command line wins over the environment, a bad value there included.
func TestFlagWinsOverTheEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AHP_ADDR": "127.0.0.1:0", "AHP_POLICY": "/nonexistent/env.yaml", "AHP_BATCH_SIZE": "lots", "AHP_LOG_LEVEL": "loud"}
	r := runServer([]string{"-policy", "/nonexistent/flag.yaml", "-batch-size", "5", "-log-level", "warn"}, env)
	r.Expect(t, "flags over the environment", 1, "/nonexistent/flag.yaml") // the policy file does not load
	if strings.Contains(r.Stderr, "environment variable") {
		t.Errorf("stderr %q complains about a variable the command line overrides", r.Stderr)
	}
}

// TestMemoryLimitFlag: a bad -memory-limit (or AHP_MEMORY_LIMIT) stops the server at start with an
// error naming the setting, not the value; a good one is applied and logged with its source.
func TestMemoryLimitFlag(t *testing.T) {
	// Not parallel: the memory limit is the process's.
	r := runServer([]string{"-memory-limit", "lots-of-it"}, nil)
	if r.Code != 2 || !strings.Contains(r.Stderr, "-memory-limit") || strings.Contains(r.Stderr, "lots-of-it") {
		t.Fatalf("bad flag: code %d stderr %q", r.Code, r.Stderr)
	}
	r = runServer(nil, map[string]string{"AHP_MEMORY_LIMIT": "1.5GiB"})
	if r.Code != 2 || !strings.Contains(r.Stderr, "AHP_MEMORY_LIMIT") {
		t.Fatalf("bad env: code %d stderr %q", r.Code, r.Stderr)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-addr", "127.0.0.1:0", "-memory-limit", "3GiB"}, stdout, stderr, noEnv)
	})
	listenURL(t, c)
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("memory limit %d, want 3 GiB", got)
	}
	if code := c.Stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr: %s", code, c.Stderr.String())
	}
	if log := c.Stderr.String(); !strings.Contains(log, "memory limit") || !strings.Contains(log, "bytes=3221225472") || !strings.Contains(log, "source=flag") {
		t.Fatalf("log %q does not record the limit", log)
	}
}
