package typed

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// planningKind answers planning: allow{selected_strategy, planning_template?, metadata?}, block or
// modify{modified_task, hints?}.
var planningKind = &kind{
	name:   "planning",
	refuse: setPlanningBlock,
	decide: decidePlanning,
}

// decidePlanning (a rule's block is applied by Decide): a rule's modify wins when it names the
// new task. A rule's strategy is selected only if the agent offered it (the agent cannot run a
// strategy it lacks); if not, the built-in choice stands and the metadata says so. Built in, the
// first strategy of Settings.Planning.Preferred (default [step_by_step]) that is offered is
// selected, else the first offered one, else none. "none" counts as always offered: any agent can
// skip planning.
func decidePlanning(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	var tr trace
	switch action(ta) {
	case "modify":
		if ta.Task != "" {
			setPlanning(d, &ahpv1.PlanningDecision{
				Decision: &ahpv1.PlanningDecision_Modify_{Modify: &ahpv1.PlanningDecision_Modify{
					ModifiedTask: ta.Task,
					Hints:        stringList(appendUnique(nil, ta.Hints...)),
				}},
			})
			return trace{ruleID: ta.RuleID}
		}
		tr.notes = append(tr.notes, fmt.Sprintf("ignored modify of rule %s: it names no task", ta.RuleID))
	}
	p := in.ev.GetPlanning()
	offered := p.GetAvailableStrategies()
	var chosen *ahpv1.PlanningStrategy
	if ta != nil && ta.Strategy != "" {
		if chosen = findStrategy(offered, ta.Strategy); chosen == nil {
			tr.notes = append(tr.notes, fmt.Sprintf("strategy %q of rule %s is not offered", ta.Strategy, ta.RuleID))
		} else {
			tr.ruleID = ta.RuleID
		}
	}
	if ta != nil && ta.Action == "allow" {
		tr.ruleID = ta.RuleID
	}
	if chosen == nil {
		chosen = selectStrategy(offered, in.s.Planning.Preferred)
	}
	setPlanning(d, &ahpv1.PlanningDecision{
		Decision: &ahpv1.PlanningDecision_Allow_{Allow: &ahpv1.PlanningDecision_Allow{
			SelectedStrategy: chosen,
			PlanningTemplate: planningTemplate(chosen, p.GetTaskDescription()),
		}},
	})
	return tr
}

// findStrategy returns a copy of the offered strategy called name (wire name or custom name).
func findStrategy(offered []*ahpv1.PlanningStrategy, name string) *ahpv1.PlanningStrategy {
	for _, s := range offered {
		if strategyName(s) == name {
			return proto.CloneOf(s)
		}
	}
	if name == "none" {
		return noStrategy()
	}
	return nil
}

// selectStrategy is the built-in choice.
func selectStrategy(offered []*ahpv1.PlanningStrategy, preferred []string) *ahpv1.PlanningStrategy {
	for _, name := range preferred {
		if s := findStrategy(offered, name); s != nil {
			return s
		}
	}
	if len(offered) > 0 {
		return proto.CloneOf(offered[0])
	}
	return noStrategy()
}

func noStrategy() *ahpv1.PlanningStrategy {
	return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Known{
		Known: ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_NONE,
	}}
}

// Step lists of the step_by_step template: one for repairs, one for everything else.
var (
	fixSteps     = []string{"reproduce", "find the cause", "fix", "verify"}
	defaultSteps = []string{"understand", "plan", "implement", "verify"}
	fixWords     = setOf("fix", "bug", "broken", "fail", "failing", "fails", "failure", "error", "crash", "regression", "repair")
)

// planningTemplate is {"steps": [...]} for step_by_step and nil (absent) for every other strategy,
// which has no shape generic enough to suggest. A task that reads as a repair ("fix failing
// tests") starts by reproducing the problem.
func planningTemplate(s *ahpv1.PlanningStrategy, task string) *structpb.Value {
	if s.GetKnown() != ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP {
		return nil
	}
	steps := defaultSteps
	for _, w := range words(nil, task, false) {
		if _, ok := fixWords[w]; ok {
			steps = fixSteps
			break
		}
	}
	list := make([]*structpb.Value, len(steps))
	for i, s := range steps {
		list[i] = structpb.NewStringValue(s)
	}
	return structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"steps": structpb.NewListValue(&structpb.ListValue{Values: list}),
	}})
}

func setPlanning(d *ahpv1.Decision, p *ahpv1.PlanningDecision) {
	d.Typed = &ahpv1.Decision_Planning{Planning: p}
}

func setPlanningBlock(d *ahpv1.Decision, reason string) {
	setPlanning(d, &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Block{Block: block(reason)}})
}
