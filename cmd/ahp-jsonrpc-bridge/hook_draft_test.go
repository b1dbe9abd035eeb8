package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// turnStartPolicy has rules on the draft catalogue's turn.start that read its typed members
// (event.catalogue.items), not any runtime's own fields.
const turnStartPolicy = `
version: 1
name: turn-start
rules:
  - id: deny-drop-table
    on: [turn.start]
    when: has(event.catalogue.items) && event.catalogue.items.exists(m, m.role == "user" && m.parts.exists(p, p.?text.orValue("").contains("DROP TABLE")))
    effect: {deny: {reason: No schema changes from a prompt.}}
  - id: inject-style
    on: [turn.start]
    when: has(event.catalogue.items) && event.catalogue.items.exists(m, m.parts.exists(p, p.?text.orValue("").contains("refactor")))
    effect: {inject: {text: Follow docs/STYLE.md.}}
`

// draftTurnStart is a draft hooks/intercept for turn.start with one user prompt.
func draftTurnStart(id, prompt string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"` + id +
		`","source":"urn:test:harness","type":"turn.start","time":"2026-09-15T12:00:00Z","turn":{"id":"turn-` + id +
		`"},"trigger":"user","items":[{"id":"m1","role":"user","parts":[{"id":"m1-text","kind":"text","mediaType":"text/plain","selection":"body","text":"` +
		prompt + `"}]}]},"capabilities":{"effects":["deny","message"]}}}`
}

func claudePrompt(prompt string) string {
	return `{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"` + prompt + `"}`
}

// One policy rule on turn.start fires for Claude Code's UserPromptSubmit through the built `hook
// claude-code` command — answered in Claude Code's terms — and for a draft harness's turn.start
// through the bridge on stdio.
func TestHookClaudeCodeUserPromptSubmitIsTurnStart(t *testing.T) {
	t.Parallel()
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(turnStartPolicy), 0o600); err != nil {
		t.Fatal(err)
	}

	// deny → decision "block" with the reason: the prompt is not sent.
	stdout, stderr, exit := runHookProc(t, claudePrompt("please DROP TABLE users"), "claude-code", "-policy", policy)
	expectExit(t, "deny", exit, 0, stderr)
	if want := `{"decision":"block","reason":"No schema changes from a prompt."}`; strings.TrimSpace(stdout) != want {
		t.Errorf("deny: stdout %s, want %s", stdout, want)
	}

	// inject → hookSpecificOutput.additionalContext.
	stdout, stderr, exit = runHookProc(t, claudePrompt("refactor the parser"), "claude-code", "-policy", policy)
	expectExit(t, "inject", exit, 0, stderr)
	if want := `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Follow docs/STYLE.md."}}`; strings.TrimSpace(stdout) != want {
		t.Errorf("inject: stdout %s, want %s", stdout, want)
	}

	// No rule matches: no output, the prompt goes on.
	stdout, stderr, exit = runHookProc(t, claudePrompt("explain the parser"), "claude-code", "-policy", policy)
	expectExit(t, "none", exit, 0, stderr)
	expectSilent(t, "none", stdout, stderr)

	// Codex: the same rule, the same JSON.
	stdout, stderr, exit = runHookProc(t, claudePrompt("DROP TABLE x"), "codex", "-policy", policy)
	expectExit(t, "codex deny", exit, 0, stderr)
	if !strings.Contains(stdout, `"decision":"block"`) {
		t.Errorf("codex deny: stdout %s", stdout)
	}

	// The same rule for a draft harness: a draft deny effect. The inject rule does not reach a
	// caller that does not advertise inject.
	p := startProc(t, "-policy", policy)
	p.send(t, draftTurnStart("t1", "please DROP TABLE users"), draftTurnStart("t2", "refactor the parser"))
	if line := p.next(t); !strings.Contains(line, `"type":"deny"`) || !strings.Contains(line, "No schema changes from a prompt.") || !strings.Contains(line, `"protocolVersion":"draft"`) {
		t.Errorf("draft turn.start deny: %s", line)
	}
	if line := p.next(t); !strings.Contains(line, `"effects":[]`) {
		t.Errorf("draft turn.start without inject capability: %s", line)
	}
	p.finish(t)
}
