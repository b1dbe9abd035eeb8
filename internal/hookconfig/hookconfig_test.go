package hookconfig_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/adapter"
	"github.com/ahp-gateway/ahp/internal/hookconfig"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// unrelated is a configuration with settings the installer must keep, in every runtime's file.
const unrelated = `{"theme": "dark", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}], "stop": [{"command": "./mine.sh"}]}, "zeta": [1, 2, {"b": true, "a": null}]}`

func options(t *testing.T, p adapter.Provider) hookconfig.Options {
	t.Helper()
	dir := t.TempDir()
	return hookconfig.Options{
		Provider: p, Scope: hookconfig.Project, Dir: dir, Home: filepath.Join(dir, "home"),
		Command: "/opt/bin/ahp-jsonrpc-bridge hook " + p.String() + " --failure-policy fail-closed", FailClosed: true, TimeoutSec: 10,
	}
}

func TestInstallKeepsOtherSettingsAndUninstallRemovesOnlyItsOwn(t *testing.T) {
	for _, p := range adapter.Providers() {
		if p == adapter.Cline {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			o := options(t, p)
			path, err := hookconfig.Path(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			original := unrelated
			if p == adapter.Cursor || p == adapter.Copilot {
				// Both need "version": 1, which install adds when absent and uninstall leaves.
				original = `{"version": 1, ` + unrelated[1:]
			}
			if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := hookconfig.Install(o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed || res.Backup == "" || len(res.Events) == 0 {
				t.Fatalf("install: %+v", res)
			}
			if backup, _ := os.ReadFile(res.Backup); string(backup) != original {
				t.Errorf("backup %q", backup)
			}
			installed, _ := os.ReadFile(path)
			for _, want := range []string{`"theme": "dark"`, `./mine.sh`, `"zeta"`, o.Command} {
				if !strings.Contains(string(installed), want) {
					t.Errorf("installed file lacks %s:\n%s", want, installed)
				}
			}
			if strings.Index(string(installed), `"theme"`) > strings.Index(string(installed), `"zeta"`) {
				t.Errorf("key order changed:\n%s", installed)
			}
			rep, err := hookconfig.Doctor(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Missing) != 0 || rep.Command != o.Command {
				t.Errorf("doctor after install: missing %v, command %q", rep.Missing, rep.Command)
			}
			// Idempotent.
			if res, err := hookconfig.Install(o); err != nil || res.Changed {
				t.Errorf("second install: %+v, %v", res, err)
			}
			if again, _ := os.ReadFile(path); !bytes.Equal(again, installed) {
				t.Error("second install changed the file")
			}
			if _, err := hookconfig.Uninstall(o); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if !testkit.SameJSON(t, after, []byte(original)) {
				t.Errorf("uninstall left\n%s\nwant\n%s", after, original)
			}
			if res, err := hookconfig.Uninstall(o); err != nil || res.Changed {
				t.Errorf("second uninstall: %+v, %v", res, err)
			}
		})
	}
}

func TestInstallIntoNothingAndUninstallLeavesNothing(t *testing.T) {
	o := options(t, adapter.Copilot)
	if _, err := hookconfig.Install(o); err != nil {
		t.Fatal(err)
	}
	path, _ := hookconfig.Path(o)
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "{\n  \"version\": 1,") || !strings.Contains(string(data), `"bash"`) {
		t.Errorf("copilot file:\n%s", data)
	}
	if _, err := hookconfig.Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the installer's own file is still there: %v", err)
	}
	o.Scope = hookconfig.User
	if _, err := hookconfig.Install(o); err == nil {
		t.Error("copilot --user succeeded")
	}
}

func TestInstallRefusesAFileItCannotParse(t *testing.T) {
	for _, text := range []string{"{\"hooks\": {}, // mine\n}", "{\"a\": \"x//y\", /* c */ \"b\": [1,],}", `{"hooks": []}`, `[1]`, `{"a": 1`} {
		o := options(t, adapter.ClaudeCode)
		path, _ := hookconfig.Path(o)
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := hookconfig.Install(o)
		if err == nil {
			t.Errorf("install into %q succeeded", text)
		} else if strings.Contains(text, "//") && !strings.Contains(err.Error(), "JSONC") {
			t.Errorf("a commented file: %v, want it named JSONC", err)
		}
		if got, _ := os.ReadFile(path); string(got) != text {
			t.Errorf("the file changed to %q", got)
		}
	}
}

func TestInstallWritesEachRuntimesShape(t *testing.T) {
	cases := map[adapter.Provider][]string{
		adapter.ClaudeCode: {`"matcher": "*"`, `"onFailure": "block"`, `"PermissionRequest"`},
		adapter.Codex:      {`"PermissionRequest"`, `"Stop"`},
		adapter.Cursor:     {`"version": 1`, `"failClosed": true`, `"beforeShellExecution"`, `"beforeMCPExecution"`},
		adapter.Gemini:     {`"BeforeTool"`, `"matcher": ".*"`, `"timeout": 10000`},
		adapter.Factory:    {`"PreToolUse"`, `"SubagentStop"`},
		adapter.Windsurf:   {`"pre_run_command"`, `"show_output": true`},
	}
	for p, wants := range cases {
		o := options(t, p)
		if _, err := hookconfig.Install(o); err != nil {
			t.Fatal(err)
		}
		path, _ := hookconfig.Path(o)
		data, _ := os.ReadFile(path)
		for _, w := range wants {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s: no %s in\n%s", p, w, data)
			}
		}
		if p == adapter.Codex && strings.Contains(string(data), "SessionEnd") {
			t.Errorf("codex has no SessionEnd hook:\n%s", data)
		}
	}
}

// Claude Code's onFailure "block" goes only on events where a refusal is the fail-closed answer:
// a blocked Stop or SubagentStop keeps the agent working, a blocked SessionStart refuses nothing.
func TestInstallBlocksOnFailureOnlyWhereARefusalIsSafe(t *testing.T) {
	o := options(t, adapter.ClaudeCode)
	if _, err := hookconfig.Install(o); err != nil {
		t.Fatal(err)
	}
	path, _ := hookconfig.Path(o)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{adapter.PreToolUse: true, adapter.PermissionRequest: true, adapter.UserPromptSubmit: true}
	for _, ev := range []string{adapter.PreToolUse, adapter.PermissionRequest, adapter.UserPromptSubmit, adapter.Stop, adapter.SubagentStop, adapter.SessionStart, adapter.Notification} {
		groups := cfg.Hooks[ev]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Errorf("%s: %d groups in\n%s", ev, len(groups), data)
			continue
		}
		if got := groups[0].Hooks[0]["onFailure"] == "block"; got != want[ev] {
			t.Errorf("%s: onFailure block %v, want %v", ev, got, want[ev])
		}
	}
}

func TestClineScripts(t *testing.T) {
	o := options(t, adapter.Cline)
	dir, _ := hookconfig.Path(o)
	if _, err := hookconfig.Install(o); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "PreToolUse"))
	if err != nil || st.Mode()&0o100 == 0 {
		t.Fatalf("PreToolUse script: %v %v", st, err)
	}
	if res, err := hookconfig.Install(o); err != nil || res.Changed {
		t.Errorf("second install: %+v %v", res, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Mine"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := hookconfig.Uninstall(o); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 || left[0].Name() != "Mine" {
		t.Errorf("left %v", left)
	}
	// A hook of the user's own under an event name is never replaced.
	if err := os.WriteFile(filepath.Join(dir, "PreToolUse"), []byte("#!/bin/sh\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := hookconfig.Install(o); err == nil {
		t.Error("install over the user's own PreToolUse script succeeded")
	}
}

func TestDoctorFindsPitfalls(t *testing.T) {
	o := options(t, adapter.Codex)
	if _, err := hookconfig.Install(o); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(o.Home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(o.Home, ".codex", "config.toml")
	if err := os.WriteFile(config, []byte("model = \"o4\"\n[features]\nhooks = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := hookconfig.Doctor(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "turns hooks off") {
		t.Errorf("codex with hooks off: %+v", rep.Problems)
	}
	if err := os.WriteFile(config, []byte("[features]\nhooks = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ = hookconfig.Doctor(context.Background(), o)
	if strings.Contains(strings.Join(rep.Problems, "\n"), "turns hooks off") {
		t.Errorf("hooks on, still reported: %v", rep.Problems)
	}
	// The configured program does not exist here.
	if !strings.Contains(strings.Join(rep.Problems, "\n"), "not found") || rep.Test == nil || rep.Test.Err == "" {
		t.Errorf("missing program not reported: %+v %+v", rep.Problems, rep.Test)
	}
	// A Gemini CLI configuration without tools.enableHooks gets the note.
	g := options(t, adapter.Gemini)
	if _, err := hookconfig.Install(g); err != nil {
		t.Fatal(err)
	}
	rep, _ = hookconfig.Doctor(context.Background(), g)
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "enableHooks") {
		t.Errorf("gemini notes: %v", rep.Notes)
	}
}

func TestMCP(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	env := func(k string) string { return map[string]string{"HOME": home}[k] }
	if got := hookconfig.MCP(adapter.Copilot, env, project); len(got.Servers) != 1 || got.Servers[0] != "github-mcp-server" {
		t.Errorf("copilot, no config: %+v", got)
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".copilot", "mcp-config.json"), `{"mcpServers": {"prod-db": {"type": "local", "command": "x"}, "github-mcp-server": {}}}`)
	if got := hookconfig.MCP(adapter.Copilot, env, project); len(got.Servers) != 2 || got.Servers[1] != "prod-db" {
		t.Errorf("copilot: %+v", got)
	}
	write(filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"db": {"url": "https://prod-db.internal/mcp"}, "gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}}}`)
	write(filepath.Join(project, ".cursor", "mcp.json"), `{"mcpServers": {"prod-db": {"url": "https://prod-db.internal/mcp"}}}`)
	got := hookconfig.MCP(adapter.Cursor, env, project)
	for endpoint, want := range map[string]string{
		"https://prod-db.internal/mcp":               "prod-db", // the project's name wins
		"npx -y @modelcontextprotocol/server-github": "gh",
		"npx": "gh",
	} {
		if got.Endpoints[endpoint] != want {
			t.Errorf("cursor %q: %q, want %q (%v)", endpoint, got.Endpoints[endpoint], want, got.Endpoints)
		}
	}
	write(filepath.Join(project, ".cursor", "mcp.json"), `{"mcpServers": `)
	if got := hookconfig.MCP(adapter.Cursor, env, project); got.Endpoints["https://prod-db.internal/mcp"] != "db" {
		t.Errorf("a broken project file is skipped: %v", got.Endpoints)
	}
	if got := hookconfig.MCP(adapter.Gemini, env, project); got.Servers != nil || got.Endpoints != nil {
		t.Errorf("gemini: %+v", got)
	}
}
