package policy

import (
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types/ref"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	boom := cel.Function("boom",
		cel.Overload("boom_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(func(ref.Val) ref.Val { panic("kaboom") })))
	p, err := parse([]byte(`version: 1
rules:
  - id: panics
    when: boom(tool.name)
    effect: {deny: {reason: x}}
  - id: after
    effect: {ask: {reason: still evaluated}}
`), "panic.yaml", boom)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Event: &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Tool: &ahpv1.Tool{Name: "Bash"}}}
	res := p.Evaluate(in)
	if len(res.Errors) != 1 || res.Errors[0].RuleID != "panics" || !strings.Contains(res.Errors[0].Error(), "kaboom") {
		t.Fatalf("errors = %v, want the panic recorded against its rule", res.Errors)
	}
	if res.Verdict != ahpv1.Verdict_VERDICT_ASK {
		t.Errorf("verdict = %v: the other rule should still decide", res.Verdict)
	}
	// The next call is unaffected.
	if again := p.Evaluate(in); len(again.Errors) != 1 || again.Verdict != ahpv1.Verdict_VERDICT_ASK {
		t.Errorf("second call = %+v", again)
	}
}

func TestPanicOutsideRulesGivesAnEvaluationError(t *testing.T) {
	t.Parallel()
	// A nil policy dereferences inside Evaluate; the panic must become this call's error.
	var p *Policy
	res := p.Evaluate(Input{Event: &ahpv1.Event{Id: "e"}})
	if len(res.Errors) != 1 || res.Errors[0].RuleID != "" || !strings.Contains(res.Errors[0].Error(), "internal error") {
		t.Errorf("result = %+v", res)
	}
	if res.Effects != nil || res.Verdict != ahpv1.Verdict_VERDICT_ALLOW {
		t.Errorf("result = %+v, want no effects", res)
	}
}
