package typed

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// memoryKind answers memory_recall: allow{injected_facts, metadata?} or block.
var memoryKind = &kind{
	name:   "memory_recall",
	refuse: setMemoryBlock,
	decide: decideMemory,
}

// HitsKey is the memory_recall metadata key holding the number of facts returned, as the
// reference example does ({"hits": 1}).
const HitsKey = "hits"

// decideMemory (a rule's block is applied by Decide): the answer is the rule's facts (source
// "policy", confidence 1) followed by the session and agent facts most relevant to the query (see
// Rank), each with its relevance as confidence, k in all, where k is the smaller of the payload's
// max_results and Settings.Memory.MaxResults (default 20); max_results 0 means "no limit of its
// own". A fact known both to the session and to the agent counts once. Nothing relevant is an
// allow with no facts.
func decideMemory(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	p := in.ev.GetMemoryRecall()
	k := in.s.Memory.MaxResults
	if m := p.GetMaxResults(); m > 0 && m < uint64(k) {
		k = int(m)
	}
	facts := make([]*ahpv1.Fact, 0, k)
	var tr trace
	if ta != nil {
		for _, f := range appendUnique(nil, ta.Facts...) {
			if len(facts) < k {
				facts = append(facts, &ahpv1.Fact{Content: f, Source: policySource, Confidence: 1})
			}
		}
		if ta.Action == "allow" || len(ta.Facts) > 0 {
			tr.ruleID = ta.RuleID
		}
	}
	for _, m := range Rank(p.GetQuery(), recallCandidates(in.view)) {
		if len(facts) >= k {
			break
		}
		f := proto.CloneOf(m.Fact)
		f.Confidence = float32(m.Score)
		facts = append(facts, f)
	}
	setMemory(d, &ahpv1.MemoryRecallDecision{
		Decision: &ahpv1.MemoryRecallDecision_Allow_{Allow: &ahpv1.MemoryRecallDecision_Allow{
			InjectedFacts: facts,
			Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
				HitsKey: structpb.NewNumberValue(float64(len(facts))),
			}},
		}},
	})
	return tr
}

// recallCandidates are the session's facts then the agent's, each distinct content once (the
// session's copy wins, being the more specific).
func recallCandidates(v *policy.SessionView) []*ahpv1.Fact {
	out := make([]*ahpv1.Fact, 0, len(v.Facts)+len(v.AgentFacts))
	seen := make(map[string]struct{}, len(v.Facts)+len(v.AgentFacts))
	for _, list := range [][]*ahpv1.Fact{v.Facts, v.AgentFacts} {
		for _, f := range list {
			key := strings.ToLower(strings.TrimSpace(f.GetContent()))
			if key == "" {
				continue
			}
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			out = append(out, f)
		}
	}
	return out
}

func setMemory(d *ahpv1.Decision, m *ahpv1.MemoryRecallDecision) {
	d.Typed = &ahpv1.Decision_MemoryRecall{MemoryRecall: m}
}

func setMemoryBlock(d *ahpv1.Decision, reason string) {
	setMemory(d, &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Block{Block: block(reason)}})
}
