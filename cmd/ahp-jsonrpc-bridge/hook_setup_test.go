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
			runBin := func(args ...string) (string, int) {
				cmd := exec.CommandContext(context.Background(), bin, args...)
				cmd.Env = append(childEnv(), "HOME="+home)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok {
					return out.String(), ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				return out.String(), 0
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

// TestHookDenialPerRuntime runs a destructive shell command through the built binary as each
// runtime's hook, with the built-in default policy, and checks it is refused in that runtime's
// terms.
func TestHookDenialPerRuntime(t *testing.T) {
	bin := needBinary(t)
	cases := []struct {
		runtime, input string
		args           []string
		exit           int
		want           string
	}{
		{"cursor", `{"hook_event_name":"beforeShellExecution","conversation_id":"c1","generation_id":"g1","command":"rm -rf /","cwd":"/"}`, nil, 0, `"permission":"deny"`},
		{"gemini", `{"hook_event_name":"BeforeTool","session_id":"s1","cwd":"/","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"decision":"deny"`},
		{"copilot", `{"toolName":"bash","toolArgs":"{\"command\":\"rm -rf /\"}","cwd":"/","timestamp":1}`, []string{"--event", "preToolUse"}, 0, `"permissionDecision":"deny"`},
		{"factory", `{"hookEventName":"PreToolUse","sessionId":"s1","cwd":"/","tool_name":"Execute","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"permissionDecision":"deny"`},
		{"windsurf", `{"agent_action_name":"pre_run_command","trajectory_id":"t1","execution_id":"e1","tool_info":{"command_line":"rm -rf /","cwd":"/"}}`, nil, 2, ``},
		{"cline", `{"hookName":"PreToolUse","taskId":"t1","preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf /"}}}`, nil, 0, `"cancel":true`},
	}
	for _, c := range cases {
		t.Run(c.runtime, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(context.Background(), bin, append([]string{"hook", c.runtime}, c.args...)...)
			cmd.Env = childEnv()
			cmd.Stdin = strings.NewReader(c.input)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.exit || !strings.Contains(stdout.String(), c.want) {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d with %s", code, stdout.String(), stderr.String(), c.exit, c.want)
			}
			if c.exit == 2 && strings.TrimSpace(stderr.String()) == "" {
				t.Error("exit 2 without a reason on stderr")
			}
		})
	}
}

// BenchmarkHookRuntimeStartAndAnswer is what each runtime pays per decided event with a command
// hook: start the binary, write the runtime's own before-tool event for `rm -rf /`, wait for the
// exit (the runtimes read the answer and the exit status then) and check the denial. ns/op is the
// mean; p50-ns and p99-ns the percentiles. "embedded" runs the decision core in the hook process
// (default policy); "upstream" asks an ahp-server on loopback. Measured, not asserted
// (docs/performance.md).
func BenchmarkHookRuntimeStartAndAnswer(b *testing.B) {
	bin := needBinary(b)
	up := startUpstream(b)
	runtimes := []struct {
		name, input string
		args        []string
		exit        int
		want        string
	}{
		{"claude-code", claudePreToolUse("rm -rf /"), nil, 0, `"permissionDecision":"deny"`},
		{"codex", claudePreToolUse("rm -rf /"), nil, 0, `"permissionDecision":"deny"`},
		{"cursor", `{"hook_event_name":"beforeShellExecution","conversation_id":"c1","generation_id":"g1","command":"rm -rf /","cwd":"/"}`, nil, 0, `"permission":"deny"`},
		{"gemini", `{"hook_event_name":"BeforeTool","session_id":"s1","cwd":"/","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"decision":"deny"`},
		{"copilot", `{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"/","tool_name":"bash","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"permissionDecision":"deny"`},
		{"factory", `{"hookEventName":"PreToolUse","sessionId":"s1","cwd":"/","tool_name":"Execute","tool_input":{"command":"rm -rf /"}}`, nil, 0, `"permissionDecision":"deny"`},
		{"windsurf", `{"agent_action_name":"pre_run_command","trajectory_id":"t1","execution_id":"e1","tool_info":{"command_line":"rm -rf /","cwd":"/"}}`, nil, 2, ``},
		{"cline", `{"hookName":"PreToolUse","taskId":"t1","preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf /"}}}`, nil, 0, `"cancel":true`},
	}
	for _, mode := range []string{"embedded", "upstream"} {
		for _, rt := range runtimes {
			args := append([]string{"hook", rt.name}, rt.args...)
			if mode == "upstream" {
				args = append(args, "-upstream", up, "-failure-policy", "fail-closed")
			}
			b.Run(mode+"/"+rt.name, func(b *testing.B) {
				took := make([]time.Duration, 0, b.N)
				for i := 0; i < b.N; i++ {
					start := time.Now()
					cmd := exec.Command(bin, args...)
					cmd.Env = childEnv()
					cmd.Stdin = strings.NewReader(rt.input)
					var stdout bytes.Buffer
					cmd.Stdout = &stdout
					err := cmd.Run()
					took = append(took, time.Since(start))
					code := 0
					if ee, ok := err.(*exec.ExitError); ok {
						code = ee.ExitCode()
					} else if err != nil {
						b.Fatal(err)
					}
					if code != rt.exit || !strings.Contains(stdout.String(), rt.want) {
						b.Fatalf("exit %d, stdout %q", code, stdout.String())
					}
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(took[(len(took)*99)/100].Nanoseconds()), "p99-ns")
			})
		}
	}
}
