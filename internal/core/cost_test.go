package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/types/known/structpb"
)

// quadratic compares every item with every other: 144 million steps for 12,000 items.
const quadratic = `'has(input.items) && input.items.exists(x, input.items.exists(y, x == y + 1000000.0))'`

// itemsEvent is a shell call whose input carries n numbers.
func itemsEvent(id string, n int) *ahpv1.Event {
	ev := testkit.ShellEvent(id, "ls")
	items := make([]*structpb.Value, n)
	for i := range items {
		items[i] = structpb.NewNumberValue(float64(i))
	}
	ev.Tool.Input.Fields["items"] = structpb.NewListValue(&structpb.ListValue{Values: items})
	return ev
}

func quadraticCore(t *testing.T, settings string) *core.Core {
	t.Helper()
	p, err := policy.Parse([]byte("version: 1\nname: quadratic\n"+settings+`rules:
  - id: quadratic
    on: [tool.before]
    when: `+quadratic+`
    effect: {deny: {reason: "never matches"}}
`), "quadratic")
	if err != nil {
		t.Fatal(err)
	}
	return core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard()})
}

func TestRuleOverTheCostLimitFailsClosed(t *testing.T) {
	t.Parallel()
	c := quadraticCore(t, "")
	d, err := c.Intercept(context.Background(), itemsEvent("e", 12_000), nil)
	if err != nil {
		t.Fatal(err)
	}
	reason := syntheticDeny(t, d).GetReason()
	if want := `policy rule "quadratic" could not be evaluated (CEL cost limit exceeded); failing closed`; reason != want {
		t.Fatalf("reason %q, want %q", reason, want)
	}
}

func TestRuleCutOffAtTheDeadlineFailsClosed(t *testing.T) {
	t.Parallel()
	// No cost limit to speak of: only the request's deadline stops the rule.
	c := quadraticCore(t, "settings: {cel: {cost_limit: 18000000000000000000}}\n")
	ev := itemsEvent("e", 12_000)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	d, err := c.Intercept(ctx, ev, nil)
	if err != nil {
		t.Fatal(err)
	}
	reason := syntheticDeny(t, d).GetReason()
	if !strings.Contains(reason, `policy rule "quadratic" could not be evaluated (cut off at the request deadline)`) {
		t.Fatalf("reason %q does not say the rule was cut off at the deadline", reason)
	}
}
