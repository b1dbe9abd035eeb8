package main

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHookInstallDoctorUninstall installs every runtime's hooks into a temporary project (HOME a
// temporary directory too) with the built binary, has doctor run its test event through the
// configured command, and uninstalls again.
func TestHookInstallDoctorUninstall(t *testing.T) {
	bin := needBinary(t)
	for _, rt := range []string{"claude-code", "codex", "cursor", "gemini", "copilot", "factory", "windsurf", "cline"} {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			home, project := t.TempDir(), t.TempDir()
			env := append(childEnv(), "HOME="+home)
			runBin := func(args ...string) (string, int) {
				stdout, stderr, code := runProcess(t, bin, args, env, "")
				return stdout + stderr, code
			}
			if out, code := runBin("hook", "install", rt, "--project", project); code != 0 || !strings.Contains(out, "hook installed") {
				t.Fatalf("install: exit %d\n%s", code, out)
			}
			out, code := runBin("hook", "doctor", rt, "--project", project)
			if code != 0 || !strings.Contains(out, "OK: the runtime will run the hook and it answers") {
				t.Fatalf("doctor: exit %d\n%s", code, out)
			}
			if out, code := runBin("hook", "install", rt, "--project", project); code != 0 || !strings.Contains(out, "nothing changed") {
				t.Errorf("second install: exit %d\n%s", code, out)
			}
			if out, code := runBin("hook", "uninstall", rt, "--project", project); code != 0 || !strings.Contains(out, "hook removed") {
				t.Errorf("uninstall: exit %d\n%s", code, out)
			}
			if out, code := runBin("hook", "doctor", rt, "--project", project); code != 1 || !strings.Contains(out, "PROBLEM") {
				t.Errorf("doctor after uninstall: exit %d\n%s", code, out)
			}
		})
	}
}

// runProcess runs bin with args, env and stdin, and returns its stdout, stderr and exit status.
func runProcess(tb testing.TB, bin string, args, env []string, stdin string) (string, string, int) {
	tb.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		tb.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// runtimeDenials are each runtime's own before-tool event for `rm -rf /`, which the built-in
// default policy denies, with the answer that says so in the runtime's terms.
var runtimeDenials = []struct {
	name, runtime, input string
	args                 []string
	exit                 int
	want                 string
}{
	{"claude-code", "claude-code", claudePreToolUse("rm -rf /"), nil, 0, `"permissionDecision":"deny"`},
	{"codex", "codex", claudePreToolUse("rm -rf /"), nil, 0, `"permissionDecision":"deny"`},
	{"cursor", "cursor", `{"hook_event_name":"beforeShellExecution","conversation_id":"c1","generation_id":"g1","command":"rm -rf /","cwd":"/"}`, nil, 0, `"permission":"deny"`},
	{"gemini", "gemini", `{"hook_event_name":"BeforeTool","session_id":"s1","cwd":"/","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"decision":"deny"`},
	{"copilot", "copilot", `{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"/","tool_name":"bash","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"permissionDecision":"deny"`},
	{"copilot-camelcase", "copilot", `{"toolName":"bash","toolArgs":"{\"command\":\"rm -rf /\"}","cwd":"/","timestamp":1}`, []string{"--event", "preToolUse"}, 0, `"permissionDecision":"deny"`},
	{"factory", "factory", `{"hookEventName":"PreToolUse","sessionId":"s1","cwd":"/","tool_name":"Execute","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"permissionDecision":"deny"`},
	{"windsurf", "windsurf", `{"agent_action_name":"pre_run_command","trajectory_id":"t1","execution_id":"e1","tool_info":{"command_line":"rm -rf /","cwd":"/"}}`, nil, 2, ``},
	{"cline", "cline", `{"hookName":"PreToolUse","taskId":"t1","preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf /"}}}`, nil, 0, `"cancel":true`},
}

// TestHookDenialPerRuntime runs runtimeDenials through the built binary with the built-in default
// policy: each is refused in its runtime's terms (Windsurf's by exit 2 with the reason on stderr).
func TestHookDenialPerRuntime(t *testing.T) {
	bin := needBinary(t)
	for _, c := range runtimeDenials {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runProcess(t, bin, append([]string{"hook", c.runtime}, c.args...), childEnv(), c.input)
			if code != c.exit || !strings.Contains(stdout, c.want) {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d with %s", code, stdout, stderr, c.exit, c.want)
			}
			if c.exit == 2 && strings.TrimSpace(stderr) == "" {
				t.Error("exit 2 without a reason on stderr")
			}
		})
	}
}

// BenchmarkHookRuntimeStartAndAnswer is what each runtime pays per decided event with a command
// hook: start the binary, write runtimeDenials' event, wait for the exit (the runtimes read the
// answer and the exit status then) and check the denial. ns/op is the mean; p50-ns and p99-ns the
// percentiles. "embedded" runs the decision core in the hook process (default policy); "upstream"
// asks an ahp-server on loopback. Measured, not asserted (docs/performance.md).
func BenchmarkHookRuntimeStartAndAnswer(b *testing.B) {
	bin := needBinary(b)
	up := startUpstream(b)
	for _, mode := range []string{"embedded", "upstream"} {
		for _, rt := range runtimeDenials {
			args := append([]string{"hook", rt.runtime}, rt.args...)
			if mode == "upstream" {
				args = append(args, "-upstream", up, "-failure-policy", "fail-closed")
			}
			b.Run(mode+"/"+rt.name, func(b *testing.B) {
				took := make([]time.Duration, 0, b.N)
				for i := 0; i < b.N; i++ {
					start := time.Now()
					stdout, _, code := runProcess(b, bin, args, childEnv(), rt.input)
					took = append(took, time.Since(start))
					if code != rt.exit || !strings.Contains(stdout, rt.want) {
						b.Fatalf("exit %d, stdout %q", code, stdout)
					}
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(took[(len(took)*99)/100].Nanoseconds()), "p99-ns")
			})
		}
	}
}
