package policy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// fiftyRules generates a 50-rule policy shaped like a real one: shell rules with regexes, file
// rules on paths, MCP rules by tool-name glob, session-aware rules, and rules for other event
// types. With filtered=false every rule applies to tool.before with no match filter, so all 50
// conditions run (the worst case).
func fiftyRules(filtered bool) string {
	var b strings.Builder
	b.WriteString("version: 1\nname: bench\nrules:\n")
	rule := func(id, on, match, when, effect string) {
		if !filtered {
			on, match = "[tool.before]", "{}"
		}
		fmt.Fprintf(&b, "  - id: %s\n    on: %s\n    match: %s\n    when: %s\n    effect: %s\n", id, on, match, when, effect)
	}
	for i := range 10 {
		rule(fmt.Sprintf("shell-%d", i), "[tool.before]", "{tool_kinds: [shell]}",
			fmt.Sprintf(`'has(input.command) && input.command.matches(r"\\bdanger%d\\s+(-\\S+\\s+)*/")'`, i),
			"{deny: {reason: shell}}")
	}
	for i := range 10 {
		rule(fmt.Sprintf("file-%d", i), "[tool.before]", "{tool_kinds: [file_write, file_edit]}",
			fmt.Sprintf(`'has(input.file_path) && path.base(input.file_path).endsWith(".secret%d")'`, i),
			"{deny: {reason: file}}")
	}
	for i := range 10 {
		rule(fmt.Sprintf("mcp-%d", i), "[tool.before]", fmt.Sprintf(`{tool_names: ["mcp__server%d__*"]}`, i),
			`'has(input.repo) && input.repo.startsWith("prod/")'`, "{ask: {reason: mcp}}")
	}
	for i := range 10 {
		rule(fmt.Sprintf("session-%d", i), "[tool.before]", "{}",
			fmt.Sprintf(`'session.deny_count > %d && tool.kind in ["shell", "fetch"] && session.tool_call_count > 100'`, 5+i),
			"{defer: {retry_after_ms: 1000}}")
	}
	for i := range 10 {
		rule(fmt.Sprintf("other-%d", i), "[model.request.before, tool.after, session.start]", "{}",
			fmt.Sprintf(`'has(payload.prompt) && payload.prompt.contains("secret%d")'`, i),
			"{deny: {reason: other}}")
	}
	return b.String()
}

func benchEvaluate(b *testing.B, p *policy.Policy, in policy.Input) {
	b.Helper()
	b.ReportAllocs()
	res := p.Evaluate(in)
	if len(res.Errors) > 0 {
		b.Fatalf("evaluation errors: %v", res.Errors)
	}
	for b.Loop() {
		p.Evaluate(in)
	}
}

func BenchmarkEvaluate50Rules(b *testing.B) {
	p := mustParse(b, fiftyRules(true))
	in := shell(b, "npm test -- --watch=false")
	in.Session.DenyCount = 2
	benchEvaluate(b, p, in)
}

// BenchmarkEvaluate50RulesLatency reports the latency distribution (p50, p99) of single
// evaluations, which is what the decision path's budget is stated in.
func BenchmarkEvaluate50RulesLatency(b *testing.B) {
	p := mustParse(b, fiftyRules(true))
	in := shell(b, "npm test -- --watch=false")
	in.Session.DenyCount = 2
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		p.Evaluate(in)
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds()), "p99-ns")
}

func BenchmarkEvaluate50RulesAllConditionsRun(b *testing.B) {
	p := mustParse(b, fiftyRules(false))
	in := toolBefore(b, "Bash", ahpv1.ToolKind_TOOL_KIND_SHELL, map[string]any{
		"command": "npm test", "file_path": "/w/a.go", "repo": "dev/x",
	})
	in.Event.Payload = nil
	benchEvaluate(b, p, in)
}

func BenchmarkEvaluateDefault(b *testing.B) {
	benchEvaluate(b, policy.Default(), shell(b, "go test ./... && git push origin feature/x"))
}

func BenchmarkEvaluateDefaultDeny(b *testing.B) {
	benchEvaluate(b, policy.Default(), shell(b, "rm -rf /"))
}

func BenchmarkParseDefault(b *testing.B) {
	src := policy.DefaultSource()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policy.Parse(src, "default.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFiftyRulePoliciesParse(t *testing.T) {
	t.Parallel()
	for _, filtered := range []bool{true, false} {
		p := mustParse(t, fiftyRules(filtered))
		if n := len(p.Rules()); n != 50 {
			t.Errorf("%d rules", n)
		}
	}
}
