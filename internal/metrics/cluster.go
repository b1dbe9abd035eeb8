package metrics

import "github.com/prometheus/client_golang/prometheus"

// ClusterStats are cluster mode's counters, read at scrape time (cmd/ahp-server gathers them
// from the NATS connection and the shared stores).
type ClusterStats struct {
	// Connected and Degraded describe the NATS connection and the shared stores now.
	Connected, Degraded bool
	// Failures counts failed or late store operations; Reconnects reconnections.
	Failures, Reconnects uint64
	// DegradedSeconds is the time spent degraded.
	DegradedSeconds float64
	// FanoutSent, FanoutReceived and FanoutDropped count Watch items to and from other replicas.
	FanoutSent, FanoutReceived, FanoutDropped uint64
	// AuditPublished and AuditFailed count records for the audit stream.
	AuditPublished, AuditFailed uint64
	// BucketEntries and BucketBytes are the sizes of the shared KV buckets, by bucket.
	BucketEntries, BucketBytes map[string]uint64
}

var (
	clusterConnectedDesc = prometheus.NewDesc("ahp_cluster_connected", "1 while connected to NATS (cluster mode).", nil, nil)
	clusterDegradedDesc  = prometheus.NewDesc("ahp_cluster_degraded", "1 while the shared stores are degraded (deciding locally or failing closed).", nil, nil)
	clusterFailuresDesc  = prometheus.NewDesc("ahp_cluster_store_failures_total", "Shared store operations that failed or exceeded the lookup budget.", nil, nil)
	clusterReconnectDesc = prometheus.NewDesc("ahp_cluster_reconnects_total", "Reconnections to NATS.", nil, nil)
	clusterDegradedSecs  = prometheus.NewDesc("ahp_cluster_degraded_seconds_total", "Time spent degraded.", nil, nil)
	clusterFanoutDesc    = prometheus.NewDesc("ahp_cluster_fanout_items_total", "Watch items exchanged with the other replicas, by direction (sent, received, dropped).", []string{"direction"}, nil)
	clusterAuditDesc     = prometheus.NewDesc("ahp_cluster_audit_records_total", "Audit records for the replicated audit stream, by outcome (published, failed).", []string{"outcome"}, nil)
	clusterEntriesDesc   = prometheus.NewDesc("ahp_cluster_bucket_entries", "Entries in a shared KV bucket.", []string{"bucket"}, nil)
	clusterBytesDesc     = prometheus.NewDesc("ahp_cluster_bucket_bytes", "Bytes in a shared KV bucket.", []string{"bucket"}, nil)
)

// ClusterStats makes the cluster metrics read stats at every scrape; call it once.
func (m *Metrics) ClusterStats(stats func() ClusterStats) {
	if m == nil || stats == nil {
		return
	}
	m.reg.MustRegister(clusterCollector{stats})
}

type clusterCollector struct{ stats func() ClusterStats }

func (clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{clusterConnectedDesc, clusterDegradedDesc, clusterFailuresDesc, clusterReconnectDesc,
		clusterDegradedSecs, clusterFanoutDesc, clusterAuditDesc, clusterEntriesDesc, clusterBytesDesc} {
		ch <- d
	}
}

func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	ch <- prometheus.MustNewConstMetric(clusterConnectedDesc, prometheus.GaugeValue, b(s.Connected))
	ch <- prometheus.MustNewConstMetric(clusterDegradedDesc, prometheus.GaugeValue, b(s.Degraded))
	ch <- prometheus.MustNewConstMetric(clusterFailuresDesc, prometheus.CounterValue, float64(s.Failures))
	ch <- prometheus.MustNewConstMetric(clusterReconnectDesc, prometheus.CounterValue, float64(s.Reconnects))
	ch <- prometheus.MustNewConstMetric(clusterDegradedSecs, prometheus.CounterValue, s.DegradedSeconds)
	ch <- prometheus.MustNewConstMetric(clusterFanoutDesc, prometheus.CounterValue, float64(s.FanoutSent), "sent")
	ch <- prometheus.MustNewConstMetric(clusterFanoutDesc, prometheus.CounterValue, float64(s.FanoutReceived), "received")
	ch <- prometheus.MustNewConstMetric(clusterFanoutDesc, prometheus.CounterValue, float64(s.FanoutDropped), "dropped")
	ch <- prometheus.MustNewConstMetric(clusterAuditDesc, prometheus.CounterValue, float64(s.AuditPublished), "published")
	ch <- prometheus.MustNewConstMetric(clusterAuditDesc, prometheus.CounterValue, float64(s.AuditFailed), "failed")
	for bucket, n := range s.BucketEntries {
		ch <- prometheus.MustNewConstMetric(clusterEntriesDesc, prometheus.GaugeValue, float64(n), bucket)
	}
	for bucket, n := range s.BucketBytes {
		ch <- prometheus.MustNewConstMetric(clusterBytesDesc, prometheus.GaugeValue, float64(n), bucket)
	}
}
