package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// Native hook inputs as Claude Code and Codex write them on a command hook's stdin.

func claudePreToolUse(command string) string {
	in, _ := json.Marshal(map[string]any{
		"session_id":      "3f1c2a9e-5b7d-4e21-9a0c-6d8e2f4b1a73",
		"transcript_path": "/home/dev/.claude/projects/app/3f1c2a9e.jsonl",
		"cwd":             "/home/dev/app",
		"permission_mode": "default",
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input":      map[string]any{"command": command, "description": "run it"},
		"tool_use_id":     "toolu_01ABC",
	})
	return string(in)
}

func codexPreToolUse(command string) string {
	in, _ := json.Marshal(map[string]any{
		"session_id":      "0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b",
		"turn_id":         "turn-1",
		"transcript_path": nil,
		"cwd":             "/home/dev/app",
		"model":           "gpt-5-codex",
		"permission_mode": "default",
		"hook_event_name": "PreToolUse",
		"tool_name":       "Bash",
		"tool_input":      map[string]any{"command": command},
		"tool_use_id":     "call_1",
	})
	return string(in)
}

// hookOut is the part of a hook output the tests check.
type hookOut struct {
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// parseHookOut checks that stdout is exactly one line of JSON and decodes it.
func parseHookOut(t testing.TB, stdout string) hookOut {
	t.Helper()
	if n := strings.Count(stdout, "\n"); n != 1 {
		t.Fatalf("stdout has %d lines, want 1: %q", n, stdout)
	}
	if !strings.HasSuffix(stdout, "}\n") {
		t.Fatalf("stdout is not a JSON object and a line feed: %q", stdout)
	}
	var o hookOut
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	return o
}

// expectExit reports an exit status other than want, with stderr.
func expectExit(t testing.TB, what string, exit, want int, stderr string) {
	t.Helper()
	if exit != want {
		t.Errorf("%s: exit %d, want %d; stderr %q", what, exit, want, stderr)
	}
}

// expectDecision reports a permission decision other than want (empty: none) and a reason that
// lacks reason.
func expectDecision(t testing.TB, what string, o hookOut, want, reason string) {
	t.Helper()
	if got := o.HookSpecificOutput.PermissionDecision; got != want {
		t.Errorf("%s: permission decision %q, want %q", what, got, want)
	}
	if got := o.HookSpecificOutput.PermissionDecisionReason; !strings.Contains(got, reason) {
		t.Errorf("%s: permission decision reason %q lacks %q", what, got, reason)
	}
}

// expectSilent reports anything a hook that has no opinion wrote.
func expectSilent(t testing.TB, what, stdout, stderr string) {
	t.Helper()
	if stdout != "" {
		t.Errorf("%s: stdout %q, want nothing", what, stdout)
	}
	if stderr != "" {
		t.Errorf("%s: stderr %q, want nothing", what, stderr)
	}
}

// runHookProc runs the built binary once with input on stdin.
func runHookProc(t testing.TB, input string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, needBinary(t), append([]string{"hook"}, args...)...)
	cmd.Env = childEnv()
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("running the hook: %v", err)
	}
	return out.String(), errb.String(), 0
}

// runHookAnswer runs the built binary once with input, which must exit 0, and returns its hook
// output and stderr.
func runHookAnswer(t *testing.T, what, input string, args ...string) (hookOut, string) {
	t.Helper()
	stdout, stderr, exit := runHookProc(t, input, args...)
	if exit != 0 {
		t.Fatalf("%s: exit %d, stderr:\n%s", what, exit, stderr)
	}
	return parseHookOut(t, stdout), stderr
}

// The acceptance test of the issue: the built binary as Claude Code runs it, with the embedded
// default policy. rm -rf / is denied in Claude Code's terms; ls gets no opinion.
func TestHookProcessClaudeCode(t *testing.T) {
	t.Parallel()
	o, stderr := runHookAnswer(t, "rm -rf /", claudePreToolUse("rm -rf /"), "claude-code")
	if o.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Errorf("rm -rf /: hookEventName %q, want PreToolUse", o.HookSpecificOutput.HookEventName)
	}
	expectDecision(t, "rm -rf /", o, "deny", "Refusing to recursively delete")
	if stderr != "" {
		t.Errorf("rm -rf /: stderr %q", stderr)
	}

	// No opinion: exit 0, nothing written.
	stdout, stderr, exit := runHookProc(t, claudePreToolUse("ls"), "claude-code")
	expectExit(t, "ls", exit, 0, stderr)
	expectSilent(t, "ls", stdout, stderr)
}

func TestHookProcessCodex(t *testing.T) {
	t.Parallel()
	// Codex cannot ask from PreToolUse: the default policy's ask arrives as a denial that says so.
	o, _ := runHookAnswer(t, "force push", codexPreToolUse("git push --force origin main"), "codex")
	expectDecision(t, "force push", o, "deny", "")
	if reason := o.HookSpecificOutput.PermissionDecisionReason; !strings.HasPrefix(reason, "approval required: ") {
		t.Errorf("force push: reason %q, want it to begin with \"approval required: \"", reason)
	}
	// Recorded events say nothing.
	stdout, stderr, exit := runHookProc(t, `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}`, "codex")
	expectExit(t, "Stop", exit, 0, stderr)
	expectSilent(t, "Stop", stdout, stderr)
	// An input that cannot be read at all, under the embedded default fail-closed: exit 2 with
	// the reason on stderr, the runtimes' blocking error.
	stdout, stderr, exit = runHookProc(t, "{", "codex")
	expectExit(t, "unreadable", exit, 2, stderr)
	if stdout != "" {
		t.Errorf("unreadable: stdout %q", stdout)
	}
	if !strings.Contains(stderr, "unreadable codex hook input") {
		t.Errorf("unreadable: stderr %q does not say why", stderr)
	}
}

func TestHookProcessUpstreamAndFailurePolicy(t *testing.T) {
	t.Parallel()
	up := startUpstream(t)
	o, _ := runHookAnswer(t, "upstream", claudePreToolUse("rm -rf ~"), "claude-code", "-upstream", up, "-failure-policy", "fail-open")
	expectDecision(t, "upstream", o, "deny", "")

	deadURL := testkit.DownURL(t)
	o, _ = runHookAnswer(t, "fail-closed", claudePreToolUse("ls"), "claude-code", "-upstream", deadURL, "-failure-policy", "fail-closed")
	expectDecision(t, "fail-closed", o, "deny", "")
	if reason := o.HookSpecificOutput.PermissionDecisionReason; reason != "Required policy backend unavailable." {
		t.Errorf("fail-closed: reason %q", reason)
	}
	if !strings.Contains(o.SystemMessage, "(unavailable); fail-closed") {
		t.Errorf("fail-closed: systemMessage %q does not say why", o.SystemMessage)
	}
	o, _ = runHookAnswer(t, "fail-open", claudePreToolUse("rm -rf /"), "claude-code", "-upstream", deadURL, "-failure-policy", "fail-open")
	expectDecision(t, "fail-open", o, "", "")
	if !strings.Contains(o.SystemMessage, "fail-open") {
		t.Errorf("fail-open: systemMessage %q does not say fail-open", o.SystemMessage)
	}
	// A policy file that does not load is a backend that cannot start: the failure policy
	// answers, in Claude Code's terms.
	o, stderr := runHookAnswer(t, "broken policy", claudePreToolUse("ls"), "claude-code", "-policy", "/nonexistent/policy.yaml")
	expectDecision(t, "broken policy", o, "deny", "")
	if !strings.Contains(stderr, "cannot start the policy backend") {
		t.Errorf("broken policy: stderr %q does not say the backend did not start", stderr)
	}
}

// The HTTP form, for Claude Code's http hook type, as a process: POST hook JSON, get hook JSON.
func TestHookProcessHTTP(t *testing.T) {
	t.Parallel()
	bin := needBinary(t)
	cmd := exec.Command(bin, "hook", "claude-code", "-http", "127.0.0.1:0", "-log-format", "json")
	cmd.Env = childEnv()
	logs := &clitest.Output{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		logs.Close()
		done <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	url := "http://" + listening(t, logs, "http")["http"] + "/claude-code"

	client := &http.Client{Timeout: testTimeout}
	resp, err := client.Post(url, "application/json", strings.NewReader(claudePreToolUse("rm -rf /")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("rm -rf /: status %d, want 200; body %s", resp.StatusCode, body)
	}
	expectDecision(t, "rm -rf /", parseHookOut(t, string(body)+"\n"), "deny", "")
	resp, err = client.Post(url, "application/json", strings.NewReader(claudePreToolUse("ls")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("ls: status %d, want 204", resp.StatusCode)
	}
	if len(body) != 0 {
		t.Errorf("ls: body %q, want none", body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(testTimeout):
		t.Fatal("no exit after SIGTERM")
	}
}

func TestHookUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []usageCase{
		{nil, nil, "name the runtime: claude-code, codex, cursor, gemini, copilot, factory, windsurf, cline"},
		{[]string{"opencode"}, nil, `unknown runtime "opencode"`},
		{[]string{"cursor", "-http", ":0"}, nil, "-http: cursor has no http hooks"},
		{[]string{"install"}, nil, "name the runtime"},
		{[]string{"install", "cursor", "-user", "-project", "x"}, nil, "not both"},
		{[]string{"doctor", "nope"}, nil, `unknown runtime "nope"`},
		{[]string{"-http", ":0"}, nil, `unknown runtime "-http"`},
		{[]string{"codex", "extra"}, nil, `unexpected argument "extra"`},
		{[]string{"codex", "-upstream", "http://127.0.0.1:1"}, nil, "-failure-policy fail-open|fail-closed is required with -upstream"},
		{[]string{"codex", "-upstream", "http://127.0.0.1:1", "-failure-policy", "fail-open", "-policy", "p.yaml"}, nil, "-policy is for embedded mode"},
		{[]string{"codex", "-upstream-token-env", "TOKEN"}, nil, "-upstream-token-env needs -upstream"},
		{[]string{"codex", "-upstream-protocol", "http3"}, nil, "-upstream-protocol"},
		{[]string{"claude-code", "-timeout-ms", "99"}, nil, "-timeout-ms: want a whole number of milliseconds from 100 to 30000"},
		{[]string{"claude-code"}, map[string]string{"AHP_BRIDGE_TIMEOUT_MS": "soon"}, `got "soon"`},
		{[]string{"claude-code"}, map[string]string{"AHP_BRIDGE_FAILURE_POLICY": "maybe"}, "-failure-policy: want fail-open or fail-closed"},
		{[]string{"claude-code"}, map[string]string{"AHP_BRIDGE_INCLUDE_NATIVE": "maybe"}, `ahp-jsonrpc-bridge hook: environment variable AHP_BRIDGE_INCLUDE_NATIVE: invalid value "maybe" for -include-native: want true or false`},
		{[]string{"claude-code"}, map[string]string{"AHP_BRIDGE_SHUTDOWN_TIMEOUT": "soon"}, "ahp-jsonrpc-bridge hook: environment variable AHP_BRIDGE_SHUTDOWN_TIMEOUT: -shutdown-timeout: "},
		{[]string{"claude-code", "-max-message-bytes", "10"}, nil, "-max-message-bytes"},
		{[]string{"claude-code", "-policy-poll", "-1s"}, nil, "-policy-poll"},
		{[]string{"claude-code", "-shutdown-timeout", "0s"}, nil, "-shutdown-timeout"},
		{[]string{"claude-code", "-log-level", "loud"}, nil, "-log-level"},
		{[]string{"claude-code", "-no-such-flag"}, nil, "flag provided but not defined"},
	}
	for _, c := range cases {
		c.args = append([]string{"hook"}, c.args...)
		c.check(t, claudePreToolUse("ls"))
	}
}

// Bad flags block a decided event (exit 2), but never a recorded one, where exit 2 has side
// effects: a Stop hook's exit 2 would keep the agent going.
func TestHookUsageErrorOnRecordedEvents(t *testing.T) {
	t.Parallel()
	cases := []struct {
		input string
		want  int
	}{
		{claudePreToolUse("ls"), 2},
		{`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, 2},
		{`{"hook_event_name":"Stop","stop_hook_active":true}`, 1},
		{`{"hook_event_name":"SessionEnd","reason":"other"}`, 1},
		{`{"hook_event_name":"Notification"}`, 1},
		{`not json`, 2},
		{``, 2},
	}
	for _, c := range cases {
		runBridge([]string{"hook", "claude-code", "-timeout-ms", "0"}, nil, c.input).Expect(t, fmt.Sprintf("input %q", c.input), c.want, "-timeout-ms")
	}
}

// -help documents every flag, with its environment variable.
func TestHookHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-help"}, {"--help"}, {"codex", "-h"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"hook"}, args...), strings.NewReader(""), &stdout, &stderr, noEnv); code != 0 {
			t.Errorf("hook %v: exit %d", args, code)
		}
		help := stderr.String()
		for _, head := range []string{"Usage: ahp-jsonrpc-bridge hook RUNTIME", "Exit status"} {
			if !strings.Contains(help, head) {
				t.Errorf("hook %v: usage lacks %q:\n%s", args, head, help)
			}
		}
		for _, name := range []string{"http", "upstream", "upstream-token-env", "upstream-protocol", "timeout-ms", "failure-policy",
			"policy", "policy-poll", "include-native", "max-message-bytes", "shutdown-timeout", "approval-wait", "log-level", "log-format", "event",
			"config", "allowed-hosts", "allowed-origins", "upstream-ca", "upstream-cert", "upstream-key",
			"nats", "nats-prefix", "nats-creds", "nats-nkey", "nats-token-env", "nats-ca", "nats-cert", "nats-key"} {
			if !strings.Contains(help, "  -"+name) {
				t.Errorf("help does not document -%s", name)
			}
		}
		if n := strings.Count(help, "(env AHP_BRIDGE_"); n != 29 {
			t.Errorf("help names %d environment variables, want 29:\n%s", n, help)
		}
	}
}

// Flags fall back to AHP_BRIDGE_* variables, like the rest of the command.
func TestHookEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"AHP_BRIDGE_UPSTREAM":       "http://127.0.0.1:1",
		"AHP_BRIDGE_FAILURE_POLICY": "fail-open",
		"AHP_BRIDGE_TIMEOUT_MS":     "250",
		"AHP_BRIDGE_INCLUDE_NATIVE": "true",
		"AHP_BRIDGE_HOOK_HTTP":      "127.0.0.1:0",
		"AHP_BRIDGE_LOG_LEVEL":      "debug",
	}
	cfg, code := parseHookFlags([]string{"codex"}, io.Discard, clitest.Env(env))
	if cfg == nil {
		t.Fatalf("exit %d", code)
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"upstream", cfg.upstream, env["AHP_BRIDGE_UPSTREAM"]},
		{"failure policy", cfg.failurePolicy.String(), "fail-open"},
		{"timeout", cfg.timeout, 250 * time.Millisecond},
		{"include native", cfg.includeNative, true},
		{"http address", cfg.httpAddr, "127.0.0.1:0"},
		{"log level", cfg.logLevel, "debug"},
	} {
		if c.got != c.want {
			t.Errorf("config from the environment: %s %v, want %v", c.field, c.got, c.want)
		}
	}
	// Flags win over the environment; AHP_BRIDGE_HTTP (the bridge's own listener) is not the hook's.
	cfg, _ = parseHookFlags([]string{"codex", "-timeout-ms", "300", "-http", ""}, io.Discard, func(k string) string {
		if k == "AHP_BRIDGE_HTTP" {
			return "127.0.0.1:9"
		}
		return env[k]
	})
	if cfg == nil {
		t.Fatal("flags over the environment: refused")
	}
	if cfg.timeout != 300*time.Millisecond {
		t.Errorf("flags over the environment: timeout %v, want 300ms", cfg.timeout)
	}
	if cfg.httpAddr != "" {
		t.Errorf("flags over the environment: http address %q, want none", cfg.httpAddr)
	}
	// Defaults: embedded, fail-closed, warn per event.
	cfg, _ = parseHookFlags([]string{"claude-code"}, io.Discard, noEnv)
	if cfg == nil {
		t.Fatal("defaults: refused")
	}
	if got := cfg.failurePolicy.String(); got != "fail-closed" {
		t.Errorf("defaults: failure policy %s, want fail-closed", got)
	}
	if cfg.logLevel != "warn" {
		t.Errorf("defaults: log level %s, want warn", cfg.logLevel)
	}
	if cfg.upstream != "" {
		t.Errorf("defaults: upstream %q, want none (embedded)", cfg.upstream)
	}
}

// In-process, through run: the wiring from the command line to the adapter.
func TestHookInProcess(t *testing.T) {
	t.Parallel()
	r := runBridge([]string{"hook", "claude-code", "-include-native"}, nil, claudePreToolUse("mkfs.ext4 /dev/sda1"))
	r.Expect(t, "mkfs", 0, "")
	expectDecision(t, "mkfs", parseHookOut(t, r.Stdout), "deny", "")
}

// BenchmarkHookStartAndAnswer is what a runtime pays per hook event with a command hook: start
// the binary, write one PreToolUse, read the answer (ns/op), and wait for the exit (exit-ns/op).
// "embedded" runs the decision core in the hook process (default policy); "upstream" asks an
// ahp-server on loopback. The goal is 10 ms; it is measured, not asserted (docs/performance.md).
func BenchmarkHookStartAndAnswer(b *testing.B) {
	needBinary(b) // before starting the upstream
	up := startUpstream(b)
	modes := []struct {
		name string
		args []string
	}{
		{"embedded", []string{"hook", "claude-code"}},
		{"upstream", []string{"hook", "claude-code", "-upstream", up, "-failure-policy", "fail-closed"}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			benchStartAndAnswer(b, m.args, claudePreToolUse("rm -rf /"), `"permissionDecision":"deny"`)
		})
	}
}
