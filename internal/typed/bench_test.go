package typed_test

import (
	"fmt"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// benchFacts builds n varied facts, as a long session would remember them.
func benchFacts(n int) []*ahpv1.Fact {
	subjects := []string{"auth", "parser", "build", "router", "cache", "scheduler", "billing", "search", "login", "storage"}
	events := []string{"bug fixed in", "test added for", "refactored", "benchmarked", "documented", "reviewed", "deployed"}
	facts := make([]*ahpv1.Fact, n)
	for i := range facts {
		facts[i] = &ahpv1.Fact{
			Content:    fmt.Sprintf("%s %s module internal/%s/file%d.go during task %d", events[i%len(events)], subjects[i%len(subjects)], subjects[(i/3)%len(subjects)], i, i/7),
			Source:     "session",
			Confidence: float32(i%10) / 10,
		}
	}
	return facts
}

func BenchmarkClassify(b *testing.B) {
	prompts := []string{
		"where is the auth function?",
		"can you please explain why the build of `internal/convert` fails on CI and what changed since yesterday",
		"compare parseConfig with parse_config_v2 and tell me which one handles empty input",
	}
	for _, p := range prompts {
		b.Run(fmt.Sprintf("%dchars", len(p)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				typed.Classify(p, "/repo", policy.IntentSettings{})
			}
		})
	}
	b.Run("custom keywords", func(b *testing.B) {
		s := policy.IntentSettings{Keywords: map[string][]string{"deploy": {"ship it", "roll out"}, "locate": {"wo ist"}}}
		b.ReportAllocs()
		for b.Loop() {
			typed.Classify(prompts[0], "/repo", s)
		}
	})
}

func BenchmarkRank1000Facts(b *testing.B) {
	facts := benchFacts(1000)
	b.ReportAllocs()
	for b.Loop() {
		typed.Rank("previous auth bug in the login module", facts)
	}
}

func BenchmarkDecideMemoryRecall1000Facts(b *testing.B) {
	view := &policy.SessionView{Facts: benchFacts(800), AgentFacts: benchFacts(200)}
	ev := memoryEvent("previous auth bug in the login module", 10)
	b.ReportAllocs()
	for b.Loop() {
		d := &ahpv1.Decision{}
		if err := typed.Decide(d, ev, policy.Result{}, view, policy.Settings{}, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecideRateLimit(b *testing.B) {
	ev := rateLimitEvent(1500)
	view := rateLimits(1, 2)
	b.ReportAllocs()
	for b.Loop() {
		d := &ahpv1.Decision{}
		if err := typed.Decide(d, ev, policy.Result{}, view, policy.Settings{}, now); err != nil {
			b.Fatal(err)
		}
	}
}
