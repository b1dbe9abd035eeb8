package metrics

import (
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/prometheus/client_golang/prometheus"
)

// ruleCounters are one rule's series: matches that applied, and dry-run matches that only
// reported what they would have done.
type ruleCounters struct {
	enforce, dryRun prometheus.Counter
}

func (m *Metrics) initDecisions(f factory) {
	verdicts := f.counterVec("ahp_decisions_total",
		"Decisions made, by verdict and by whether the system made them (fail-closed, fallback) rather than a policy rule.",
		"verdict", "synthetic")
	for i, synthetic := range []string{"false", "true"} {
		for _, v := range enumLabels(ahpv1.Verdict(0).Descriptor(), "VERDICT_") {
			if v == "" {
				m.decisions[i] = append(m.decisions[i], nil)
				continue
			}
			m.decisions[i] = append(m.decisions[i], verdicts.WithLabelValues(v, synthetic))
		}
		m.unknownVerdict[i] = verdicts.WithLabelValues("unknown", synthetic)
	}
	effects := f.counterVec("ahp_decision_effects_total",
		"Effects sent in decisions, by kind (a decision can carry several).", "effect")
	for _, e := range enumLabels(ahpv1.EffectKind(0).Descriptor(), "EFFECT_KIND_") {
		if e == "" {
			m.effects = append(m.effects, nil)
			continue
		}
		m.effects = append(m.effects, effects.WithLabelValues(e))
	}
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ahp_decision_duration_seconds",
		Help:    "Time to decide an event (policy evaluation and typed answer), in seconds with microsecond-scale buckets.",
		Buckets: LatencyBuckets,
	})
	f.reg.MustRegister(m.latency)
	m.ruleVec = f.counterVec("ahp_rule_matches_total",
		"Rule matches in decisions, by rule id and mode (enforce, or dry_run: would have applied). Rule ids beyond the label cap are counted as _other.",
		"rule", "mode")
	m.otherRule = ruleCounters{m.ruleVec.WithLabelValues(OtherRule, "enforce"), m.ruleVec.WithLabelValues(OtherRule, "dry_run")}
	empty := map[string]ruleCounters{}
	m.rules.Store(&empty)
}

// ObserveDecision records one evaluated decision: its verdict, effects, matched rules and how long
// it took. Call it for decisions actually evaluated, not for replays of remembered ones. It
// allocates nothing once the decision's rule ids have been seen.
func (m *Metrics) ObserveDecision(d *ahpv1.Decision, latency time.Duration) {
	if m == nil || d == nil {
		return
	}
	synthetic := 0
	if d.GetSynthetic() {
		synthetic = 1
	}
	if v := int(d.GetVerdict()); v >= 0 && v < len(m.decisions[synthetic]) && m.decisions[synthetic][v] != nil {
		m.decisions[synthetic][v].Inc()
	} else {
		m.unknownVerdict[synthetic].Inc()
	}
	for _, e := range d.GetEffects() {
		if c := m.effectCounter(e); c != nil {
			c.Inc()
		}
	}
	for _, id := range d.GetMatchedRuleIds() {
		rc := m.rule(id)
		if isDryRun(d, id) {
			rc.dryRun.Inc()
		} else {
			rc.enforce.Inc()
		}
	}
	m.latency.Observe(latency.Seconds())
}

func isDryRun(d *ahpv1.Decision, id string) bool {
	for _, dr := range d.GetDryRuns() {
		if dr.GetRuleId() == id {
			return true
		}
	}
	return false
}

func (m *Metrics) effectCounter(e *ahpv1.Effect) prometheus.Counter {
	k := names.EffectKindOf(e)
	if k == ahpv1.EffectKind_EFFECT_KIND_UNSPECIFIED {
		return nil
	}
	if int(k) < len(m.effects) {
		return m.effects[k]
	}
	return nil
}

// rule returns a rule's counters, creating them under the cap. The read path is one atomic load
// and a map lookup; creating copies the map, which happens at most MaxRuleLabels times.
func (m *Metrics) rule(id string) ruleCounters {
	if rc, ok := (*m.rules.Load())[id]; ok {
		return rc
	}
	m.rulesMu.Lock()
	defer m.rulesMu.Unlock()
	return m.addRuleLocked(id)
}

func (m *Metrics) addRuleLocked(id string) ruleCounters {
	cur := *m.rules.Load()
	if rc, ok := cur[id]; ok {
		return rc
	}
	if id == "" || len(cur) >= m.maxRules {
		return m.otherRule
	}
	next := make(map[string]ruleCounters, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	rc := ruleCounters{m.ruleVec.WithLabelValues(id, "enforce"), m.ruleVec.WithLabelValues(id, "dry_run")}
	next[id] = rc
	m.rules.Store(&next)
	return rc
}

// SetPolicy records the policy in force — at start-up and after every reload: its name and digest
// (ahp_policy_info), its rule count, and its rule ids, whose series are created at zero so that
// dashboards and rate() see a rule before it first matches.
func (m *Metrics) SetPolicy(name, digest string, ruleIDs []string) {
	if m == nil {
		return
	}
	m.policyMu.Lock()
	m.policyInfo.Reset()
	m.policyInfo.WithLabelValues(name, digest).Set(1)
	m.policyRules.Set(float64(len(ruleIDs)))
	m.policyMu.Unlock()

	m.rulesMu.Lock()
	defer m.rulesMu.Unlock()
	for _, id := range ruleIDs {
		m.addRuleLocked(id)
	}
}
