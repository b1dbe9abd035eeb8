package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
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
	if !strings.HasSuffix(stdout, "}\n") || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout is not one line of JSON: %q", stdout)
	}
	var o hookOut
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
	return o
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

// The acceptance test of the issue: the built binary as Claude Code runs it, with the embedded
// default policy. rm -rf / is denied in Claude Code's terms; ls gets no opinion.
func TestHookProcessClaudeCode(t *testing.T) {
	t.Parallel()
	stdout, stderr, exit := runHookProc(t, claudePreToolUse("rm -rf /"), "claude-code")
	if exit != 0 {
		t.Fatalf("rm -rf /: exit %d, stderr:\n%s", exit, stderr)
	}
	o := parseHookOut(t, stdout)
	if o.HookSpecificOutput.HookEventName != "PreToolUse" || o.HookSpecificOutput.PermissionDecision != "deny" ||
		!strings.Contains(o.HookSpecificOutput.PermissionDecisionReason, "Refusing to recursively delete") {
		t.Errorf("rm -rf /: %s", stdout)
	}
	if stderr != "" {
		t.Errorf("rm -rf /: stderr %q", stderr)
	}

	stdout, stderr, exit = runHookProc(t, claudePreToolUse("ls"), "claude-code")
	if exit != 0 || stdout != "" || stderr != "" {
		t.Errorf("ls: exit %d stdout %q stderr %q; want no opinion: exit 0, nothing written", exit, stdout, stderr)
	}
}

func TestHookProcessCodex(t *testing.T) {
	t.Parallel()
	// Codex cannot ask from PreToolUse: the default policy's ask arrives as a denial that says so.
	stdout, stderr, exit := runHookProc(t, codexPreToolUse("git push --force origin main"), "codex")
	if exit != 0 {
		t.Fatalf("exit %d, stderr:\n%s", exit, stderr)
	}
	o := parseHookOut(t, stdout)
	if o.HookSpecificOutput.PermissionDecision != "deny" || !strings.HasPrefix(o.HookSpecificOutput.PermissionDecisionReason, "approval required: ") {
		t.Errorf("force push: %s", stdout)
	}
	// Recorded events say nothing.
	stdout, stderr, exit = runHookProc(t, `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}`, "codex")
	if exit != 0 || stdout != "" || stderr != "" {
		t.Errorf("Stop: exit %d stdout %q stderr %q", exit, stdout, stderr)
	}
	// An input that cannot be read at all, under the embedded default fail-closed: exit 2 with
	// the reason on stderr, the runtimes' blocking error.
	stdout, stderr, exit = runHookProc(t, "{", "codex")
	if exit != 2 || stdout != "" || !strings.Contains(stderr, "unreadable codex hook input") {
		t.Errorf("unreadable: exit %d stdout %q stderr %q", exit, stdout, stderr)
	}
}

func TestHookProcessUpstreamAndFailurePolicy(t *testing.T) {
	t.Parallel()
	up := startUpstream(t)
	stdout, stderr, exit := runHookProc(t, claudePreToolUse("rm -rf ~"), "claude-code", "-upstream", up, "-failure-policy", "fail-open")
	if o := parseHookOut(t, stdout); exit != 0 || o.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("upstream: exit %d stdout %q stderr %q", exit, stdout, stderr)
	}

	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	stdout, _, exit = runHookProc(t, claudePreToolUse("ls"), "claude-code", "-upstream", deadURL, "-failure-policy", "fail-closed")
	o := parseHookOut(t, stdout)
	if exit != 0 || o.HookSpecificOutput.PermissionDecision != "deny" || o.HookSpecificOutput.PermissionDecisionReason != "Required policy backend unavailable." ||
		!strings.Contains(o.SystemMessage, "(unavailable); fail-closed") {
		t.Errorf("fail-closed: exit %d stdout %q", exit, stdout)
	}
	stdout, _, exit = runHookProc(t, claudePreToolUse("rm -rf /"), "claude-code", "-upstream", deadURL, "-failure-policy", "fail-open")
	o = parseHookOut(t, stdout)
	if exit != 0 || o.HookSpecificOutput.PermissionDecision != "" || !strings.Contains(o.SystemMessage, "fail-open") {
		t.Errorf("fail-open: exit %d stdout %q", exit, stdout)
	}
	// A policy file that does not load is a backend that cannot start: the failure policy
	// answers, in Claude Code's terms.
	stdout, stderr, exit = runHookProc(t, claudePreToolUse("ls"), "claude-code", "-policy", "/nonexistent/policy.yaml")
	o = parseHookOut(t, stdout)
	if exit != 0 || o.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(stderr, "cannot start the policy backend") {
		t.Errorf("broken policy: exit %d stdout %q stderr %q", exit, stdout, stderr)
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
	if o := parseHookOut(t, string(body)+"\n"); resp.StatusCode != http.StatusOK || o.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("rm -rf /: %d %s", resp.StatusCode, body)
	}
	resp, err = client.Post(url, "application/json", strings.NewReader(claudePreToolUse("ls")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Errorf("ls: %d %q, want 204 and no body", resp.StatusCode, body)
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
		{nil, nil, "name the runtime: claude-code or codex"},
		{[]string{"cursor"}, nil, `unknown runtime "cursor"`},
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
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"hook", "claude-code", "-timeout-ms", "0"}, strings.NewReader(c.input), io.Discard, &stderr, noEnv)
		if code != c.want || !strings.Contains(stderr.String(), "-timeout-ms") {
			t.Errorf("input %q: exit %d, want %d (stderr %q)", c.input, code, c.want, stderr.String())
		}
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
		if !strings.Contains(help, "Usage: ahp-jsonrpc-bridge hook claude-code|codex") || !strings.Contains(help, "Exit status") {
			t.Errorf("hook %v: usage head missing:\n%s", args, help)
		}
		for _, name := range []string{"http", "upstream", "upstream-token-env", "upstream-protocol", "timeout-ms", "failure-policy",
			"policy", "policy-poll", "include-native", "max-message-bytes", "shutdown-timeout", "log-level", "log-format"} {
			if !strings.Contains(help, "  -"+name) {
				t.Errorf("help does not document -%s", name)
			}
		}
		if n := strings.Count(help, "(env AHP_BRIDGE_"); n != 13 {
			t.Errorf("help names %d environment variables, want 13:\n%s", n, help)
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
	cfg, code := parseHookFlags([]string{"codex"}, io.Discard, func(k string) string { return env[k] })
	if cfg == nil || code != 0 {
		t.Fatalf("exit %d", code)
	}
	if cfg.upstream != env["AHP_BRIDGE_UPSTREAM"] || cfg.failurePolicy.String() != "fail-open" || cfg.timeout != 250*time.Millisecond ||
		!cfg.includeNative || cfg.httpAddr != "127.0.0.1:0" || cfg.logLevel != "debug" {
		t.Errorf("config from the environment: %+v", cfg)
	}
	// Flags win over the environment; AHP_BRIDGE_HTTP (the bridge's own listener) is not the hook's.
	cfg, _ = parseHookFlags([]string{"codex", "-timeout-ms", "300", "-http", ""}, io.Discard, func(k string) string {
		if k == "AHP_BRIDGE_HTTP" {
			return "127.0.0.1:9"
		}
		return env[k]
	})
	if cfg == nil || cfg.timeout != 300*time.Millisecond || cfg.httpAddr != "" {
		t.Errorf("flags over the environment: %+v", cfg)
	}
	// Defaults: embedded, fail-closed, warn per event.
	cfg, _ = parseHookFlags([]string{"claude-code"}, io.Discard, noEnv)
	if cfg == nil || cfg.failurePolicy.String() != "fail-closed" || cfg.logLevel != "warn" || cfg.upstream != "" {
		t.Errorf("defaults: %+v", cfg)
	}
}

// In-process, through run: the wiring from the command line to the adapter.
func TestHookInProcess(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"hook", "claude-code", "-include-native"}, strings.NewReader(claudePreToolUse("mkfs.ext4 /dev/sda1")), &stdout, &stderr, noEnv)
	if o := parseHookOut(t, stdout.String()); code != 0 || o.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("exit %d stdout %q stderr %q", code, stdout.String(), stderr.String())
	}
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
