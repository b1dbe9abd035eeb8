package metrics

import "github.com/prometheus/client_golang/prometheus"

// Approval outcomes, as ApprovalChanged's argument and the outcome label.
const (
	ApprovalRequested = "requested"
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalExpired   = "expired"
	ApprovalConsumed  = "consumed"
	ApprovalAbandoned = "abandoned"
)

// approvalBuckets are time-to-decision buckets in seconds: people answer in seconds to hours.
var approvalBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400}

func (m *Metrics) initApprovals(f factory) {
	m.approvalsPending = f.gauge("ahp_approvals_pending", "Approvals waiting for a person.")
	outcomes := f.counterVec("ahp_approvals_total", "Approval changes, by outcome (requested, approved, denied, expired, consumed, abandoned).", "outcome")
	m.approvalOutcomes = map[string]prometheus.Counter{}
	for _, o := range []string{ApprovalRequested, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalConsumed, ApprovalAbandoned} {
		m.approvalOutcomes[o] = outcomes.WithLabelValues(o)
	}
	m.approvalLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ahp_approval_decision_seconds",
		Help:    "Time from an approval's request to its decision or expiry, in seconds.",
		Buckets: approvalBuckets,
	})
	f.reg.MustRegister(m.approvalLatency)
	notify := f.counterVec("ahp_approval_notifications_total", "Approval notifications, by result (sent, failed: every retry failed, dropped: the queue was full).", "result")
	m.approvalNotify = map[string]prometheus.Counter{
		"sent": notify.WithLabelValues("sent"), "failed": notify.WithLabelValues("failed"), "dropped": notify.WithLabelValues("dropped"),
	}
}

// ApprovalChanged counts one approval change: outcome is one of the Approval* constants;
// decidedSeconds is the time to decision or expiry for approved, denied and expired (else 0).
func (m *Metrics) ApprovalChanged(outcome string, decidedSeconds float64) {
	if m == nil {
		return
	}
	if c, ok := m.approvalOutcomes[outcome]; ok {
		c.Inc()
	}
	switch outcome {
	case ApprovalRequested:
		m.approvalsPending.Inc()
	case ApprovalApproved, ApprovalDenied, ApprovalExpired:
		m.approvalsPending.Dec()
		m.approvalLatency.Observe(decidedSeconds)
	}
}

// ApprovalsHeld reports, on every scrape, the calls held waiting for a decision.
func (m *Metrics) ApprovalsHeld(held func() int) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ahp_approval_held_calls", Help: "Calls held waiting for an approval decision.",
	}, func() float64 { return float64(held()) }))
}

// ApprovalNotified counts one notification: result is sent, failed or dropped.
func (m *Metrics) ApprovalNotified(result string) {
	if m == nil {
		return
	}
	if c, ok := m.approvalNotify[result]; ok {
		c.Inc()
	}
}
