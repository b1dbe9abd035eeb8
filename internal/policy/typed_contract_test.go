package policy_test

import (
	"fmt"
	"slices"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// TestTypedActionsAgreeWithTypedDeciders checks that the policy compiler accepts exactly the
// typed actions the typed deciders can apply, so a rule never loads only to be ignored.
func TestTypedActionsAgreeWithTypedDeciders(t *testing.T) {
	t.Parallel()
	all := []string{"allow", "block", "defer", "refine", "modify", "retry", "queue", "skip", "approve", "reject", "escalate"}
	for _, et := range []ahpv1.EventType{
		ahpv1.EventType_EVENT_TYPE_IDLE, ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION,
		ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL,
		ahpv1.EventType_EVENT_TYPE_PLANNING, ahpv1.EventType_EVENT_TYPE_REASONING,
		ahpv1.EventType_EVENT_TYPE_RATE_LIMIT, ahpv1.EventType_EVENT_TYPE_CONFIRMATION,
	} {
		name := names.EventTypeName(et)
		accepted := typed.Actions(et)
		for _, action := range all {
			src := fmt.Sprintf("version: 1\nrules:\n  - id: r\n    on: [%s]\n    effect: {typed: {action: %s}}\n", name, action)
			_, err := policy.Parse([]byte(src), "contract.yaml")
			if want := slices.Contains(accepted, action); (err == nil) != want {
				t.Errorf("%s/%s: Parse error %v, typed deciders accept it: %v", name, action, err, want)
			}
		}
	}
}

func TestTypedAnswerWithoutActionCarriesFields(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `version: 1
rules:
  - id: hints
    on: [reasoning]
    effect: {typed: {hints: [check the tests first]}}
`)
	res := p.Evaluate(policy.Input{Event: &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_REASONING,
		Body: &ahpv1.Event_Reasoning{Reasoning: &ahpv1.ReasoningPayload{ProblemStatement: "p"}}}})
	if res.Typed == nil || res.Typed.Action != "" || len(res.Typed.Hints) != 1 {
		t.Errorf("typed = %+v", res.Typed)
	}
}
