package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ClusterStats are cluster mode's counters, read at scrape time (cmd/ahp-server gathers them
// from the NATS connection and the shared stores).
type ClusterStats struct {
	// Connected and Degraded describe the NATS connection and the shared stores now.
	Connected, Degraded bool
	// Failures counts store operations that used the local fallback (failed, late, or not
	// tried); Timeouts those that ran out of the lookup budget; Checks the checks that JetStream
	// answers; Reconnects reconnections.
	Failures, Timeouts, Checks, Reconnects uint64
	// DegradedSeconds is the time spent degraded.
	DegradedSeconds float64
	// FanoutSent, FanoutReceived and FanoutDropped count Watch items to and from other replicas;
	// FanoutSentMessages and FanoutReceivedMessages the NATS messages (a message carries a batch
	// of items); FanoutSubscribed is whether the replica receives the others' items now (only
	// while someone watches it); FanoutUnconfirmed counts subscriptions NATS did not confirm in
	// time.
	FanoutSent, FanoutReceived, FanoutDropped  uint64
	FanoutSentMessages, FanoutReceivedMessages uint64
	FanoutSubscribed                           bool
	FanoutUnconfirmed                          uint64
	// FanoutQueueBytes is what the items waiting to be sent to the other replicas hold now.
	FanoutQueueBytes int64
	// AuditPublished and AuditFailed count records for the audit stream.
	AuditPublished, AuditFailed uint64
	// BucketEntries and BucketBytes are the sizes of the shared KV buckets, by bucket.
	BucketEntries, BucketBytes map[string]uint64
	// Sessions are the shared session store's counters.
	Sessions SessionStoreStats
	// Failover are the counters of failovers, silent links and what was decided locally meanwhile.
	Failover FailoverStats
}

// FailoverStats count what cluster mode does when NATS fails over or a link goes silent.
type FailoverStats struct {
	// Skipped counts the store failures that were not tried at all, SkippedConnected the part of
	// them while connected (degraded by checks); SilentReconnects reconnects forced because the
	// link to NATS went silent.
	Skipped, SkippedConnected, SilentReconnects uint64
	// WriteBackWritten, WriteBackConflicts and WriteBackDropped count the decisions and
	// observations remembered locally during an outage: written to the idempotency bucket once it
	// answered, found decided by another replica first, or not kept for it (byte bound);
	// WriteBackPendingBytes is what waits now.
	WriteBackWritten, WriteBackConflicts, WriteBackDropped uint64
	WriteBackPendingBytes                                  int
}

// SessionStoreStats are the counters of the shared session store (its local copy and write queue).
type SessionStoreStats struct {
	// Watching: the store's watch delivered the whole bucket (views read the local copy).
	Watching bool
	// Reads counts records read from the bucket because the local copy lacked them.
	Reads uint64
	// Writes counts records stored; Coalesced changes that shared a write with another;
	// SyncWrites calls that wrote synchronously because the queue was full; Conflicts
	// compare-and-set conflicts (reapplied); WriteFailures writes NATS refused or did not
	// answer (retried).
	Writes, Coalesced, SyncWrites, Conflicts, WriteFailures uint64
	// Dropped counts changes refused with the queue over twice its bound; TooLarge changes
	// that would have made a record exceed its byte bound; LostAtClose changes still queued when
	// the store closed.
	Dropped, TooLarge, LostAtClose uint64
	// Undecodable counts stored records read in neither form (replaced at their next change).
	Undecodable uint64
	// QueueBytes is the size of the changes queued now; Cached the records the local copy holds.
	QueueBytes, Cached int
}

var (
	clusterConnectedDesc = prometheus.NewDesc("ahp_cluster_connected", "1 while connected to NATS (cluster mode).", nil, nil)
	clusterDegradedDesc  = prometheus.NewDesc("ahp_cluster_degraded", "1 while the shared stores are degraded (deciding locally or failing closed).", nil, nil)
	clusterFailuresDesc  = prometheus.NewDesc("ahp_cluster_store_failures_total", "Shared store operations that failed or exceeded the lookup budget.", nil, nil)
	clusterReconnectDesc = prometheus.NewDesc("ahp_cluster_reconnects_total", "Reconnections to NATS.", nil, nil)
	clusterDegradedSecs  = prometheus.NewDesc("ahp_cluster_degraded_seconds_total", "Time spent degraded.", nil, nil)
	clusterFanoutDesc    = prometheus.NewDesc("ahp_cluster_fanout_items_total", "Watch items exchanged with the other replicas, by direction (sent, received, dropped).", []string{"direction"}, nil)
	clusterFanoutMsgDesc = prometheus.NewDesc("ahp_cluster_fanout_messages_total", "NATS messages of Watch items exchanged with the other replicas, by direction (sent, received); a message carries one item or a batch.", []string{"direction"}, nil)
	clusterFanoutSubDesc = prometheus.NewDesc("ahp_cluster_fanout_subscribed", "1 while this replica receives the other replicas' Watch items (someone watches it, or did within the linger).", nil, nil)
	clusterFanoutUncDesc = prometheus.NewDesc("ahp_cluster_fanout_unconfirmed_total", "Watch fan-out subscriptions NATS did not confirm before the Watch started (timeout, or not connected).", nil, nil)
	clusterFanoutQDesc   = prometheus.NewDesc("ahp_cluster_fanout_queue_bytes", "Bytes of the Watch items waiting to be sent to the other replicas (bounded; past the bound an item is dropped for them and counted).", nil, nil)
	clusterAuditDesc     = prometheus.NewDesc("ahp_cluster_audit_records_total", "Audit records for the replicated audit stream, by outcome (published, failed).", []string{"outcome"}, nil)
	clusterEntriesDesc   = prometheus.NewDesc("ahp_cluster_bucket_entries", "Entries in a shared KV bucket.", []string{"bucket"}, nil)
	clusterBytesDesc     = prometheus.NewDesc("ahp_cluster_bucket_bytes", "Bytes in a shared KV bucket.", []string{"bucket"}, nil)
	clusterTimeoutsDesc  = prometheus.NewDesc("ahp_cluster_store_timeouts_total", "Shared store operations that ran out of the lookup budget (they used the local store).", nil, nil)
	clusterChecksDesc    = prometheus.NewDesc("ahp_cluster_checks_total", "Checks that JetStream answers, after a failed operation or a reconnect.", nil, nil)

	sessionWatchingDesc = prometheus.NewDesc("ahp_cluster_session_watching", "1 once the session store's watch delivered the whole bucket (views read the local copy).", nil, nil)
	sessionReadsDesc    = prometheus.NewDesc("ahp_cluster_session_bucket_reads_total", "Session records read from the bucket because the local copy lacked them.", nil, nil)
	sessionWritesDesc   = prometheus.NewDesc("ahp_cluster_session_writes_total", "Session records written to the bucket.", nil, nil)
	sessionSyncDesc     = prometheus.NewDesc("ahp_cluster_session_sync_writes_total", "Session calls that wrote the record themselves because the write queue was full.", nil, nil)
	sessionCoalDesc     = prometheus.NewDesc("ahp_cluster_session_coalesced_total", "Session changes stored in one write with another change to the same record.", nil, nil)
	sessionConflDesc    = prometheus.NewDesc("ahp_cluster_session_conflicts_total", "Compare-and-set conflicts of session writes (another replica wrote first; reapplied).", nil, nil)
	sessionFailDesc     = prometheus.NewDesc("ahp_cluster_session_write_failures_total", "Session writes NATS refused or did not answer (the changes stay queued and are retried).", nil, nil)
	sessionDropDesc     = prometheus.NewDesc("ahp_cluster_session_changes_dropped_total", "Session changes never stored, by reason (queue_full, too_large, lost_at_close).", []string{"reason"}, nil)
	sessionUndecDesc    = prometheus.NewDesc("ahp_cluster_session_undecodable_total", "Stored session records read in neither the binary nor the JSON form (each replaced by a fresh record at its next change).", nil, nil)
	sessionQueueDesc    = prometheus.NewDesc("ahp_cluster_session_queue_bytes", "Bytes of session changes queued and not yet stored.", nil, nil)
	sessionCachedDesc   = prometheus.NewDesc("ahp_cluster_session_cached_records", "Session and agent records in the local copy.", nil, nil)
)

// ClusterStats makes the cluster metrics read stats at every scrape; call it once.
func (m *Metrics) ClusterStats(stats func() ClusterStats) {
	if m == nil || stats == nil {
		return
	}
	m.reg.MustRegister(clusterCollector{stats}, failoverCollector{stats})
}

type clusterCollector struct{ stats func() ClusterStats }

func (clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{clusterConnectedDesc, clusterDegradedDesc, clusterFailuresDesc, clusterReconnectDesc,
		clusterDegradedSecs, clusterFanoutDesc, clusterFanoutMsgDesc, clusterFanoutSubDesc, clusterFanoutUncDesc, clusterFanoutQDesc, clusterAuditDesc, clusterEntriesDesc, clusterBytesDesc, clusterTimeoutsDesc, clusterChecksDesc,
		sessionWatchingDesc, sessionReadsDesc, sessionWritesDesc, sessionSyncDesc, sessionCoalDesc, sessionConflDesc, sessionFailDesc, sessionDropDesc,
		sessionUndecDesc, sessionQueueDesc, sessionCachedDesc} {
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
	ch <- prometheus.MustNewConstMetric(clusterFanoutMsgDesc, prometheus.CounterValue, float64(s.FanoutSentMessages), "sent")
	ch <- prometheus.MustNewConstMetric(clusterFanoutMsgDesc, prometheus.CounterValue, float64(s.FanoutReceivedMessages), "received")
	ch <- prometheus.MustNewConstMetric(clusterFanoutSubDesc, prometheus.GaugeValue, b(s.FanoutSubscribed))
	ch <- prometheus.MustNewConstMetric(clusterFanoutUncDesc, prometheus.CounterValue, float64(s.FanoutUnconfirmed))
	ch <- prometheus.MustNewConstMetric(clusterFanoutQDesc, prometheus.GaugeValue, float64(s.FanoutQueueBytes))
	ch <- prometheus.MustNewConstMetric(clusterAuditDesc, prometheus.CounterValue, float64(s.AuditPublished), "published")
	ch <- prometheus.MustNewConstMetric(clusterAuditDesc, prometheus.CounterValue, float64(s.AuditFailed), "failed")
	for bucket, n := range s.BucketEntries {
		ch <- prometheus.MustNewConstMetric(clusterEntriesDesc, prometheus.GaugeValue, float64(n), bucket)
	}
	for bucket, n := range s.BucketBytes {
		ch <- prometheus.MustNewConstMetric(clusterBytesDesc, prometheus.GaugeValue, float64(n), bucket)
	}
	ch <- prometheus.MustNewConstMetric(clusterTimeoutsDesc, prometheus.CounterValue, float64(s.Timeouts))
	ch <- prometheus.MustNewConstMetric(clusterChecksDesc, prometheus.CounterValue, float64(s.Checks))
	ss := s.Sessions
	ch <- prometheus.MustNewConstMetric(sessionWatchingDesc, prometheus.GaugeValue, b(ss.Watching))
	ch <- prometheus.MustNewConstMetric(sessionReadsDesc, prometheus.CounterValue, float64(ss.Reads))
	ch <- prometheus.MustNewConstMetric(sessionWritesDesc, prometheus.CounterValue, float64(ss.Writes))
	ch <- prometheus.MustNewConstMetric(sessionSyncDesc, prometheus.CounterValue, float64(ss.SyncWrites))
	ch <- prometheus.MustNewConstMetric(sessionCoalDesc, prometheus.CounterValue, float64(ss.Coalesced))
	ch <- prometheus.MustNewConstMetric(sessionConflDesc, prometheus.CounterValue, float64(ss.Conflicts))
	ch <- prometheus.MustNewConstMetric(sessionFailDesc, prometheus.CounterValue, float64(ss.WriteFailures))
	ch <- prometheus.MustNewConstMetric(sessionDropDesc, prometheus.CounterValue, float64(ss.Dropped), "queue_full")
	ch <- prometheus.MustNewConstMetric(sessionDropDesc, prometheus.CounterValue, float64(ss.TooLarge), "too_large")
	ch <- prometheus.MustNewConstMetric(sessionDropDesc, prometheus.CounterValue, float64(ss.LostAtClose), "lost_at_close")
	ch <- prometheus.MustNewConstMetric(sessionUndecDesc, prometheus.CounterValue, float64(ss.Undecodable))
	ch <- prometheus.MustNewConstMetric(sessionQueueDesc, prometheus.GaugeValue, float64(ss.QueueBytes))
	ch <- prometheus.MustNewConstMetric(sessionCachedDesc, prometheus.GaugeValue, float64(ss.Cached))
}

// ClusterStoreBuckets are the shared store latency histogram's upper bounds in seconds, 50 µs to
// 1 s: a loopback JetStream round trip takes about a hundred microseconds, the lookup budget
// ends a decision's wait after a few milliseconds, background writes may take longer.
var ClusterStoreBuckets = []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1}

// ClusterLatency registers ahp_cluster_store_duration_seconds and returns the function that
// observes one shared store operation (for cluster.Conn.ObserveLatency): store is idempotency,
// sessions or audit, op what was done (claim, lookup, observe, read, write, publish). Both come
// from the code, never from requests, so the label set is small and fixed. Call it once.
func (m *Metrics) ClusterLatency() func(store, op string, d time.Duration) {
	if m == nil {
		return nil
	}
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ahp_cluster_store_duration_seconds",
		Help:    "Time a shared store operation took against NATS (answered or not), by store and operation.",
		Buckets: ClusterStoreBuckets,
	}, []string{"store", "op"})
	m.reg.MustRegister(h)
	var cache sync.Map // store+"\x00"+op → prometheus.Observer: no label lookup per operation
	return func(store, op string, d time.Duration) {
		k := store + "\x00" + op
		o, ok := cache.Load(k)
		if !ok {
			o, _ = cache.LoadOrStore(k, h.WithLabelValues(store, op))
		}
		o.(prometheus.Observer).Observe(d.Seconds())
	}
}
