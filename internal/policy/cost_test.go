package policy_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// itemsInput is a shell call whose input carries n numbers.
func itemsInput(tb testing.TB, n int) policy.Input {
	tb.Helper()
	items := make([]any, n)
	for i := range items {
		items[i] = float64(i)
	}
	return toolBefore(tb, "Bash", ahpv1.ToolKind_TOOL_KIND_SHELL, map[string]any{"items": items})
}

const quadraticRules = `rules:
  - id: audit-pairs
    mode: dry-run
    on: [tool.before]
    when: 'input.items.exists(x, input.items.exists(y, x == y + 1000000.0))'
    effect: {deny: {reason: r}}
  - id: quadratic
    on: [tool.before]
    when: 'input.items.exists(x, input.items.exists(y, x == y + 1000000.0))'
    effect: {deny: {reason: r}}
`

func TestCostLimitStopsAnExpensiveRule(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "version: 1\nsettings: {cel: {cost_limit: 100000}}\n"+quadraticRules)
	res := p.Evaluate(itemsInput(t, 1000)) // a million comparisons
	if len(res.Errors) != 2 {
		t.Fatalf("errors %v, want one per rule", res.Errors)
	}
	for i, id := range []string{"audit-pairs", "quadratic"} {
		e := res.Errors[i]
		if e.RuleID != id || e.DryRun != (i == 0) || !errors.Is(e, policy.ErrCostLimit) {
			t.Errorf("error %d: %+v, want rule %q stopped by the cost limit", i, e, id)
		}
	}
	// Small inputs stay under the limit.
	if res := p.Evaluate(itemsInput(t, 10)); len(res.Errors) != 0 {
		t.Fatalf("10 items: %v", res.Errors)
	}
}

func TestDefaultCostLimit(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "version: 1\n"+quadraticRules)
	if got := p.Settings().CEL.CostLimit; got != 10_000_000 {
		t.Fatalf("default cost limit %d", got)
	}
}

func TestEndedContextStopsEvaluation(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "version: 1\nsettings: {cel: {cost_limit: 18000000000000000000}}\n"+quadraticRules)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res := p.EvaluateContext(ctx, itemsInput(t, 12_000))
	if len(res.Errors) != 1 {
		t.Fatalf("errors %v, want one", res.Errors)
	}
	// The dry-run rule was cut off, and the enforce rule after it never ran: the error is not
	// a dry-run one, so a caller failing closed does.
	e := res.Errors[0]
	if e.RuleID != "audit-pairs" || e.DryRun || !errors.Is(e, policy.ErrDeadline) || !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("error %+v, want audit-pairs cut off at the deadline", e)
	}
	if len(res.Effects) != 0 || len(res.MatchedRuleIDs) != 0 {
		t.Fatalf("result carries effects: %+v", res)
	}
}

// oneRule is a policy of one deny rule with the given condition.
func oneRule(tb testing.TB, id, when string) *policy.Policy {
	tb.Helper()
	return mustParse(tb, "version: 1\nrules:\n  - id: "+id+"\n    when: '"+when+"'\n    effect: {deny: {reason: r}}\n")
}

func TestEndedContextStopsBeforeTheNextRule(t *testing.T) {
	t.Parallel()
	p := oneRule(t, "first", "true")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := p.EvaluateContext(ctx, shell(t, "ls"))
	if len(res.Errors) != 1 || res.Errors[0].RuleID != "first" || !errors.Is(res.Errors[0], context.Canceled) {
		t.Fatalf("errors %v, want rule first cancelled", res.Errors)
	}
}

func TestLoadRefusesARuleThatAlwaysCostsTooMuch(t *testing.T) {
	t.Parallel()
	msg := parseErr(t, `version: 1
settings: {cel: {cost_limit: 50}}
rules:
  - id: cheap
    when: 'has(input.command)'
    effect: {deny: {reason: r}}
  - id: costly
    when: '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, [x, x, x]).size() > 3'
    effect: {deny: {reason: r}}
`)
	if want := `line 7: rule "costly": when: costs at least`; !strings.Contains(msg, want) || !strings.Contains(msg, "above the cost limit 50") {
		t.Fatalf("error %q, want %q ... above the cost limit 50", msg, want)
	}
	if strings.Contains(msg, "cheap") {
		t.Fatalf("error %q names the cheap rule", msg)
	}
}

func TestCostLimitStopsANestedMap(t *testing.T) {
	t.Parallel()
	// 1500 numbers are about 14 KB of JSON; the pairs would be 2.25 million lists.
	res := oneRule(t, "pairs", "input.items.map(x, input.items.map(y, [x, y])).size() > 0").Evaluate(itemsInput(t, 1500))
	if len(res.Errors) != 1 || !errors.Is(res.Errors[0], policy.ErrCostLimit) {
		t.Fatalf("errors %v, want the rule stopped by the cost limit", res.Errors)
	}
}

func TestOptionalValuesHaveABoundedCost(t *testing.T) {
	t.Parallel()
	// An optional's value is part of the request, so scanning it is bounded like the field itself.
	mustParse(t, `version: 1
rules:
  - id: or-value
    when: 'input.?patch.orValue("").contains("*** Add File: .env")'
    effect: {deny: {reason: r}}
  - id: value
    when: 'input.?patch.hasValue() && input.?patch.value().matches("AKIA[0-9A-Z]{16}")'
    effect: {deny: {reason: r}}
`)
}

// TestGuardedRulesOfSmallRequestsRunUntracked: a rule whose estimate exceeds the cost limit for
// the largest requests but not for small ones runs untracked when the request is known to be
// small (RequestBytes), and is still stopped by the limit when the request is large — whether
// its size is given or unknown.
func TestGuardedRulesOfSmallRequestsRunUntracked(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
settings: {cel: {cost_limit: 20000}}
rules:
  - id: scan
    on: [tool.before]
    when: 'input.command.matches("rm +-rf") || input.command.matches("curl +-k")'
    effect: {deny: {reason: r}}
`)
	sized := func(command string, known bool) policy.Input {
		in := shell(t, command)
		if known {
			in.RequestBytes = proto.Size(in.Event)
		}
		return in
	}
	for _, known := range []bool{true, false} {
		if res := p.Evaluate(sized("rm  -rf build", known)); len(res.Errors) != 0 || res.Verdict != ahpv1.Verdict_VERDICT_DENY {
			t.Errorf("small request (size known %v): %+v", known, res)
		}
		res := p.Evaluate(sized(strings.Repeat("x", 400_000), known))
		if len(res.Errors) != 1 || !errors.Is(res.Errors[0], policy.ErrCostLimit) {
			t.Errorf("large request (size known %v): errors %v, want the cost limit", known, res.Errors)
		}
	}
}
