package idempotency_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// fullEntries is how many decisions and observations the full-store benchmark keeps: the
// server's default capacity.
const fullEntries = 100_000

// decisionLike is a decision as the core remembers one: an id, a verdict, an effect with a
// reason, the matched rule and the policy that made it.
func decisionLike(i int) *ahpv1.Decision {
	return &ahpv1.Decision{
		DecisionId:     fmt.Sprintf("0194f3a2-7c1e-7%03x-8a4b-%012x", i%4096, i),
		Verdict:        ahpv1.Verdict_VERDICT_ALLOW,
		Effects:        []*ahpv1.Effect{{RuleId: "default-allow", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "blocked by policy", Code: "policy"}}}},
		MatchedRuleIds: []string{"default-allow"},
		PolicyDigest:   "sha256:4f1c2a9e0b7d3c5a8f6e1d2c3b4a5968",
		PolicyRevision: 3,
		LatencyUs:      uint64(i % 300),
	}
}

// liveHeap collects and returns the live heap's bytes and the bytes of heap the collector scans
// for pointers.
func liveHeap() (live, scan uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}
	runtime.GC()
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// BenchmarkFullStoreLiveHeap fills a store with fullEntries decisions and as many observations
// and reports what the collector must mark for it (live-B/entry: live heap after a collection,
// per decision plus observation; scan-B/entry: the part of it the collector scans for pointers)
// and how long one forced collection of that heap takes
// (gc-ns/op, wall clock: the mark of a heap with many pointers is what the tail is made
// of).
func BenchmarkFullStoreLiveHeap(b *testing.B) {
	keys := make([]string, fullEntries)
	for i := range keys {
		keys[i] = idempotency.Key(testkit.ShellEvent(fmt.Sprintf("e%d", i), "ls -la"))
	}
	for b.Loop() {
		b.StopTimer()
		base, baseScan := liveHeap()
		b.StartTimer()
		m := idempotency.NewMemory(fullEntries, time.Hour)
		for i, k := range keys {
			m.RememberDecision(k, decisionLike(i))
			m.FirstObservation(k)
		}
		b.StopTimer()
		live, scan := liveHeap()
		start := time.Now()
		runtime.GC()
		gc := time.Since(start)
		if _, ok := m.Decision(keys[len(keys)-1]); !ok {
			b.Fatal("the last decision is not remembered")
		}
		b.ReportMetric(float64(live-base)/fullEntries, "live-B/entry")
		b.ReportMetric(float64(live-base)/(1<<20), "live-MB")
		b.ReportMetric((float64(scan)-float64(baseScan))/fullEntries, "scan-B/entry")
		b.ReportMetric(float64(gc.Nanoseconds()), "gc-ns")
		runtime.KeepAlive(m)
		b.StartTimer()
	}
}
