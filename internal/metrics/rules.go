package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// RuleMatches are one rule's counts from ahp_rule_matches_total since the process started.
type RuleMatches struct {
	// Enforce counts matches of the rule in enforce mode; DryRun counts matches of it as a dry-run
	// rule (what it would have done).
	Enforce, DryRun uint64
	// Counted is false when the rule has no series of its own (past MaxRuleLabels): its matches
	// are counted under OtherRule.
	Counted bool
}

// RuleMatchCounts reads the match counts of the given rules, for the console's policy page. It
// takes no lock on the decision path: the counters are read as a scrape reads them.
func (m *Metrics) RuleMatchCounts(ids []string) map[string]RuleMatches {
	out := make(map[string]RuleMatches, len(ids))
	if m == nil {
		return out
	}
	rules := *m.rules.Load()
	for _, id := range ids {
		rc, ok := rules[id]
		if !ok {
			out[id] = RuleMatches{}
			continue
		}
		out[id] = RuleMatches{Enforce: counterValue(rc.enforce), DryRun: counterValue(rc.dryRun), Counted: true}
	}
	return out
}

func counterValue(c prometheus.Counter) uint64 {
	var pb dto.Metric
	if err := c.Write(&pb); err != nil {
		return 0
	}
	return uint64(pb.GetCounter().GetValue())
}
