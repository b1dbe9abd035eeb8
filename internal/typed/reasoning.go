package typed

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// reasoningKind answers reasoning: allow{hints?, metadata?} or block.
var reasoningKind = &kind{
	name:   "reasoning",
	refuse: setReasoningBlock,
	decide: decideReasoning,
}

// reasoningHints give one working rule per built-in reasoning type.
var reasoningHints = map[ahpv1.ReasoningKind]string{
	ahpv1.ReasoningKind_REASONING_KIND_CHAIN_OF_THOUGHT: "state each step and check it before the next",
	ahpv1.ReasoningKind_REASONING_KIND_TREE_OF_THOUGHTS: "develop at least two approaches and compare them before committing",
	ahpv1.ReasoningKind_REASONING_KIND_RE_ACT:           "alternate a thought with one tool call, and read its result before the next thought",
	ahpv1.ReasoningKind_REASONING_KIND_REFLEXION:        "after each attempt, write down what went wrong before retrying",
}

// decideReasoning (a rule's block is applied by Decide): allow with Settings.Reasoning.Hints, then
// the rule's hints, then the built-in hint for the reasoning type, each once; with no hint at all
// the hints field is left out. The agent's own hints are not echoed back.
func decideReasoning(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	hints := appendUnique(nil, in.s.Reasoning.Hints...)
	var tr trace
	if ta != nil {
		hints = appendUnique(hints, ta.Hints...)
		if ta.Action == "allow" || len(ta.Hints) > 0 {
			tr.ruleID = ta.RuleID
		}
	}
	hints = appendUnique(hints, reasoningHints[in.ev.GetReasoning().GetReasoningType().GetKnown()])
	setReasoning(d, &ahpv1.ReasoningDecision{
		Decision: &ahpv1.ReasoningDecision_Allow_{Allow: &ahpv1.ReasoningDecision_Allow{
			Hints: stringList(hints),
		}},
	})
	return tr
}

func setReasoning(d *ahpv1.Decision, r *ahpv1.ReasoningDecision) {
	d.Typed = &ahpv1.Decision_Reasoning{Reasoning: r}
}

func setReasoningBlock(d *ahpv1.Decision, reason string) {
	setReasoning(d, &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Block{Block: block(reason)}})
}
