package policy_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestNoMatchIsAllowWithoutEffects(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: never
    when: 'false'
    effect: {deny: {reason: x}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_ALLOW)
	if res.Effects != nil || res.MatchedRuleIDs != nil || res.Fallbacks != nil || res.DryRuns != nil {
		t.Errorf("want an empty result, got %+v", res)
	}
}

func TestDenyWinsOverAsk(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: ask-first
    effect: {ask: {reason: please}}
  - id: deny-second
    effect: {deny: {reason: no, code: dev.example.no}}
  - id: deny-third
    effect: {deny: {reason: also no}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	wantStrings(t, "effects", effectKinds(res), []string{"deny"})
	if d := res.Effects[0]; d.GetRuleId() != "deny-second" || d.GetDeny().GetReason() != "no" || d.GetDeny().GetCode() != "dev.example.no" {
		t.Errorf("want only the first deny, got %v", d)
	}
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"ask-first", "deny-second", "deny-third"})
}

func TestPrecedenceDenyAskDeferModifyAllow(t *testing.T) {
	t.Parallel()
	rules := map[string]string{
		"allow":    "  - id: allow\n    on: [tool.before]\n    effect: {allow: {}}\n",
		"modify":   "  - id: modify\n    on: [tool.before]\n    effect: {modify: {merge: {x: 1}}}\n",
		"defer":    "  - id: defer\n    on: [tool.before]\n    effect: {defer: {retry_after_ms: 10}}\n",
		"escalate": "  - id: escalate\n    on: [tool.before]\n    effect: {escalate: {target: oncall}}\n",
		"deny":     "  - id: deny\n    on: [tool.before]\n    effect: {deny: {reason: x}}\n",
	}
	// Each case lists the rules present, in file order, weakest first so order cannot explain
	// the outcome.
	for _, tc := range []struct {
		present []string
		want    ahpv1.Verdict
	}{
		{[]string{"allow"}, ahpv1.Verdict_VERDICT_ALLOW},
		{[]string{"allow", "modify"}, ahpv1.Verdict_VERDICT_MODIFY},
		{[]string{"allow", "modify", "defer"}, ahpv1.Verdict_VERDICT_DEFER},
		{[]string{"allow", "modify", "defer", "escalate"}, ahpv1.Verdict_VERDICT_ESCALATE},
		{[]string{"allow", "modify", "defer", "escalate", "deny"}, ahpv1.Verdict_VERDICT_DENY},
	} {
		src := "version: 1\nrules:\n"
		for _, r := range tc.present {
			src += rules[r]
		}
		res := mustParse(t, src).Evaluate(shell(t, "ls"))
		wantVerdict(t, res, tc.want)
		if len(res.Effects) != 1 {
			t.Errorf("%v: want exactly the winning effect, got %v", tc.present, effectKinds(res))
		}
	}
}

func TestAskAndEscalateFirstOneDecides(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: escalate
    effect: {escalate: {reason: r, target: security}}
  - id: ask
    effect: {ask: {reason: a}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_ESCALATE)
	if res.Effects[0].GetEscalate().GetTarget() != "security" {
		t.Errorf("effects = %v", res.Effects)
	}
}

func TestLongestDeferWins(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: short
    effect: {defer: {retry_after_ms: 100}}
  - id: long
    effect: {defer: {retry_after_ms: 5000, reason: cool down}}
  - id: medium
    effect: {defer: {retry_after_ms: 1000}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DEFER)
	if d := res.Effects[0]; d.GetRuleId() != "long" || d.GetDefer().GetRetryAfterMs() != 5000 {
		t.Errorf("effect = %v, want the 5000ms defer", d)
	}
}

func TestAllowIsSentOnlyWhenNothingStronger(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: allow-reads
    effect: {allow: {reason: reads are fine}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_ALLOW)
	wantStrings(t, "effects", effectKinds(res), []string{"allow"})
}

func TestDryRunRecordsWouldBeAndChangesNothing(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: trial-deny
    mode: dry-run
    effect: {deny: {reason: would refuse}}
  - id: trial-modify
    mode: dry-run
    on: [tool.before]
    effect: {modify: {merge: {dry_run: true}}}
  - id: real-modify
    on: [tool.before]
    effect: {modify: {merge: {timeout: 5}}}
`)
	in := shell(t, "terraform apply")
	before := proto.Clone(in.Event)
	res := p.Evaluate(in)
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_MODIFY)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"trial-deny", "trial-modify", "real-modify"})
	if len(res.DryRuns) != 2 {
		t.Fatalf("dry runs = %v", res.DryRuns)
	}
	if d := res.DryRuns[0]; d.GetRuleId() != "trial-deny" || d.GetWouldBe().GetDeny().GetReason() != "would refuse" {
		t.Errorf("dry run 0 = %v", d)
	}
	wouldBe := res.DryRuns[1].GetWouldBe().GetModify().GetValue().GetStructValue().AsMap()
	if wouldBe["dry_run"] != true {
		t.Errorf("dry-run modify would be %v", wouldBe)
	}
	final := res.Effects[0].GetModify().GetValue().GetStructValue().AsMap()
	if _, leaked := final["dry_run"]; leaked || final["timeout"] != 5.0 {
		t.Errorf("final input %v: the dry-run change must not apply, the enforce one must", final)
	}
	if !proto.Equal(before, in.Event) {
		t.Error("Evaluate changed the event")
	}
}

func TestModificationsApplyInRuleOrder(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: add-flag
    on: [tool.before]
    effect: {modify: {merge_expr: '{"command": input.command + " --dry-run"}', reason: dry run first}}
  - id: deny-never
    when: 'false'
    effect: {deny: {reason: x}}
  - id: wrap
    on: [tool.before]
    when: tool.input.command == "make deploy"
    effect: {modify: {input: '{"command": "timeout 60 " + input.command, "original": tool.input.command}'}}
  - id: drop-env
    on: [tool.before]
    effect: {modify: {merge: {env: null, cwd: /work}, reason: pinned cwd}}
`)
	in := toolBefore(t, "Bash", ahpv1.ToolKind_TOOL_KIND_SHELL, map[string]any{"command": "make deploy", "env": map[string]any{"A": "1"}})
	res := p.Evaluate(in)
	wantNoErrors(t, res)
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_MODIFY)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"add-flag", "wrap", "drop-env"})
	if len(res.Effects) != 1 {
		t.Fatalf("want one combined modify, got %v", effectKinds(res))
	}
	m := res.Effects[0].GetModify()
	want, _ := structpb.NewStruct(map[string]any{
		"command":  "timeout 60 make deploy --dry-run",
		"original": "make deploy",
		"cwd":      "/work",
	})
	if !proto.Equal(m.GetValue().GetStructValue(), want) {
		t.Errorf("final input = %v, want %v", m.GetValue().GetStructValue().AsMap(), want.AsMap())
	}
	if m.GetTarget() != ahpv1.ModifyTarget_MODIFY_TARGET_INPUT || m.GetOperation() != ahpv1.ModifyOperation_MODIFY_OPERATION_REPLACE {
		t.Errorf("target, operation = %v, %v", m.GetTarget(), m.GetOperation())
	}
	if res.Effects[0].GetRuleId() != "add-flag" || m.GetReason() != "dry run first; pinned cwd" {
		t.Errorf("rule id %q, reason %q", res.Effects[0].GetRuleId(), m.GetReason())
	}
	if in.Event.GetTool().GetInput().AsMap()["command"] != "make deploy" {
		t.Error("the event's input was changed in place")
	}
}

func TestMessagesAccompanyTheWinnerInRuleOrder(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: note-1
    effect: {message: {text: first}}
  - id: deny
    effect: {deny: {reason: no}}
  - id: note-2
    effect: {message: {text_expr: '"second: " + tool.name'}}
  - id: silent
    effect: {message: {text_expr: '""'}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	wantStrings(t, "effects", effectKinds(res), []string{"message", "deny", "message"})
	wantStrings(t, "messages", res.Messages, []string{"first", "second: Bash"})
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"note-1", "deny", "note-2", "silent"})
}

func TestReasonExprSeesTheEvent(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: deny
    effect: {deny: {reason_expr: '"no " + tool.name + " in " + session.id'}}
`)
	res := p.Evaluate(shell(t, "ls"))
	if got := res.Effects[0].GetDeny().GetReason(); got != "no Bash in sess-1" {
		t.Errorf("reason = %q", got)
	}
}

func TestMatchFiltersWithGlobs(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: github-mcp
    match: {tool_names: ["mcp__github__*"]}
    effect: {message: {text: m}}
  - id: exact-bash
    match: {tool_names: [Bash]}
    effect: {message: {text: m}}
  - id: from-harness
    match: {sources: ["https://harness.example/*"]}
    effect: {message: {text: m}}
  - id: other-source
    match: {sources: ["https://other.example/*"]}
    effect: {message: {text: m}}
  - id: sess-glob
    match: {sessions: ["sess-?"]}
    effect: {message: {text: m}}
  - id: agent-1
    match: {agents: [agent-1, agent-2]}
    effect: {message: {text: m}}
  - id: shell-kind
    match: {tool_kinds: [shell, file_write]}
    effect: {message: {text: m}}
  - id: all-and
    match: {tool_kinds: [shell], tool_names: ["mcp__*"]}
    effect: {message: {text: m}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"exact-bash", "from-harness", "sess-glob", "agent-1", "shell-kind"})

	res = p.Evaluate(toolBefore(t, "mcp__github__create_issue", ahpv1.ToolKind_TOOL_KIND_MCP, nil))
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"github-mcp", "from-harness", "sess-glob", "agent-1"})

	// Globs are case-sensitive, and `*` does not cross `/`.
	in := toolBefore(t, "bash", ahpv1.ToolKind_TOOL_KIND_OTHER, nil)
	in.Event.Source = "https://harness.example/a/b"
	res = p.Evaluate(in)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"sess-glob", "agent-1"})
}

func TestAgentMatchFallsBackToHarnessEnvelopeAndSessionMemory(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: a
    match: {agents: [worker]}
    effect: {deny: {reason: x}}
`)
	in := shell(t, "ls")
	in.Event.Session.Agent = nil
	in.Event.Harness = &ahpv1.HarnessEnvelope{AgentId: "worker"}
	wantVerdict(t, p.Evaluate(in), ahpv1.Verdict_VERDICT_DENY)
	in.Event.Harness = nil
	in.Session.AgentID = "worker"
	wantVerdict(t, p.Evaluate(in), ahpv1.Verdict_VERDICT_DENY)
}

func TestOnWithHarnessNamesMatchesCanonicalEvents(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: pre-action
    on: [pre_action]
    effect: {deny: {reason: x}}
  - id: post-action
    on: [post_action]
    effect: {message: {text: seen}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"pre-action"})
	in := shell(t, "ls")
	in.Event.Type = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	res = p.Evaluate(in)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"post-action"})
}

func TestRuntimeErrorIsolatedToRule(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: careless
    when: input.missing.startsWith("x")
    effect: {deny: {reason: careless}}
  - id: careful
    when: has(input.missing) && input.missing.startsWith("x")
    effect: {deny: {reason: careful}}
  - id: bad-reason
    effect: {ask: {reason_expr: 'input.nope'}}
  - id: works
    when: input.command == "ls"
    effect: {defer: {retry_after_ms: 1}}
`)
	res := p.Evaluate(shell(t, "ls"))
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DEFER)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"works"})
	if len(res.Errors) != 2 {
		t.Fatalf("errors = %v, want two", res.Errors)
	}
	if res.Errors[0].RuleID != "careless" || !strings.Contains(res.Errors[0].Error(), `rule "careless": when: no such key: missing`) {
		t.Errorf("error 0 = %v", res.Errors[0])
	}
	if res.Errors[1].RuleID != "bad-reason" || !strings.Contains(res.Errors[1].Error(), "reason_expr") {
		t.Errorf("error 1 = %v", res.Errors[1])
	}
}

func TestNilEventIsReportedNotPanicked(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "version: 1\nrules:\n  - id: a\n    effect: {deny: {reason: x}}\n")
	res := p.Evaluate(policy.Input{})
	if len(res.Errors) != 1 || res.Errors[0].RuleID != "" || res.Effects != nil {
		t.Errorf("result = %+v, want one evaluation error and no effects", res)
	}
}

func TestTypedAnswerFirstEnforceMatchWins(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: trial
    on: [idle]
    mode: dry-run
    effect: {typed: {action: defer, reason: trying}}
  - id: busy
    on: [idle]
    when: session.run_status == "executing"
    effect: {typed: {action: defer, reason: run in progress, hints: [wait]}}
  - id: otherwise
    on: [idle]
    effect: {typed: {action: allow}}
  - id: block-all
    on: [idle]
    effect: {deny: {reason: no idle work today}}
`)
	in := policy.Input{
		Event:   &ahpv1.Event{Id: "i", Type: ahpv1.EventType_EVENT_TYPE_IDLE, Body: &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{IdleDurationMs: 9000}}},
		Session: &policy.SessionView{RunStatus: "executing"},
		Now:     testNow,
	}
	res := p.Evaluate(in)
	if res.Typed == nil || res.Typed.RuleID != "busy" || res.Typed.Action != "defer" || res.Typed.Reason != "run in progress" {
		t.Fatalf("typed = %+v, want the busy rule's defer", res.Typed)
	}
	if len(res.TypedDryRuns) != 1 || res.TypedDryRuns[0].RuleID != "trial" {
		t.Errorf("typed dry runs = %+v", res.TypedDryRuns)
	}
	// Generic effects apply to typed events too; the typed deciders turn deny into block etc.
	wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
	wantStrings(t, "matched", res.MatchedRuleIDs, []string{"trial", "busy", "otherwise", "block-all"})

	// The answer is a copy: changing it does not change the policy.
	res.Typed.Hints[0] = "changed"
	if again := p.Evaluate(in); again.Typed.Hints[0] != "wait" {
		t.Error("typed answer shares memory with the policy")
	}
}

func TestEvaluateIsDeterministicAndSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	p := policy.Default()
	in := shell(t, "rm -rf /")
	done := make(chan policy.Result)
	for range 8 {
		go func() { done <- p.Evaluate(in) }()
	}
	for range 8 {
		res := <-done
		wantVerdict(t, res, ahpv1.Verdict_VERDICT_DENY)
		wantStrings(t, "matched", res.MatchedRuleIDs, []string{"deny-rm-rf-root"})
	}
}

func TestZeroNowMeansWallClock(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: recent
    when: now > timestamp("2024-01-01T00:00:00Z")
    effect: {deny: {reason: x}}
`)
	in := shell(t, "ls")
	in.Now = time.Time{}
	wantVerdict(t, p.Evaluate(in), ahpv1.Verdict_VERDICT_DENY)
}

func TestDryRunRuleErrorsAreMarked(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: trial
    mode: dry-run
    when: input.nope == 1
    effect: {deny: {reason: x}}
  - id: real
    when: input.nope == 1
    effect: {deny: {reason: x}}
`)
	res := p.Evaluate(shell(t, "ls"))
	if len(res.Errors) != 2 || !res.Errors[0].DryRun || res.Errors[1].DryRun {
		t.Errorf("errors = %+v, want the dry-run rule's error marked", res.Errors)
	}
}
