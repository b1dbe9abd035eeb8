package typed_test

import (
	"slices"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

var (
	none         = known(ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_NONE)
	stepByStep   = known(ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP)
	treeThoughts = known(ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_TREE_OF_THOUGHTS)
	graph        = known(ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_GRAPH_PLANNING)
	mcts         = custom("mcts")
)

func TestPlanningSelectsStrategy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		offered   []*ahpv1.PlanningStrategy
		preferred []string
		answer    *policy.TypedAnswer
		want      *ahpv1.PlanningStrategy
		note      string
	}{
		{name: "reference example: step_by_step among four", offered: []*ahpv1.PlanningStrategy{none, stepByStep, treeThoughts, mcts}, want: stepByStep},
		{name: "first offered when no preference is offered", offered: []*ahpv1.PlanningStrategy{graph, treeThoughts}, want: graph},
		{name: "none when nothing is offered", want: none},
		{name: "preference order", offered: []*ahpv1.PlanningStrategy{stepByStep, treeThoughts, mcts},
			preferred: []string{"graph_planning", "mcts", "tree_of_thoughts"}, want: mcts},
		{name: "a custom name does not match a built-in", offered: []*ahpv1.PlanningStrategy{custom("step_by_step_v2"), treeThoughts},
			preferred: []string{"step_by_step"}, want: custom("step_by_step_v2")},
		{name: "preferred none is always available", offered: []*ahpv1.PlanningStrategy{treeThoughts},
			preferred: []string{"none"}, want: none},
		{name: "rule strategy that is offered", offered: []*ahpv1.PlanningStrategy{stepByStep, treeThoughts},
			answer: &policy.TypedAnswer{RuleID: "r", Strategy: "tree_of_thoughts"}, want: treeThoughts},
		{name: "rule strategy that is not offered falls back", offered: []*ahpv1.PlanningStrategy{stepByStep, treeThoughts},
			answer: &policy.TypedAnswer{RuleID: "r", Action: "allow", Strategy: "graph_planning"}, want: stepByStep,
			note: `strategy "graph_planning" of rule r is not offered`},
		{name: "rule modify without a task falls back", offered: []*ahpv1.PlanningStrategy{stepByStep},
			answer: &policy.TypedAnswer{RuleID: "r", Action: "modify"}, want: stepByStep,
			note: "ignored modify of rule r: it names no task"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := resultOf(tt.answer)
			s := policy.Settings{Planning: policy.PlanningSettings{Preferred: tt.preferred}}
			d := decide(t, planningEvent("fix failing tests", tt.offered...), res, nil, s)
			protoEqual(t, d.GetPlanning().GetAllow().GetSelectedStrategy(), tt.want, "selected_strategy")
			equal(t, metaString(d, typed.NoteKey), tt.note, "note")
		})
	}
}

func TestPlanningTemplate(t *testing.T) {
	t.Parallel()
	steps := func(d *ahpv1.Decision) []string {
		var out []string
		for _, v := range d.GetPlanning().GetAllow().GetPlanningTemplate().GetStructValue().GetFields()["steps"].GetListValue().GetValues() {
			out = append(out, v.GetStringValue())
		}
		return out
	}
	d := decide(t, planningEvent("add a config flag", stepByStep), policy.Result{}, nil, policy.Settings{})
	if got := steps(d); !slices.Equal(got, []string{"understand", "plan", "implement", "verify"}) {
		t.Errorf("steps = %q", got)
	}
	d = decide(t, planningEvent("Fix the failing tests", stepByStep), policy.Result{}, nil, policy.Settings{})
	if got := steps(d); !slices.Equal(got, []string{"reproduce", "find the cause", "fix", "verify"}) {
		t.Errorf("steps for a repair = %q", got)
	}
	d = decide(t, planningEvent("fix", treeThoughts), policy.Result{}, nil, policy.Settings{})
	equal(t, d.GetPlanning().GetAllow().GetPlanningTemplate() == nil, true, "no template for tree_of_thoughts")
	equal(t, d.GetPlanning().GetAllow().GetMetadata() == nil, true, "no metadata for a built-in answer")
}

func TestPlanningRuleAnswers(t *testing.T) {
	t.Parallel()
	t.Run("modify", func(t *testing.T) {
		t.Parallel()
		d := decide(t, planningEvent("t", stepByStep), typedResult(policy.TypedAnswer{RuleID: "r", Action: "modify", Task: "t2"}), nil, policy.Settings{})
		m := d.GetPlanning().GetModify()
		equal(t, m.GetModifiedTask(), "t2", "modified_task")
		equal(t, m.GetHints() == nil, true, "hints unset")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_MODIFY, "verdict")
	})
	t.Run("block with a reason", func(t *testing.T) {
		t.Parallel()
		d := decide(t, planningEvent("t"), typedResult(policy.TypedAnswer{RuleID: "r", Action: "block", Reason: "plans need review"}), nil, policy.Settings{})
		b := d.GetPlanning().GetBlock()
		equal(t, b.GetReason(), "plans need review", "reason")
		equal(t, b.GetMetadata().GetFields()[typed.RuleIDKey].GetStringValue(), "r", "rule id")
	})
	t.Run("the event is not aliased", func(t *testing.T) {
		t.Parallel()
		ev := planningEvent("t", custom("mcts"))
		d := decide(t, ev, policy.Result{}, nil, policy.Settings{})
		d.GetPlanning().GetAllow().GetSelectedStrategy().Strategy = &ahpv1.PlanningStrategy_Custom{Custom: "changed"}
		equal(t, ev.GetPlanning().GetAvailableStrategies()[0].GetCustom(), "mcts", "offered strategy")
	})
	t.Run("allow attributes the rule", func(t *testing.T) {
		t.Parallel()
		d := decide(t, planningEvent("t", stepByStep), typedResult(policy.TypedAnswer{RuleID: "r", Action: "allow"}), nil, policy.Settings{})
		equal(t, metaString(d, typed.RuleIDKey), "r", "rule id")
		if !strings.Contains(js(d.GetPlanning().GetAllow().GetSelectedStrategy()), "STEP_BY_STEP") {
			t.Errorf("selected = %s", js(d))
		}
	})
}
