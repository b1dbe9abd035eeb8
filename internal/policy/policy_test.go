package policy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestDynamicWhenIsAcceptedAndCheckedAtRunTime(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: by-flag
    when: input.force
    effect: {deny: {reason: forced}}
`)
	res := p.Evaluate(toolBefore(t, "x", 0, map[string]any{"force": true}))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	res = p.Evaluate(toolBefore(t, "x", 0, map[string]any{"force": "yes"}))
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "want bool") {
		t.Errorf("errors = %v, want one saying the value is not a bool", res.Errors)
	}
}

func TestParseRejectsUnknownFieldsByName(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"top level": "version: 1\nrulez: []\n",
		"rule":      "version: 1\nrules:\n  - id: a\n    wen: 'true'\n    effect: {deny: {reason: x}}\n",
		"effect":    "version: 1\nrules:\n  - id: a\n    effect: {deny: {reason: x, severity: high}}\n",
		"settings":  "version: 1\nsettings: {rate_limit: {multiplyer: 2}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			msg := parseErr(t, src)
			if !strings.Contains(msg, "unknown field") {
				t.Errorf("error %q does not name the unknown field", msg)
			}
			for _, f := range []string{"rulez", "wen", "severity", "multiplyer"} {
				if strings.Contains(src, f) && !strings.Contains(msg, f) {
					t.Errorf("error %q does not name %q", msg, f)
				}
			}
			if strings.Contains(msg, "policy.") {
				t.Errorf("error %q leaks Go type names", msg)
			}
		})
	}
}

func TestParseValidatesRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, rule, want string }{
		{"compile error names rule and position", "id: deny-x\n    when: 'tool.name == \"Bash\" && foo'\n    effect: {deny: {reason: x}}",
			`test.yaml: line 3: rule "deny-x": when: ERROR: <input>:1:24: undeclared reference to 'foo'`},
		{"when must be bool", "id: not-bool\n    when: 'tool.name + \"x\"'\n    effect: {deny: {reason: x}}",
			`rule "not-bool": when: expression has type string, want bool`},
		{"duplicate id", "id: same\n    effect: {deny: {reason: a}}\n  - id: same\n    effect: {deny: {reason: b}}",
			`line 5: rule "same": duplicate id (first defined at line 3)`},
		{"unknown event name", "id: a\n    on: [tool.befor]\n    effect: {deny: {reason: x}}", `rule "a": on: unknown event type "tool.befor"`},
		{"id required", "effect: {deny: {reason: x}}", "id is required"},
		{"id shape", "id: Deny_X\n    effect: {deny: {reason: x}}", "id must match"},
		{"no effect", "id: a\n    effect: {}", "give exactly one of"},
		{"null effect", "id: a\n    effect: {allow: }", "write `allow: {}`"},
		{"two effects", "id: a\n    effect: {deny: {reason: x}, ask: {}}", "not ask and deny"},
		{"deny reason", "id: a\n    effect: {deny: {}}", "effect.deny: reason is required"},
		{"reason twice", "id: a\n    effect: {ask: {reason: x, reason_expr: '\"y\"'}}", "not both"},
		{"reason_expr type", "id: a\n    effect: {ask: {reason_expr: '1'}}", "reason_expr: expression has type int, want string"},
		{"mode", "id: a\n    mode: audit\n    effect: {deny: {reason: x}}", `mode: want enforce or dry-run, got "audit"`},
		{"fallback value", "id: a\n    fallback: allow\n    effect: {ask: {}}", `fallback: want deny or no-effect, got "allow"`},
		{"fallback on deny", "id: a\n    fallback: no-effect\n    effect: {deny: {reason: x}}", "fallback does not apply to deny effects"},
		{"tool kind", "id: a\n    match: {tool_kinds: [shel]}\n    effect: {deny: {reason: x}}", `unknown tool kind "shel"`},
		{"glob", "id: a\n    match: {tool_names: ['[a-']}\n    effect: {deny: {reason: x}}", `match.tool_names: bad pattern "[a-"`},
		{"modify on", "id: a\n    effect: {modify: {merge: {x: 1}}}", "`on:` must list only"},
		{"modify one source", "id: a\n    on: [tool.before]\n    effect: {modify: {merge: {x: 1}, input: 'input'}}", "exactly one of merge, merge_expr, input"},
		{"modify expr type", "id: a\n    on: [tool.before]\n    effect: {modify: {input: '[1]'}}", "want map(string, dyn)"},
		{"modify expr keys", "id: a\n    on: [tool.before]\n    effect: {modify: {merge_expr: '{1: 2}'}}", "has type map(int, int), want map(string, dyn)"},
		{"typed on", "id: a\n    on: [tool.before]\n    effect: {typed: {action: retry}}", "only typed events"},
		{"typed action", "id: a\n    on: [rate_limit, idle]\n    effect: {typed: {action: retry}}", `action "retry" is not an answer to idle (want one of allow, defer)`},
		{"typed empty", "id: a\n    on: [idle]\n    effect: {typed: {}}", "give an action or at least one answer field"},
		{"message text", "id: a\n    effect: {message: {}}", "text or text_expr is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg := parseErr(t, "version: 1\nrules:\n  - "+tc.rule+"\n")
			wantContains(t, "error", msg, tc.want)
		})
	}
}

func TestParseReportsEveryError(t *testing.T) {
	t.Parallel()
	msg := parseErr(t, `version: 1
rules:
  - id: a
    on: [nope]
    effect: {deny: {reason: x}}
  - id: b
    when: 'bar'
    effect: {deny: {reason: x}}
`)
	wantContains(t, "error", msg, `rule "a": on:`)
	wantContains(t, "error", msg, `rule "b": when:`)
}

func TestParseRejectsWrongVersionAndEmptyInput(t *testing.T) {
	t.Parallel()
	wantContains(t, "error", parseErr(t, "version: 2\n"), "version: want 1, got 2")
	wantContains(t, "error", parseErr(t, ""), "empty document")
	wantContains(t, "error", parseErr(t, "version: 1\n---\nversion: 1\n"), "more than one YAML document")
}

func TestOnAcceptsCanonicalHarnessAndTypedNames(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: a
    on: [pre_action, tool.before, post_response, run_lifecycle, idle]
    effect: {message: {text: hi}}
`)
	wantStrings(t, "on", p.Rules()[0].On, []string{"tool.before", "model.response.after", "run.lifecycle", "idle"})
}

func TestRulesDescribeTheFile(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
name: described
rules:
  - id: first
    description: The first rule.
    mode: dry-run
    effect: {ask: {}}
  - id: second
    fallback: no-effect
    effect: {defer: {retry_after_ms: 5}}
`)
	if p.Name() != "described" || p.Source() != "test.yaml" {
		t.Errorf("Name, Source = %q, %q", p.Name(), p.Source())
	}
	rules := p.Rules()
	want := []policy.Rule{
		{ID: "first", Description: "The first rule.", Effect: "ask", DryRun: true, Fallback: "deny", Line: 4},
		{ID: "second", Effect: "defer", Fallback: "no-effect", Line: 8},
	}
	if len(rules) != len(want) {
		t.Fatalf("Rules() = %+v", rules)
	}
	for i := range want {
		if rules[i].ID != want[i].ID || rules[i].Effect != want[i].Effect || rules[i].DryRun != want[i].DryRun ||
			rules[i].Fallback != want[i].Fallback || rules[i].Line != want[i].Line || rules[i].Description != want[i].Description {
			t.Errorf("rule %d = %+v, want %+v", i, rules[i], want[i])
		}
	}
}

func TestNameDefaultsToFileName(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte("version: 1\n"), "/etc/ahp/laptop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "laptop" {
		t.Errorf("Name() = %q, want laptop", p.Name())
	}
}

func TestDigestIsSHA256OfSource(t *testing.T) {
	t.Parallel()
	src := "version: 1\nname: d\n"
	sum := sha256.Sum256([]byte(src))
	if got, want := mustParse(t, src).Digest(), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Digest() = %s, want %s", got, want)
	}
}

func TestSettingsDefaultsAreFilled(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "version: 1\nsettings: {rate_limit: {max_backoff_ms: 9000}}\n").Settings()
	if s.RateLimit.MaxBackoffMs != 9000 || s.RateLimit.Multiplier != 2 || s.RateLimit.MinBackoffMs != 100 {
		t.Errorf("rate_limit = %+v", s.RateLimit)
	}
	if s.Idle.MinIdleMs != 5000 || s.Intent.MinConfidence != 0.3 || s.Context.MaxFacts != 10 ||
		s.Memory.MaxResults != 20 || len(s.Planning.Preferred) != 1 || len(s.Context.BroadPaths) != 4 {
		t.Errorf("defaults not filled: %+v", s)
	}
}

func TestSettingsAreValidated(t *testing.T) {
	t.Parallel()
	msg := parseErr(t, `version: 1
settings:
  intent: {min_confidence: 2}
  rate_limit: {min_backoff_ms: 5000, max_backoff_ms: 1000}
  confirmation: {default: {safety_confirm: maybe}}
`)
	for _, want := range []string{"intent.min_confidence", "min_backoff_ms (5000) exceeds", "confirmation.default.safety_confirm"} {
		wantContains(t, "error", msg, want)
	}
}

func TestDefaultPolicyLoads(t *testing.T) {
	t.Parallel()
	p := policy.Default()
	if p != policy.Default() {
		t.Error("Default() should return the same policy every time")
	}
	if len(p.Rules()) == 0 || p.Name() != "default" {
		t.Errorf("default policy: name %q, %d rules", p.Name(), len(p.Rules()))
	}
	if _, err := policy.Parse(policy.DefaultSource(), "default.yaml"); err != nil {
		t.Error(err)
	}
}
