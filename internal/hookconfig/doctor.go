package hookconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ahp-gateway/ahp/internal/adapter"
)

// Report is what doctor found.
type Report struct {
	Path string
	// Command is the installer's hook command found in the configuration ("" when none).
	Command string
	// Registered and Missing are the installer's events present and absent.
	Registered, Missing []string
	// Problems keep the runtime from running the hook as installed; Notes are worth knowing.
	Problems, Notes []string
	// Test is the result of one test event run through Command.
	Test *TestRun
}

// OK reports whether the runtime will run the hook and the test event was answered.
func (r *Report) OK() bool {
	return len(r.Problems) == 0 && r.Command != "" && r.Test != nil && r.Test.Err == ""
}

// TestRun is one test event through the configured command.
type TestRun struct {
	Event  string
	Exit   int
	Stdout string
	Stderr string
	Took   time.Duration
	Err    string // why the answer is not one the runtime accepts; "" when it is
}

// Doctor reads the configuration back, checks what the runtime needs to load it, and runs a
// harmless test event (a before-tool event for the shell command `true`) through the command.
func Doctor(ctx context.Context, o Options) (*Report, error) {
	path, err := Path(o)
	if err != nil {
		return nil, err
	}
	r := &Report{Path: path}
	if o.Provider == adapter.Cline {
		doctorCline(r, o)
	} else if err := doctorJSON(r, o); err != nil {
		return r, err
	}
	pitfalls(r, o)
	if r.Command != "" {
		r.Test = runTest(ctx, o.Provider, r.Command, o.TimeoutSec)
	}
	return r, nil
}

func doctorJSON(r *Report, o Options) error {
	data, err := os.ReadFile(r.Path)
	if errors.Is(err, os.ErrNotExist) {
		r.Problems = append(r.Problems, r.Path+" does not exist: run hook install "+o.Provider.String())
		r.Missing = Events(o.Provider)
		return nil
	}
	if err != nil {
		return err
	}
	root, err := parseObject(data)
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: %v: the runtime will not load it", r.Path, err))
		return nil
	}
	hooksV, _ := root.get("hooks")
	hooks, _ := hooksV.(*object)
	marker := Marker(o.Provider)
	for _, ev := range Events(o.Provider) {
		var list []any
		if hooks != nil {
			list, _ = hooks.vals[ev].([]any)
		}
		if cmd := findOurs(list, o.Provider); cmd != "" {
			r.Registered = append(r.Registered, ev)
			r.Command = cmd
			continue
		}
		r.Missing = append(r.Missing, ev)
	}
	if len(r.Registered) == 0 {
		r.Problems = append(r.Problems, "no "+marker+" hook in "+r.Path+": run hook install "+o.Provider.String())
	}
	if o.Provider == adapter.Cursor || o.Provider == adapter.Copilot {
		if v, _ := root.get("version"); fmt.Sprint(v) != "1" {
			r.Problems = append(r.Problems, `"version": 1 is missing; the runtime ignores the file without it`)
		}
	}
	return nil
}

// findOurs returns the installer's command in one event's list (flat or in groups).
func findOurs(list []any, p adapter.Provider) string {
	for _, item := range list {
		e, ok := item.(*object)
		if !ok {
			continue
		}
		for _, k := range []string{"command", "bash"} {
			if s, ok := e.vals[k].(string); ok && Ours(s, p) {
				return s
			}
		}
		if inner, ok := e.vals["hooks"].([]any); ok {
			if s := findOurs(inner, p); s != "" {
				return s
			}
		}
	}
	return ""
}

var execLine = regexp.MustCompile(`(?m)^exec (.+)$`)

func doctorCline(r *Report, o Options) {
	for _, ev := range Events(o.Provider) {
		path := filepath.Join(r.Path, ev)
		data, err := os.ReadFile(path)
		if err != nil || !strings.HasPrefix(string(data), clineScriptHead) {
			r.Missing = append(r.Missing, ev)
			continue
		}
		if st, err := os.Stat(path); err == nil && st.Mode()&0o111 == 0 {
			r.Problems = append(r.Problems, path+" is not executable; Cline will not run it")
		}
		r.Registered = append(r.Registered, ev)
		if m := execLine.FindStringSubmatch(string(data)); m != nil {
			r.Command = m[1]
		}
	}
	if len(r.Registered) == 0 {
		r.Problems = append(r.Problems, "no installed hook scripts in "+r.Path+": run hook install cline")
	}
}

// pitfalls are what keeps each runtime from loading hooks that are configured correctly.
func pitfalls(r *Report, o Options) {
	switch o.Provider {
	case adapter.Codex:
		// Hooks are on by default in current Codex; [features] hooks = false (or the deprecated
		// codex_hooks = false) turns them off.
		off := regexp.MustCompile(`(?m)^\s*(hooks|codex_hooks)\s*=\s*false`)
		for _, dir := range []string{filepath.Join(o.Dir, ".codex"), filepath.Join(o.Home, ".codex")} {
			path := filepath.Join(dir, "config.toml")
			if off.Match([]byte(readString(path))) {
				r.Problems = append(r.Problems, path+" turns hooks off ([features] hooks = false): Codex will not run them")
			}
		}
		r.Notes = append(r.Notes, "Codex versions from before hooks were on by default need [features] hooks = true (older: codex_hooks = true) in ~/.codex/config.toml; project hooks load only in a trusted project, and Codex asks to review new hooks (/hooks)")
	case adapter.Gemini:
		data, err := os.ReadFile(r.Path)
		if err == nil {
			if root, err := parseObject(data); err == nil {
				tools, _ := root.vals["tools"].(*object)
				enabled := tools != nil && tools.vals["enableHooks"] == true
				if !enabled {
					r.Notes = append(r.Notes, `some Gemini CLI versions run hooks only with "tools": {"enableHooks": true} in settings.json (gemini-cli#14932)`)
				}
			}
		}
	case adapter.Cursor:
		if o.FailClosed && !strings.Contains(readString(r.Path), `"failClosed": true`) {
			r.Notes = append(r.Notes, "no failClosed: Cursor lets the action through when the hook crashes or times out")
		}
		r.Notes = append(r.Notes, "Cursor reloads hooks.json on save; restart it if the hooks do not appear in its Hooks settings tab")
	case adapter.Windsurf:
		r.Notes = append(r.Notes, "Windsurf blocks only on exit status 2; a hook that crashes lets the action run")
	case adapter.Copilot:
		r.Notes = append(r.Notes, "Copilot CLI and VS Code load .github/hooks/*.json from the repository (for the coding agent: on its default branch); a failing hook never blocks there")
	case adapter.Cline:
		r.Notes = append(r.Notes, `Cline runs hooks only with "Enable Hooks" checked in its Feature Settings; on Windows it wants HookName.ps1 scripts instead`)
	case adapter.ClaudeCode:
		r.Notes = append(r.Notes, `onFailure "block" (fail-closed when the hook times out) needs Claude Code v2.1.295 or later; older versions ignore it`)
	}
	if fields := strings.Fields(r.Command); len(fields) > 0 {
		if _, err := exec.LookPath(fields[0]); err != nil {
			r.Problems = append(r.Problems, "the hook command's program is not found or not executable: "+fields[0])
		}
	}
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// testEvents are harmless before-tool events in each runtime's format.
var testEvents = map[adapter.Provider]string{
	adapter.ClaudeCode: `{"session_id":"ahp-doctor","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_use_id":"ahp-doctor"}`,
	adapter.Codex:      `{"session_id":"ahp-doctor","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_use_id":"ahp-doctor"}`,
	adapter.Cursor:     `{"hook_event_name":"beforeShellExecution","conversation_id":"ahp-doctor","generation_id":"ahp-doctor","workspace_roots":["/"],"command":"true","cwd":"/"}`,
	adapter.Gemini:     `{"session_id":"ahp-doctor","cwd":"/","hook_event_name":"BeforeTool","timestamp":"2026-01-01T00:00:00Z","tool_name":"run_shell_command","tool_input":{"command":"true"}}`,
	adapter.Copilot:    `{"hook_event_name":"PreToolUse","session_id":"ahp-doctor","timestamp":"2026-01-01T00:00:00Z","cwd":"/","tool_name":"bash","tool_input":{"command":"true"}}`,
	adapter.Factory:    `{"hookEventName":"PreToolUse","sessionId":"ahp-doctor","cwd":"/","tool_name":"Execute","tool_input":{"command":"true"}}`,
	adapter.Windsurf:   `{"agent_action_name":"pre_run_command","trajectory_id":"ahp-doctor","execution_id":"ahp-doctor","tool_info":{"command_line":"true","cwd":"/"}}`,
	adapter.Cline:      `{"hookName":"PreToolUse","taskId":"ahp-doctor","workspaceRoots":["/"],"preToolUse":{"toolName":"execute_command","parameters":{"command":"true"}}}`,
}

// runTest runs the test event through command as the runtime would: with sh -c, the event on
// stdin, and the runtime's deadline.
func runTest(ctx context.Context, p adapter.Provider, command string, timeoutSec int) *TestRun {
	if timeoutSec <= 0 {
		timeoutSec = 10
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutSec)*time.Second)
	defer cancel()
	t := &TestRun{Event: testEvents[p]}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdin = strings.NewReader(t.Event)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Took = time.Since(start)
	t.Stdout, t.Stderr = strings.TrimSpace(stdout.String()), strings.TrimSpace(stderr.String())
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		t.Exit = ee.ExitCode()
	case err != nil:
		t.Err = "the hook command did not run: " + err.Error()
		return t
	}
	switch {
	case ctx.Err() != nil:
		t.Err = fmt.Sprintf("no answer within the runtime's %ds timeout", timeoutSec)
	case t.Exit == 2 && p == adapter.Windsurf:
		// a denial: a valid answer
	case t.Exit != 0:
		t.Err = fmt.Sprintf("exit status %d: the runtime treats it as a failed hook", t.Exit)
	case t.Stdout != "" && p != adapter.Windsurf && !json.Valid([]byte(t.Stdout)):
		t.Err = "stdout is not JSON: the runtime cannot read the answer"
	}
	return t
}
