package typed_test

import (
	"fmt"
	"slices"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// memoryFacts mixes one fact about the auth bug with related and unrelated ones.
func memoryFacts() []*ahpv1.Fact {
	return []*ahpv1.Fact{
		fact("the build uses go 1.26", 0.9),
		fact("auth config lives in config/auth.yaml", 0.9),
		fact("fixed the auth bug in login.go by checking token expiry", 0.6),
		fact("a bug in the parser crashes on empty input", 0.9),
		fact("AuthHandler validates bearer tokens", 0.9),
		fact("deploys go through the staging cluster", 0.9),
	}
}

func TestRankQuality(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		first string
		none  []string // facts that must not match at all
	}{
		{"previous auth bug", "fixed the auth bug in login.go by checking token expiry",
			[]string{"the build uses go 1.26", "deploys go through the staging cluster"}},
		{"What did we fix in LOGIN.GO?", "fixed the auth bug in login.go by checking token expiry", nil},
		{"how are tokens validated", "AuthHandler validates bearer tokens", nil},
		{"authentication handler", "AuthHandler validates bearer tokens", nil},
		{"parser crashes", "a bug in the parser crashes on empty input", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			ms := typed.Rank(tt.query, memoryFacts())
			if len(ms) == 0 {
				t.Fatal("no match")
			}
			equal(t, ms[0].Fact.GetContent(), tt.first, "best match")
			for i, m := range ms {
				if m.Score <= 0 || m.Score > 1 {
					t.Errorf("score %v outside (0, 1]", m.Score)
				}
				if i > 0 && m.Score > ms[i-1].Score {
					t.Errorf("not sorted: %v after %v", m.Score, ms[i-1].Score)
				}
				if slices.Contains(tt.none, m.Fact.GetContent()) {
					t.Errorf("unrelated fact matched: %q", m.Fact.GetContent())
				}
			}
		})
	}
}

func TestRankDetails(t *testing.T) {
	t.Parallel()
	t.Run("a fact with every query term scores 1", func(t *testing.T) {
		t.Parallel()
		ms := typed.Rank("auth bug", memoryFacts())
		equal(t, ms[0].Score, 1.0, "score")
	})
	t.Run("rare terms weigh more than common ones", func(t *testing.T) {
		t.Parallel()
		facts := []*ahpv1.Fact{fact("auth one", 1), fact("auth two", 1), fact("auth three", 1), fact("parser", 1)}
		ms := typed.Rank("auth parser", facts)
		equal(t, ms[0].Fact.GetContent(), "parser", "rare term first")
	})
	t.Run("prefix matches earn less than exact ones", func(t *testing.T) {
		t.Parallel()
		facts := []*ahpv1.Fact{fact("authentication flow", 1), fact("auth flow", 1)}
		ms := typed.Rank("auth", facts)
		equal(t, ms[0].Fact.GetContent(), "auth flow", "exact first")
		if ms[1].Score >= ms[0].Score {
			t.Errorf("prefix %v >= exact %v", ms[1].Score, ms[0].Score)
		}
	})
	t.Run("short words do not prefix-match", func(t *testing.T) {
		t.Parallel()
		equal(t, len(typed.Rank("go", []*ahpv1.Fact{fact("golang", 1)})), 0, "matches")
	})
	t.Run("ties go to confidence, then recency", func(t *testing.T) {
		t.Parallel()
		facts := []*ahpv1.Fact{fact("cache a", 0.5), fact("cache b", 0.9), fact("cache c", 0.9)}
		ms := typed.Rank("cache", facts)
		got := []int{ms[0].Index, ms[1].Index, ms[2].Index}
		if !slices.Equal(got, []int{1, 2, 0}) {
			t.Errorf("order = %v, want [1 2 0]", got)
		}
	})
	t.Run("stop words alone match nothing", func(t *testing.T) {
		t.Parallel()
		equal(t, len(typed.Rank("what is the", memoryFacts())), 0, "matches")
		equal(t, len(typed.Rank("", memoryFacts())), 0, "matches")
		equal(t, len(typed.Rank("auth", nil)), 0, "matches")
	})
	t.Run("plural and inflected forms meet", func(t *testing.T) {
		t.Parallel()
		equal(t, len(typed.Rank("failing tests", []*ahpv1.Fact{fact("the test failed twice", 1)})), 1, "matches")
	})
}

func TestMemoryRecall(t *testing.T) {
	t.Parallel()
	view := &policy.SessionView{
		Facts: memoryFacts(),
		AgentFacts: []*ahpv1.Fact{
			{Content: "auth bug reports go to the security team", Source: "agent", Confidence: 0.5},
			{Content: "The build uses Go 1.26 ", Source: "agent", Confidence: 0.2},
		},
	}
	t.Run("ranked, scored and counted", func(t *testing.T) {
		t.Parallel()
		d := decide(t, memoryEvent("previous auth bug", 5), policy.Result{}, view, policy.Settings{})
		a := d.GetMemoryRecall().GetAllow()
		got := factContents(a.GetInjectedFacts())
		if len(got) != 5 || got[0] != "fixed the auth bug in login.go by checking token expiry" {
			t.Fatalf("facts = %q", got)
		}
		if got[1] != "auth bug reports go to the security team" {
			t.Errorf("agent fact with both terms not second: %q", got)
		}
		equal(t, a.GetInjectedFacts()[0].GetConfidence(), float32(1), "best confidence")
		equal(t, a.GetInjectedFacts()[0].GetSource(), "session", "source kept")
		equal(t, a.GetMetadata().GetFields()[typed.HitsKey].GetNumberValue(), 5.0, "hits")
		equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_ALLOW, "verdict")
		equal(t, view.Facts[2].GetConfidence(), float32(0.6), "view fact untouched")
	})
	t.Run("max_results caps", func(t *testing.T) {
		t.Parallel()
		d := decide(t, memoryEvent("auth", 2), policy.Result{}, view, policy.Settings{})
		equal(t, len(d.GetMemoryRecall().GetAllow().GetInjectedFacts()), 2, "facts")
	})
	t.Run("the setting caps a larger request", func(t *testing.T) {
		t.Parallel()
		d := decide(t, memoryEvent("auth", 100), policy.Result{}, view, policy.Settings{Memory: policy.MemorySettings{MaxResults: 1}})
		equal(t, len(d.GetMemoryRecall().GetAllow().GetInjectedFacts()), 1, "facts")
	})
	t.Run("the default cap is 20 and max_results 0 means no cap of its own", func(t *testing.T) {
		t.Parallel()
		many := make([]*ahpv1.Fact, 50)
		for i := range many {
			many[i] = fact(fmt.Sprintf("auth fact %d", i), 0.5)
		}
		d := decide(t, memoryEvent("auth", 0), policy.Result{}, &policy.SessionView{Facts: many}, policy.Settings{})
		equal(t, len(d.GetMemoryRecall().GetAllow().GetInjectedFacts()), 20, "facts")
	})
	t.Run("a fact known to session and agent counts once", func(t *testing.T) {
		t.Parallel()
		d := decide(t, memoryEvent("build", 10), policy.Result{}, view, policy.Settings{})
		fs := d.GetMemoryRecall().GetAllow().GetInjectedFacts()
		equal(t, len(fs), 1, "facts")
		equal(t, fs[0].GetSource(), "session", "the session's copy")
	})
	t.Run("no match is an empty allow", func(t *testing.T) {
		t.Parallel()
		d := decide(t, memoryEvent("kubernetes ingress", 5), policy.Result{}, view, policy.Settings{})
		a := d.GetMemoryRecall().GetAllow()
		if a == nil || a.GetInjectedFacts() == nil || len(a.GetInjectedFacts()) != 0 {
			t.Fatalf("decision = %s", js(d))
		}
		equal(t, a.GetMetadata().GetFields()[typed.HitsKey].GetNumberValue(), 0.0, "hits")
	})
	t.Run("rule facts come first and keep the hits", func(t *testing.T) {
		t.Parallel()
		res := typedResult(policy.TypedAnswer{RuleID: "r", Facts: []string{"the auth owner is alice"}})
		d := decide(t, memoryEvent("auth bug", 2), res, view, policy.Settings{})
		a := d.GetMemoryRecall().GetAllow()
		equal(t, a.GetInjectedFacts()[0].GetContent(), "the auth owner is alice", "first")
		equal(t, a.GetInjectedFacts()[0].GetSource(), "policy", "source")
		equal(t, len(a.GetInjectedFacts()), 2, "facts")
		equal(t, a.GetMetadata().GetFields()[typed.HitsKey].GetNumberValue(), 2.0, "hits")
		equal(t, metaString(d, typed.RuleIDKey), "r", "rule id")
	})
}
