package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	clusterSkippedDesc   = prometheus.NewDesc("ahp_cluster_store_skipped_total", "Shared store operations not tried (they used the local store), by connection: down (NATS not connected) or up (connected, but degraded by checks).", []string{"connection"}, nil)
	clusterSilentDesc    = prometheus.NewDesc("ahp_cluster_silent_reconnects_total", "Reconnects forced because the link to NATS went silent (a ping without a pong).", nil, nil)
	clusterWriteBackDesc = prometheus.NewDesc("ahp_cluster_idempotency_write_back_total", "Decisions and observations remembered locally while the idempotency bucket was unreachable, by outcome: written to it once it answered, conflict (another replica's stood), dropped (over the byte bound, kept locally only).", []string{"outcome"}, nil)
	clusterWBPendDesc    = prometheus.NewDesc("ahp_cluster_idempotency_write_back_pending_bytes", "Bytes of local decisions and observations waiting to be written to the idempotency bucket.", nil, nil)
)

// failoverCollector shows ClusterStats.Failover.
type failoverCollector struct{ stats func() ClusterStats }

func (failoverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{clusterSkippedDesc, clusterSilentDesc, clusterWriteBackDesc, clusterWBPendDesc} {
		ch <- d
	}
}

func (c failoverCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats().Failover
	ch <- prometheus.MustNewConstMetric(clusterSkippedDesc, prometheus.CounterValue, float64(s.Skipped-min(s.Skipped, s.SkippedConnected)), "down")
	ch <- prometheus.MustNewConstMetric(clusterSkippedDesc, prometheus.CounterValue, float64(s.SkippedConnected), "up")
	ch <- prometheus.MustNewConstMetric(clusterSilentDesc, prometheus.CounterValue, float64(s.SilentReconnects))
	ch <- prometheus.MustNewConstMetric(clusterWriteBackDesc, prometheus.CounterValue, float64(s.WriteBackWritten), "written")
	ch <- prometheus.MustNewConstMetric(clusterWriteBackDesc, prometheus.CounterValue, float64(s.WriteBackConflicts), "conflict")
	ch <- prometheus.MustNewConstMetric(clusterWriteBackDesc, prometheus.CounterValue, float64(s.WriteBackDropped), "dropped")
	ch <- prometheus.MustNewConstMetric(clusterWBPendDesc, prometheus.GaugeValue, float64(s.WriteBackPendingBytes))
}
