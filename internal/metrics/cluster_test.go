package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The cluster metrics show what the stats function returns at scrape time, with the session
// store's counters, and pass Prometheus' own checks.
func TestClusterMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{Version: "v0.0.0-test"})
	m.ClusterStats(func() metrics.ClusterStats {
		return metrics.ClusterStats{Connected: true, Failures: 7, Timeouts: 5, Checks: 2, Failover: metrics.FailoverStats{Skipped: 4, SkippedConnected: 1, SilentReconnects: 3,
			WriteBackWritten: 8, WriteBackConflicts: 2, WriteBackDropped: 1, WriteBackPendingBytes: 512},
			Sessions: metrics.SessionStoreStats{Watching: true, Reads: 3, Writes: 40, SyncWrites: 4, WriteFailures: 1,
				Dropped: 6, TooLarge: 2, Undecodable: 1, QueueBytes: 1234, Cached: 9}}
	})
	want := `
# HELP ahp_cluster_store_timeouts_total Shared store operations that ran out of the lookup budget (they used the local store).
# TYPE ahp_cluster_store_timeouts_total counter
ahp_cluster_store_timeouts_total 5
# HELP ahp_cluster_store_skipped_total Shared store operations not tried (they used the local store), by connection: down (NATS not connected) or up (connected, but degraded by checks).
# TYPE ahp_cluster_store_skipped_total counter
ahp_cluster_store_skipped_total{connection="down"} 3
ahp_cluster_store_skipped_total{connection="up"} 1
# HELP ahp_cluster_silent_reconnects_total Reconnects forced because the link to NATS went silent (a ping without a pong).
# TYPE ahp_cluster_silent_reconnects_total counter
ahp_cluster_silent_reconnects_total 3
# HELP ahp_cluster_idempotency_write_back_total Decisions and observations remembered locally while the idempotency bucket was unreachable, by outcome: written to it once it answered, conflict (another replica's stood), dropped (over the byte bound, kept locally only).
# TYPE ahp_cluster_idempotency_write_back_total counter
ahp_cluster_idempotency_write_back_total{outcome="conflict"} 2
ahp_cluster_idempotency_write_back_total{outcome="dropped"} 1
ahp_cluster_idempotency_write_back_total{outcome="written"} 8
# HELP ahp_cluster_idempotency_write_back_pending_bytes Bytes of local decisions and observations waiting to be written to the idempotency bucket.
# TYPE ahp_cluster_idempotency_write_back_pending_bytes gauge
ahp_cluster_idempotency_write_back_pending_bytes 512
# HELP ahp_cluster_session_watching 1 once the session store's watch delivered the whole bucket (views read the local copy).
# TYPE ahp_cluster_session_watching gauge
ahp_cluster_session_watching 1
# HELP ahp_cluster_session_bucket_reads_total Session records read from the bucket because the local copy lacked them.
# TYPE ahp_cluster_session_bucket_reads_total counter
ahp_cluster_session_bucket_reads_total 3
# HELP ahp_cluster_session_sync_writes_total Session calls that wrote the record themselves because the write queue was full.
# TYPE ahp_cluster_session_sync_writes_total counter
ahp_cluster_session_sync_writes_total 4
# HELP ahp_cluster_session_write_failures_total Session writes NATS refused or did not answer (the changes stay queued and are retried).
# TYPE ahp_cluster_session_write_failures_total counter
ahp_cluster_session_write_failures_total 1
# HELP ahp_cluster_session_changes_dropped_total Session changes never stored, by reason (queue_full, too_large, lost_at_close).
# TYPE ahp_cluster_session_changes_dropped_total counter
ahp_cluster_session_changes_dropped_total{reason="lost_at_close"} 0
ahp_cluster_session_changes_dropped_total{reason="queue_full"} 6
ahp_cluster_session_changes_dropped_total{reason="too_large"} 2
# HELP ahp_cluster_session_undecodable_total Stored session records read in neither the binary nor the JSON form (each replaced by a fresh record at its next change).
# TYPE ahp_cluster_session_undecodable_total counter
ahp_cluster_session_undecodable_total 1
# HELP ahp_cluster_session_queue_bytes Bytes of session changes queued and not yet stored.
# TYPE ahp_cluster_session_queue_bytes gauge
ahp_cluster_session_queue_bytes 1234
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "ahp_cluster_store_timeouts_total", "ahp_cluster_store_skipped_total", "ahp_cluster_silent_reconnects_total",
		"ahp_cluster_idempotency_write_back_total", "ahp_cluster_idempotency_write_back_pending_bytes",
		"ahp_cluster_session_watching", "ahp_cluster_session_bucket_reads_total", "ahp_cluster_session_sync_writes_total",
		"ahp_cluster_session_write_failures_total", "ahp_cluster_session_changes_dropped_total", "ahp_cluster_session_undecodable_total",
		"ahp_cluster_session_queue_bytes"); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// Each timed store operation lands in the bucket of its duration, under its store and operation.
func TestClusterLatency(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{Version: "v0.0.0-test", NoRuntimeMetrics: true})
	observe := m.ClusterLatency()
	// 2⁻⁹ s, a binary fraction and a whole number of nanoseconds, so that the sum is exact.
	observe("idempotency", "claim", 1953125*time.Nanosecond)
	observe("idempotency", "claim", 1953125*time.Nanosecond)
	observe("sessions", "write", 2*time.Second)
	want := `
# HELP ahp_cluster_store_duration_seconds Time a shared store operation took against NATS (answered or not), by store and operation.
# TYPE ahp_cluster_store_duration_seconds histogram
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="5e-05"} 0
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.0001"} 0
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.00025"} 0
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.0005"} 0
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.001"} 0
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.0025"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.005"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.01"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.025"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.05"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.1"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="0.25"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="1"} 2
ahp_cluster_store_duration_seconds_bucket{op="claim",store="idempotency",le="+Inf"} 2
ahp_cluster_store_duration_seconds_sum{op="claim",store="idempotency"} 0.00390625
ahp_cluster_store_duration_seconds_count{op="claim",store="idempotency"} 2
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="5e-05"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.0001"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.00025"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.0005"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.001"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.0025"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.005"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.01"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.025"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.05"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.1"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="0.25"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="1"} 0
ahp_cluster_store_duration_seconds_bucket{op="write",store="sessions",le="+Inf"} 1
ahp_cluster_store_duration_seconds_sum{op="write",store="sessions"} 2
ahp_cluster_store_duration_seconds_count{op="write",store="sessions"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "ahp_cluster_store_duration_seconds"); err != nil {
		t.Fatal(err)
	}
}
