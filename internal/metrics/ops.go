package metrics

import (
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/prometheus/client_golang/prometheus"
)

func (m *Metrics) initOps(f factory) {
	m.policyReloads = f.counter("ahp_policy_reloads_total", "Policy reloads that replaced the policy in force.")
	m.policyReloadFailures = f.counter("ahp_policy_reload_failures_total", "Policy reloads that failed; the previous policy stayed in force.")
	m.policyLastReloadOK = f.gauge("ahp_policy_last_reload_success", "1 if the last policy reload succeeded (or none was tried), 0 if it failed.")
	m.policyLastReloadOK.Set(1)
	m.policyRules = f.gauge("ahp_policy_rules", "Rules in the policy in force.")
	m.policyRevision = f.gauge("ahp_policy_revision", "Cluster policy bucket revision of the policy in force (0: from a file or built in).")
	m.policyInfo = f.gaugeVec("ahp_policy_info", "Always 1; labels name the policy in force and its digest.", "name", "digest")

	m.auditWriteErrors = f.counter("ahp_audit_write_errors_total", "Audit records that could not be written.")
	m.auditQueueDepth = f.gauge("ahp_audit_queue_depth", "Audit records waiting to be written.")

	failures := f.counterVec("ahp_auth_failures_total", "Calls refused by authentication or authorisation, by reason.", "reason")
	m.authFailures = map[string]prometheus.Counter{}
	for _, r := range auth.Reasons() {
		m.authFailures[string(r)] = failures.WithLabelValues(string(r))
	}
	m.authOther = failures.WithLabelValues("other")
}

// PolicyReloaded counts a successful policy reload. Call SetPolicy with the new policy as well.
func (m *Metrics) PolicyReloaded() {
	if m == nil {
		return
	}
	m.policyReloads.Inc()
	m.policyLastReloadOK.Set(1)
}

// PolicyReloadFailed counts a failed policy reload.
func (m *Metrics) PolicyReloadFailed() {
	if m == nil {
		return
	}
	m.policyReloadFailures.Inc()
	m.policyLastReloadOK.Set(0)
}

// PolicyReloadRecovered records that the policy file loads again after a failed reload and holds
// the policy in force (it was restored): the last reload succeeded, though nothing was replaced.
func (m *Metrics) PolicyReloadRecovered() {
	if m != nil {
		m.policyLastReloadOK.Set(1)
	}
}

// AuditWriteError counts an audit record that could not be written.
func (m *Metrics) AuditWriteError() {
	if m != nil {
		m.auditWriteErrors.Inc()
	}
}

// SetAuditQueueDepth reports how many audit records are waiting to be written.
func (m *Metrics) SetAuditQueueDepth(n int) {
	if m != nil {
		m.auditQueueDepth.Set(float64(n))
	}
}

// AuthFailure counts a refused call; wire it to auth.Options.OnDeny.
func (m *Metrics) AuthFailure(r auth.Reason) {
	if m == nil {
		return
	}
	if c, ok := m.authFailures[string(r)]; ok {
		c.Inc()
		return
	}
	m.authOther.Inc()
}

// SetPolicyRevision records the cluster policy revision in force (0: not distributed).
func (m *Metrics) SetPolicyRevision(rev uint64) {
	if m == nil {
		return
	}
	m.policyRevision.Set(float64(rev))
}
