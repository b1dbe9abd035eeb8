package metrics_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/metrics"
)

// The core records each evaluated decision; /metrics shows it.
func Example() {
	m := metrics.New(metrics.Options{NoRuntimeMetrics: true})
	m.SetPolicy("default", "sha256:0f1e", []string{"deny-rm"})
	m.ObserveDecision(&ahpv1.Decision{
		Verdict:        ahpv1.Verdict_VERDICT_DENY,
		Effects:        []*ahpv1.Effect{{RuleId: "deny-rm", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no rm"}}}},
		MatchedRuleIds: []string{"deny-rm"},
	}, 18*time.Microsecond)

	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.SplitSeq(w.Body.String(), "\n") {
		if strings.HasPrefix(line, "ahp_") && strings.HasSuffix(line, " 1") && !strings.Contains(line, "_bucket") {
			fmt.Println(line)
		}
	}
	// Output:
	// ahp_build_info{version=""} 1
	// ahp_decision_duration_seconds_count 1
	// ahp_decision_effects_total{effect="deny"} 1
	// ahp_decisions_total{synthetic="false",verdict="deny"} 1
	// ahp_policy_info{digest="sha256:0f1e",name="default"} 1
	// ahp_policy_last_reload_success 1
	// ahp_policy_rules 1
	// ahp_rule_matches_total{mode="enforce",rule="deny-rm"} 1
}
