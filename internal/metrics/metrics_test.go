package metrics_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

func newMetrics(t testing.TB, opts metrics.Options) *metrics.Metrics {
	t.Helper()
	opts.NoRuntimeMetrics = true
	return metrics.New(opts)
}

// series returns the value of the series of name with exactly labels, and whether it exists.
func series(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			return metricValue(m), true
		}
	}
	return 0, false
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

func assertSeries(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := series(t, g, name, labels)
	if !ok {
		t.Errorf("%s%v: no such series", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func deny(rule string) *ahpv1.Effect {
	return &ahpv1.Effect{RuleId: rule, Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}}}
}

func TestDecisionMetrics(t *testing.T) {
	t.Parallel()
	m := newMetrics(t, metrics.Options{})
	reg := m.Registry()
	m.ObserveDecision(&ahpv1.Decision{
		Verdict:        ahpv1.Verdict_VERDICT_DENY,
		Effects:        []*ahpv1.Effect{deny("deny-rm"), {Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{}}}},
		MatchedRuleIds: []string{"deny-rm", "audit-curl"},
		DryRuns:        []*ahpv1.DryRun{{RuleId: "audit-curl", WouldBe: deny("audit-curl")}},
	}, 42*time.Microsecond)
	m.ObserveDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}, 3*time.Microsecond)
	m.ObserveDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}, 7*time.Millisecond)
	m.ObserveDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY, Synthetic: true, Effects: []*ahpv1.Effect{deny("")}}, time.Microsecond)
	m.ObserveDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict(99)}, time.Microsecond)

	assertSeries(t, reg, "ahp_decisions_total", map[string]string{"verdict": "deny", "synthetic": "false"}, 1)
	assertSeries(t, reg, "ahp_decisions_total", map[string]string{"verdict": "allow", "synthetic": "false"}, 2)
	assertSeries(t, reg, "ahp_decisions_total", map[string]string{"verdict": "deny", "synthetic": "true"}, 1)
	assertSeries(t, reg, "ahp_decisions_total", map[string]string{"verdict": "ask", "synthetic": "false"}, 0)
	assertSeries(t, reg, "ahp_decisions_total", map[string]string{"verdict": "unknown", "synthetic": "false"}, 1)
	assertSeries(t, reg, "ahp_decision_effects_total", map[string]string{"effect": "deny"}, 2)
	assertSeries(t, reg, "ahp_decision_effects_total", map[string]string{"effect": "message"}, 1)
	assertSeries(t, reg, "ahp_decision_effects_total", map[string]string{"effect": "inject"}, 0)
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": "deny-rm", "mode": "enforce"}, 1)
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": "audit-curl", "mode": "dry_run"}, 1)
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": "audit-curl", "mode": "enforce"}, 0)

	// Bucket boundaries are microsecond-scale: 3µs lands in le=5e-06, 42µs in le=5e-05.
	const want = `
# HELP ahp_decision_duration_seconds Time to decide an event (policy evaluation and typed answer), in seconds with microsecond-scale buckets.
# TYPE ahp_decision_duration_seconds histogram
ahp_decision_duration_seconds_bucket{le="5e-06"} 3
ahp_decision_duration_seconds_bucket{le="1e-05"} 3
ahp_decision_duration_seconds_bucket{le="2.5e-05"} 3
ahp_decision_duration_seconds_bucket{le="5e-05"} 4
ahp_decision_duration_seconds_bucket{le="0.0001"} 4
ahp_decision_duration_seconds_bucket{le="0.00025"} 4
ahp_decision_duration_seconds_bucket{le="0.0005"} 4
ahp_decision_duration_seconds_bucket{le="0.001"} 4
ahp_decision_duration_seconds_bucket{le="0.0025"} 4
ahp_decision_duration_seconds_bucket{le="0.005"} 4
ahp_decision_duration_seconds_bucket{le="0.01"} 5
ahp_decision_duration_seconds_bucket{le="0.025"} 5
ahp_decision_duration_seconds_bucket{le="0.05"} 5
ahp_decision_duration_seconds_bucket{le="0.1"} 5
ahp_decision_duration_seconds_bucket{le="0.25"} 5
ahp_decision_duration_seconds_bucket{le="0.5"} 5
ahp_decision_duration_seconds_bucket{le="1"} 5
ahp_decision_duration_seconds_bucket{le="+Inf"} 5
ahp_decision_duration_seconds_sum 0.007047
ahp_decision_duration_seconds_count 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ahp_decision_duration_seconds"); err != nil {
		t.Error(err)
	}
}

// TestRuleLabelsAreBounded: rule ids past the cap share one series, whatever a policy does.
func TestRuleLabelsAreBounded(t *testing.T) {
	t.Parallel()
	m := newMetrics(t, metrics.Options{MaxRuleLabels: 2})
	m.SetPolicy("p", "sha256:1", []string{"a", "b", "c"}) // c is past the cap
	for _, id := range []string{"a", "d", "e", "b", ""} {
		m.ObserveDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY, MatchedRuleIds: []string{id}}, 0)
	}
	reg := m.Registry()
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": "a", "mode": "enforce"}, 1)
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": "b", "mode": "enforce"}, 1)
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": metrics.OtherRule, "mode": "enforce"}, 3)
	if n := testutil.CollectAndCount(reg, "ahp_rule_matches_total"); n != 6 { // (a, b, _other) × 2 modes
		t.Errorf("rule series = %d, want 6", n)
	}
}

func TestPolicyMetrics(t *testing.T) {
	t.Parallel()
	m := newMetrics(t, metrics.Options{})
	reg := m.Registry()
	m.SetPolicy("base", "sha256:aaa", []string{"deny-rm", "ask-push"})
	assertSeries(t, reg, "ahp_rule_matches_total", map[string]string{"rule": "ask-push", "mode": "enforce"}, 0) // pre-created
	m.PolicyReloadFailed()
	assertSeries(t, reg, "ahp_policy_last_reload_success", nil, 0)
	m.PolicyReloaded()
	m.SetPolicy("base", "sha256:bbb", []string{"deny-rm"})
	const want = `
# HELP ahp_policy_info Always 1; labels name the policy in force and its digest.
# TYPE ahp_policy_info gauge
ahp_policy_info{digest="sha256:bbb",name="base"} 1
# HELP ahp_policy_last_reload_success 1 if the last policy reload succeeded (or none was tried), 0 if it failed.
# TYPE ahp_policy_last_reload_success gauge
ahp_policy_last_reload_success 1
# HELP ahp_policy_reload_failures_total Policy reloads that failed; the previous policy stayed in force.
# TYPE ahp_policy_reload_failures_total counter
ahp_policy_reload_failures_total 1
# HELP ahp_policy_reloads_total Policy reloads that replaced the policy in force.
# TYPE ahp_policy_reloads_total counter
ahp_policy_reloads_total 1
# HELP ahp_policy_rules Rules in the policy in force.
# TYPE ahp_policy_rules gauge
ahp_policy_rules 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ahp_policy_info", "ahp_policy_last_reload_success",
		"ahp_policy_reload_failures_total", "ahp_policy_reloads_total", "ahp_policy_rules"); err != nil {
		t.Error(err)
	}
}

func TestEventAndWatchMetrics(t *testing.T) {
	t.Parallel()
	m := newMetrics(t, metrics.Options{})
	reg := m.Registry()
	m.ObserveEvent(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)
	m.ObserveEvent(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)
	m.ObserveEvent(ahpv1.EventType_EVENT_TYPE_SESSION_END)
	m.ObserveEvent(ahpv1.EventType(9999))
	assertSeries(t, reg, "ahp_observed_events_total", map[string]string{"type": "tool.after"}, 2)
	assertSeries(t, reg, "ahp_observed_events_total", map[string]string{"type": "session.end"}, 1)
	assertSeries(t, reg, "ahp_observed_events_total", map[string]string{"type": "heartbeat"}, 0)
	assertSeries(t, reg, "ahp_observed_events_total", map[string]string{"type": "unknown"}, 1)

	assertSeries(t, reg, "ahp_watch_subscribers", nil, 0) // before WatchStats
	h := hub.New(16)
	defer h.Close()
	m.WatchStats(h.Stats)
	sub := h.Subscribe(hub.Filter{}, 1)
	defer sub.Close()
	assertSeries(t, reg, "ahp_watch_subscribers", nil, 1)
	m.WatchStats(func() hub.Stats { return hub.Stats{Subscribers: 3, Published: 10, CutOff: 2, Overflows: 1, Batches: 4} })
	const want = `
# HELP ahp_watch_batches_total Deliveries of published items to the watchers, several items each when they come fast; published/batches is the mean batch size.
# TYPE ahp_watch_batches_total counter
ahp_watch_batches_total 4
# HELP ahp_watch_cutoffs_total Watch subscriptions ended because the watcher fell too far behind.
# TYPE ahp_watch_cutoffs_total counter
ahp_watch_cutoffs_total 2
# HELP ahp_watch_overflows_total Items the watch hub's queue could not take; each ends every subscription.
# TYPE ahp_watch_overflows_total counter
ahp_watch_overflows_total 1
# HELP ahp_watch_published_total Items accepted for delivery to watchers.
# TYPE ahp_watch_published_total counter
ahp_watch_published_total 10
# HELP ahp_watch_subscribers Live Watch subscriptions.
# TYPE ahp_watch_subscribers gauge
ahp_watch_subscribers 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ahp_watch_batches_total", "ahp_watch_cutoffs_total", "ahp_watch_overflows_total",
		"ahp_watch_published_total", "ahp_watch_subscribers"); err != nil {
		t.Error(err)
	}
}

func TestBridgeAuditAuthMetrics(t *testing.T) {
	t.Parallel()
	m := newMetrics(t, metrics.Options{})
	reg := m.Registry()
	m.BridgeFailOpen(ahpv1.Dialect_DIALECT_HOOKS, metrics.BridgeDeadlineExceeded)
	m.BridgeFailClosed(ahpv1.Dialect_DIALECT_HARNESS, metrics.ParseBridgeReason("backend_error"))
	m.BridgeFailClosed(ahpv1.Dialect(42), metrics.BridgeReason(200))
	m.BridgeObserveFailed(ahpv1.Dialect_DIALECT_HOOKS, metrics.ParseBridgeReason("no-such-reason"))
	assertSeries(t, reg, "ahp_bridge_fail_open_total", map[string]string{"dialect": "hooks", "reason": "deadline_exceeded"}, 1)
	assertSeries(t, reg, "ahp_bridge_fail_closed_total", map[string]string{"dialect": "harness", "reason": "backend_error"}, 1)
	assertSeries(t, reg, "ahp_bridge_fail_closed_total", map[string]string{"dialect": "unspecified", "reason": "other"}, 1)
	assertSeries(t, reg, "ahp_bridge_fail_open_total", map[string]string{"dialect": "native", "reason": "unavailable"}, 0)
	assertSeries(t, reg, "ahp_bridge_observe_failures_total", map[string]string{"dialect": "hooks", "reason": "other"}, 1)
	for _, name := range []string{"deadline_exceeded", "unavailable", "bad_response", "backend_error", "unauthenticated", "canceled"} {
		if got := metrics.ParseBridgeReason(name).String(); got != name {
			t.Errorf("ParseBridgeReason(%q).String() = %q", name, got)
		}
	}

	m.AuditWriteError()
	m.AuditWriteError()
	m.SetAuditQueueDepth(17)
	assertSeries(t, reg, "ahp_audit_write_errors_total", nil, 2)
	assertSeries(t, reg, "ahp_audit_queue_depth", nil, 17)

	m.AuthFailure(auth.ReasonInvalid)
	m.AuthFailure(auth.ReasonScope)
	m.AuthFailure(auth.Reason("made-up"))
	assertSeries(t, reg, "ahp_auth_failures_total", map[string]string{"reason": "invalid"}, 1)
	assertSeries(t, reg, "ahp_auth_failures_total", map[string]string{"reason": "scope"}, 1)
	assertSeries(t, reg, "ahp_auth_failures_total", map[string]string{"reason": "missing"}, 0)
	assertSeries(t, reg, "ahp_auth_failures_total", map[string]string{"reason": "other"}, 1)
}

// TestLint runs Prometheus' own naming and metadata checks over every metric.
func TestLint(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{Version: "v0.0.0-test"})
	m.SetPolicy("p", "d", []string{"r"})
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{Version: "v1.2.3"})
	m.ObserveDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ASK}, time.Millisecond)
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := w.Body.String()
	for _, want := range []string{
		`ahp_build_info{version="v1.2.3"} 1`,
		`ahp_decisions_total{synthetic="false",verdict="ask"} 1`,
		"go_goroutines ", "process_", // runtime collectors are on by default
		// and the runtime/metrics series ahp-bench reads the cost of a decision from
		"go_gc_heap_allocs_bytes_total ", "go_gc_heap_allocs_objects_total ", "go_gc_heap_live_bytes ",
		"go_gc_cycles_total_gc_cycles_total ", "go_cpu_classes_gc_total_cpu_seconds_total ", "go_cpu_classes_total_cpu_seconds_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	m := newMetrics(t, metrics.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "ahp_decisions_total") {
		t.Errorf("GET /metrics: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get("http://" + ln.Addr().String() + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /other: %d, want 404", resp.StatusCode)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}

// TestNilMetrics: components hold a nil *Metrics when metrics are off.
func TestNilMetrics(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.ObserveDecision(&ahpv1.Decision{}, time.Second)
	m.ObserveEvent(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER)
	m.WatchStats(func() hub.Stats { return hub.Stats{} })
	m.BridgeFailOpen(ahpv1.Dialect_DIALECT_HOOKS, metrics.BridgeDeadlineExceeded)
	m.BridgeFailClosed(ahpv1.Dialect_DIALECT_HOOKS, metrics.BridgeDeadlineExceeded)
	m.BridgeObserveFailed(ahpv1.Dialect_DIALECT_HOOKS, metrics.BridgeDeadlineExceeded)
	m.SetPolicy("p", "d", nil)
	m.PolicyReloaded()
	m.PolicyReloadFailed()
	m.AuditWriteError()
	m.SetAuditQueueDepth(1)
	m.AuthFailure(auth.ReasonMissing)
}

// TestObserveDecisionDoesNotAllocate guards the hot path.
func TestObserveDecisionDoesNotAllocate(t *testing.T) {
	m := newMetrics(t, metrics.Options{})
	d := benchDecision()
	m.ObserveDecision(d, time.Microsecond) // first sight of the rule ids creates their series
	if n := testing.AllocsPerRun(1000, func() { m.ObserveDecision(d, 12*time.Microsecond) }); n != 0 {
		t.Errorf("ObserveDecision allocates %v times per call", n)
	}
	e := ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	if n := testing.AllocsPerRun(1000, func() { m.ObserveEvent(e) }); n != 0 {
		t.Errorf("ObserveEvent allocates %v times per call", n)
	}
}

func benchDecision() *ahpv1.Decision {
	return &ahpv1.Decision{
		Verdict:        ahpv1.Verdict_VERDICT_DENY,
		Effects:        []*ahpv1.Effect{deny("deny-rm")},
		MatchedRuleIds: []string{"deny-rm", "audit-curl"},
		DryRuns:        []*ahpv1.DryRun{{RuleId: "audit-curl"}},
	}
}

func BenchmarkObserveDecision(b *testing.B) {
	m := newMetrics(b, metrics.Options{})
	d := benchDecision()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveDecision(d, 12*time.Microsecond)
	}
}

func BenchmarkObserveDecisionParallel(b *testing.B) {
	m := newMetrics(b, metrics.Options{})
	d := benchDecision()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveDecision(d, 12*time.Microsecond)
		}
	})
}
