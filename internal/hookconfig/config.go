// Package hookconfig writes, removes and checks the hook configuration that makes an agent runtime
// run `ahp-jsonrpc-bridge hook RUNTIME`: Claude Code's and Factory's settings/hooks JSON, Codex's
// hooks.json, Cursor's and Windsurf's hooks.json, Gemini CLI's settings.json, a file of its own
// under Copilot's .github/hooks, and Cline's per-event hook scripts. Every edit keeps the file's
// other settings (and their order), is idempotent, backs the old file up first, and refuses a file
// it cannot parse. What the installer added is recognised by its command (the bridge's
// " hook RUNTIME"), so uninstall removes exactly that.
package hookconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ahp-gateway/ahp/internal/adapter"
)

// Scope is where the configuration goes.
type Scope int

const (
	// Project is the repository's own configuration (committed, shared with the team).
	Project Scope = iota + 1
	// User is the user's configuration for every project.
	User
)

// Options say what to install and where.
type Options struct {
	Provider adapter.Provider
	Scope    Scope
	// Dir is the project directory (Project scope); Home the user's home (User scope, and the
	// places doctor looks for feature flags).
	Dir, Home string
	// Command is the hook command, e.g. "/usr/local/bin/ahp-jsonrpc-bridge hook cursor
	// --upstream http://127.0.0.1:8080 --failure-policy fail-closed". It must contain Marker.
	Command string
	// FailClosed asks the runtime to block when the hook itself fails, where it can say so
	// (Cursor's failClosed, Claude Code's onFailure).
	FailClosed bool
	// TimeoutSec is the runtime's own deadline for one hook run.
	TimeoutSec int
}

// Marker is what identifies the installer's entries: the bridge's hook subcommand for a runtime
// ("ahp-jsonrpc-bridge hook cursor"); Ours checks a command for it.
func Marker(p adapter.Provider) string { return "ahp-jsonrpc-bridge hook " + p.String() }

// Ours reports whether command runs the bridge's hook for p (the program path may be quoted).
func Ours(command string, p adapter.Provider) bool {
	return strings.Contains(command, "ahp-jsonrpc-bridge") && (strings.Contains(command, " hook "+p.String()+" ") || strings.HasSuffix(command, " hook "+p.String()))
}

// Path is the configuration file (for Cline: the hooks directory) that Options point at.
func Path(o Options) (string, error) {
	base := o.Dir
	if o.Scope == User {
		base = o.Home
	}
	if base == "" {
		return "", errors.New("no directory: give --project DIR or a home directory")
	}
	rel := map[adapter.Provider][2]string{
		adapter.ClaudeCode: {".claude/settings.json", ".claude/settings.json"},
		adapter.Codex:      {".codex/hooks.json", ".codex/hooks.json"},
		adapter.Cursor:     {".cursor/hooks.json", ".cursor/hooks.json"},
		adapter.Gemini:     {".gemini/settings.json", ".gemini/settings.json"},
		adapter.Copilot:    {".github/hooks/ahp-gateway.json", ""},
		adapter.Factory:    {".factory/hooks.json", ".factory/hooks.json"},
		adapter.Windsurf:   {".windsurf/hooks.json", ".codeium/windsurf/hooks.json"},
		adapter.Cline:      {".clinerules/hooks", "Documents/Cline/Hooks"},
	}[o.Provider]
	i := 0
	if o.Scope == User {
		i = 1
	}
	if rel[i] == "" {
		return "", fmt.Errorf("%s loads hooks only from the repository (.github/hooks); use --project", o.Provider)
	}
	return filepath.Join(base, rel[i]), nil
}

// Events are the native events the installer registers: every event the adapter maps, in the
// spelling the configuration uses (Copilot: the VS Code compatible PascalCase ones, whose payload
// names the event; Codex: the events it has; Gemini CLI: not the per-model-call ones).
func Events(p adapter.Provider) []string {
	var out []string
	for _, e := range adapter.AdaptedEvents(p) {
		switch {
		case p == adapter.Copilot && e[0] >= 'a' && e[0] <= 'z':
			continue
		case p == adapter.Codex && e == adapter.SessionEnd:
			continue // Codex has no SessionEnd hook
		case p == adapter.Gemini && (e == "AfterModel" || e == "BeforeModel"):
			// AfterModel fires for every streamed chunk and BeforeModel carries the whole
			// conversation: a process per call would cost more than it tells. BeforeAgent
			// checks the prompt.
			continue
		}
		out = append(out, e)
	}
	return out
}

// toolEvents are events whose Claude-style groups take a tool matcher.
var toolEvents = map[string]bool{
	adapter.PreToolUse: true, adapter.PostToolUse: true, adapter.PermissionRequest: true,
	"BeforeTool": true, "AfterTool": true,
}

// Result says what an install or uninstall did.
type Result struct {
	Path    string
	Backup  string // the previous file's copy, when there was one
	Changed bool
	Events  []string
}

// Install adds the hook entries (replacing the installer's earlier ones).
func Install(o Options) (Result, error) {
	if !Ours(o.Command, o.Provider) {
		return Result{}, fmt.Errorf("the command must run %q", Marker(o.Provider))
	}
	if o.Provider == adapter.Cline {
		return installCline(o)
	}
	return editJSON(o, true)
}

// Uninstall removes the installer's entries and nothing else.
func Uninstall(o Options) (Result, error) {
	if o.Provider == adapter.Cline {
		return uninstallCline(o)
	}
	return editJSON(o, false)
}

// editJSON loads the file (absent: empty), removes the installer's entries, adds them again when
// install, and writes the file back if anything changed.
func editJSON(o Options, install bool) (Result, error) {
	path, err := Path(o)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: path}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	root := newObject()
	if len(old) > 0 {
		if root, err = parseObject(old); err != nil {
			return res, fmt.Errorf("%s: %w; not changing a file that cannot be read back", path, err)
		}
	}
	if _, ok := root.get("version"); !ok && install && (o.Provider == adapter.Cursor || o.Provider == adapter.Copilot) {
		root.set("version", jsonNumber(1))
	}
	hooks, err := root.child("hooks")
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	for _, ev := range slices.Clone(hooks.keys) {
		list, ok := hooks.vals[ev].([]any)
		if !ok {
			continue
		}
		kept := removeOurs(list, o.Provider)
		if len(kept) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, kept)
		}
	}
	if install {
		for _, ev := range Events(o.Provider) {
			list, _ := hooks.vals[ev].([]any)
			hooks.set(ev, append(list, entry(o, ev)))
			res.Events = append(res.Events, ev)
		}
	}
	if len(hooks.keys) == 0 {
		root.del("hooks")
	}
	if o.Provider == adapter.Copilot && !install && len(root.keys) <= 1 {
		// The file is the installer's own: remove it.
		if len(old) > 0 {
			res.Changed = true
			return res, os.Remove(path)
		}
		return res, nil
	}
	data, err := indent(root)
	if err != nil {
		return res, err
	}
	if len(old) == 0 && !install {
		return res, nil
	}
	if string(data) == string(old) {
		return res, nil
	}
	res.Changed = true
	if len(old) > 0 {
		res.Backup = path + ".ahp-gateway.bak"
		if err := os.WriteFile(res.Backup, old, 0o600); err != nil {
			return res, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, err
	}
	return res, writeAtomic(path, data, 0o644)
}

// removeOurs drops the installer's hooks from one event's list: flat entries with our command,
// and, in Claude-style groups, our hooks (and a group left empty).
func removeOurs(list []any, p adapter.Provider) []any {
	var kept []any
	for _, item := range list {
		e, ok := item.(*object)
		if !ok {
			kept = append(kept, item)
			continue
		}
		if isOurs(e, p) {
			continue
		}
		if inner, ok := e.vals["hooks"].([]any); ok {
			rest := removeOurs(inner, p)
			if len(rest) == 0 {
				continue
			}
			e.set("hooks", rest)
		}
		kept = append(kept, e)
	}
	return kept
}

func isOurs(e *object, p adapter.Provider) bool {
	for _, k := range []string{"command", "bash"} {
		if s, ok := e.vals[k].(string); ok && Ours(s, p) {
			return true
		}
	}
	return false
}

// entry is one hook registration in the runtime's configuration shape.
func entry(o Options, ev string) any {
	h := newObject()
	switch o.Provider {
	case adapter.Cursor:
		h.set("command", o.Command)
		h.set("timeout", jsonNumber(o.TimeoutSec))
		if o.FailClosed {
			h.set("failClosed", true)
		}
		return h
	case adapter.Windsurf:
		h.set("command", o.Command)
		h.set("show_output", true)
		return h
	case adapter.Copilot:
		h.set("type", "command")
		h.set("bash", o.Command)
		h.set("command", o.Command) // VS Code reads "command", the CLI "bash"
		h.set("timeoutSec", jsonNumber(o.TimeoutSec))
		return h
	}
	// Claude Code's shape, which Codex, Factory and Gemini CLI share.
	h.set("type", "command")
	h.set("command", o.Command)
	if o.Provider == adapter.Gemini {
		h.set("timeout", jsonNumber(o.TimeoutSec*1000)) // milliseconds
	} else {
		h.set("timeout", jsonNumber(o.TimeoutSec))
	}
	// Only where a refusal is the fail-closed answer: a blocked Stop keeps the agent going.
	if o.FailClosed && o.Provider == adapter.ClaudeCode && adapter.Refuses(o.Provider, ev) {
		h.set("onFailure", "block")
	}
	g := newObject()
	if toolEvents[ev] {
		g.set("matcher", "*")
		if o.Provider == adapter.Gemini {
			g.set("matcher", ".*") // a regular expression there
		}
	}
	g.set("hooks", []any{h})
	return g
}

func jsonNumber(n int) any { return json.Number(fmt.Sprint(n)) }

// writeAtomic writes data to a temporary file beside path and renames it into place.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ahp-gateway-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// clineScriptHead marks a Cline hook script as the installer's.
const clineScriptHead = "#!/bin/sh\n# Written by ahp-jsonrpc-bridge hook install cline; removed by hook uninstall cline.\n"

func clineScript(o Options) []byte { return []byte(clineScriptHead + "exec " + o.Command + "\n") }

// installCline writes one executable per event; a file of the same name that is not the
// installer's is left alone, and the install refuses.
func installCline(o Options) (Result, error) {
	dir, err := Path(o)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: dir}
	for _, ev := range Events(o.Provider) {
		if old, err := os.ReadFile(filepath.Join(dir, ev)); err == nil && !strings.HasPrefix(string(old), clineScriptHead) {
			return res, fmt.Errorf("%s: a hook of your own is there; not replacing it (merge it by hand)", filepath.Join(dir, ev))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	want := clineScript(o)
	for _, ev := range Events(o.Provider) {
		path := filepath.Join(dir, ev)
		res.Events = append(res.Events, ev)
		if old, err := os.ReadFile(path); err == nil && string(old) == string(want) {
			continue
		}
		res.Changed = true
		if err := writeAtomic(path, want, 0o755); err != nil {
			return res, err
		}
	}
	return res, nil
}

func uninstallCline(o Options) (Result, error) {
	dir, err := Path(o)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: dir}
	for _, ev := range Events(o.Provider) {
		path := filepath.Join(dir, ev)
		old, err := os.ReadFile(path)
		if err != nil || !strings.HasPrefix(string(old), clineScriptHead) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return res, err
		}
		res.Changed = true
		res.Events = append(res.Events, ev)
	}
	return res, nil
}
