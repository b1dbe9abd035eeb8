package typed_test

import (
	"slices"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

func TestReasoningHints(t *testing.T) {
	t.Parallel()
	reAct := reasoningType(ahpv1.ReasoningKind_REASONING_KIND_RE_ACT)
	other := &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Other{Other: "socratic"}}
	tests := []struct {
		name   string
		rt     *ahpv1.ReasoningType
		s      []string
		answer *policy.TypedAnswer
		want   []string // nil means the hints field is unset
	}{
		{name: "built-in hint for re_act", rt: reAct,
			want: []string{"alternate a thought with one tool call, and read its result before the next thought"}},
		{name: "chain of thought", rt: reasoningType(ahpv1.ReasoningKind_REASONING_KIND_CHAIN_OF_THOUGHT),
			want: []string{"state each step and check it before the next"}},
		{name: "tree of thoughts", rt: reasoningType(ahpv1.ReasoningKind_REASONING_KIND_TREE_OF_THOUGHTS),
			want: []string{"develop at least two approaches and compare them before committing"}},
		{name: "reflexion", rt: reasoningType(ahpv1.ReasoningKind_REASONING_KIND_REFLEXION),
			want: []string{"after each attempt, write down what went wrong before retrying"}},
		{name: "other type has no built-in hint", rt: other},
		{name: "missing type has no built-in hint"},
		{name: "settings, then rule, then built-in, each once", rt: reAct,
			s:      []string{"check the lockfile first", "cite evidence"},
			answer: &policy.TypedAnswer{RuleID: "r", Hints: []string{"cite evidence", "stop after 5 tool calls"}},
			want: []string{"check the lockfile first", "cite evidence", "stop after 5 tool calls",
				"alternate a thought with one tool call, and read its result before the next thought"}},
		{name: "settings only for another type", rt: other, s: []string{"be brief"}, want: []string{"be brief"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := resultOf(tt.answer)
			d := decide(t, reasoningEvent(tt.rt), res, nil, policy.Settings{Reasoning: policy.ReasoningSettings{Hints: tt.s}})
			a := d.GetReasoning().GetAllow()
			if a == nil {
				t.Fatalf("no allow: %s", js(d))
			}
			equal(t, a.GetHints() == nil, tt.want == nil, "hints unset")
			if got := a.GetHints().GetValues(); !slices.Equal(got, tt.want) {
				t.Errorf("hints = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReasoningSettingsAreNotChanged(t *testing.T) {
	t.Parallel()
	hints := make([]string, 1, 8) // spare capacity a careless append would write into
	hints[0] = "mine"
	s := policy.Settings{Reasoning: policy.ReasoningSettings{Hints: hints}}
	d := decide(t, reasoningEvent(reasoningType(ahpv1.ReasoningKind_REASONING_KIND_RE_ACT)), policy.Result{}, nil, s)
	equal(t, len(d.GetReasoning().GetAllow().GetHints().GetValues()), 2, "hints")
	equal(t, hints[:2][1], "", "caller's backing array")
}
