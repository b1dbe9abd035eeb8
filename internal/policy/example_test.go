package policy_test

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func ExampleParse() {
	p, err := policy.Parse([]byte(`
version: 1
name: example
rules:
  - id: ask-force-push
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.matches(r"git push (-f|--force)")'
    effect:
      ask: {reason: Force-pushing rewrites shared history.}
`), "example.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	input, _ := structpb.NewStruct(map[string]any{"command": "git push --force origin main"})
	ev := &ahpv1.Event{
		Id:   "evt-1",
		Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		Tool: &ahpv1.Tool{Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input},
	}

	// A caller that can ask (nil capabilities: every effect) is asked.
	res := p.Evaluate(policy.Input{Event: ev})
	fmt.Println(res.Verdict, res.MatchedRuleIDs)

	// An Agent Hooks Protocol v0.1 caller only understands deny, so it gets the rule's fallback.
	res = p.Evaluate(policy.Input{Event: ev, Capabilities: &ahpv1.Capabilities{
		Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY},
	}})
	fmt.Println(res.Verdict, res.Effects[0].GetDeny().GetReason())
	// Output:
	// VERDICT_ASK [ask-force-push]
	// VERDICT_DENY approval required: Force-pushing rewrites shared history. (ask is not supported by this caller)
}

func ExamplePolicy_RunTests() {
	suite, err := policy.ParseTests([]byte(`
cases:
  - name: rm -rf / is denied
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "rm -rf /"}}}
    expect: {verdict: deny, rule_ids: [deny-rm-rf-root]}
  - name: a Harness pre_action for a harmless command is allowed
    event: {type: pre_action, tool: {name: bash, kind: shell, input: {command: "ls -la"}}}
    expect: {verdict: allow, effects: []}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	report := policy.Default().RunTests(suite)
	for _, c := range report.Cases {
		fmt.Println(c.Passed(), c.Name)
	}
	fmt.Println("failed:", report.Failed())
	// Output:
	// true rm -rf / is denied
	// true a Harness pre_action for a harmless command is allowed
	// failed: false
}

func ExampleTestReport_WriteTo() {
	p, _ := policy.Parse([]byte("version: 1\nname: tiny\nrules:\n  - id: no-rm\n    when: 'input.?command.orValue(\"\").startsWith(\"rm \")'\n    effect: {deny: {reason: no}}\n"), "tiny.yaml")
	suite, _ := policy.ParseTests([]byte(`
cases:
  - name: wrong expectation
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "rm x"}}}
    expect: {verdict: allow, rule_ids: []}
`))
	report := p.RunTests(suite)
	report.Digest = "sha256:…" // keep the example output stable
	_, _ = report.WriteTo(os.Stdout)
	// Output:
	// FAIL  wrong expectation
	//         verdict: got deny, want allow
	//         rule_ids: got [no-rm], want []
	// FAILED: policy tiny (sha256:…): 1 cases, 0 passed, 1 failed
}
