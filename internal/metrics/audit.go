package metrics

import (
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/prometheus/client_golang/prometheus"
)

// AuditStats makes the metrics read the audit log's counters at scrape time.
func (m *Metrics) AuditStats(stats func() audit.Stats) {
	if m == nil || stats == nil {
		return
	}
	m.audit.Store(&stats)
}

var (
	auditFilesLostDesc = prometheus.NewDesc("ahp_audit_files_lost_total",
		"Active audit files found deleted or replaced while open, and previous logs found missing or cut short at start; each is logged and begins the new file with a notice record.", nil, nil)
	auditWithdrawnDesc = prometheus.NewDesc("ahp_audit_withdrawn_total",
		"Required audit records not written within -audit-required-timeout and withdrawn; their decisions failed closed.", nil, nil)
	auditFailingDesc = prometheus.NewDesc("ahp_audit_failing",
		"1 while the audit log cannot be written, else 0.", nil, nil)
)

// auditCollector reads the audit log's stats at scrape time.
type auditCollector struct{ m *Metrics }

func (auditCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- auditFilesLostDesc
	ch <- auditWithdrawnDesc
	ch <- auditFailingDesc
}

func (c auditCollector) Collect(ch chan<- prometheus.Metric) {
	fn := c.m.audit.Load()
	if fn == nil {
		return
	}
	s := (*fn)()
	failing := 0.0
	if s.Failing {
		failing = 1
	}
	ch <- prometheus.MustNewConstMetric(auditFilesLostDesc, prometheus.CounterValue, float64(s.FilesLost))
	ch <- prometheus.MustNewConstMetric(auditWithdrawnDesc, prometheus.CounterValue, float64(s.Withdrawn))
	ch <- prometheus.MustNewConstMetric(auditFailingDesc, prometheus.GaugeValue, failing)
}
