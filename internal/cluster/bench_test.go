package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// benchModes are the store set-ups the benchmarks compare: the in-memory stores; the NATS
// stores (idempotency, session memory with queued writes, Watch fan-out) on a loopback
// nats-server; the same with session writes made before each answer (cluster.session_writes:
// sync); and with the idempotency bucket in NATS memory (cluster.idempotency_storage: memory).
var benchModes = []string{"memory", "nats", "nats-syncsessions", "nats-memidem"}

// benchCore returns the decision core of a server.New server with the stores of mode.
func benchCore(b *testing.B, mode string) *core.Core {
	b.Helper()
	cfg := server.Config{Logger: testkit.Discard()}
	if mode != "memory" {
		srv := natstest.Start(b)
		conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "bench", LookupBudget: time.Second}, testkit.Discard())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(conn.Close)
		ctx := context.Background()
		if cfg.Idempotency, err = idemkv.Open(ctx, conn, idemkv.Options{MemoryStorage: mode == "nats-memidem"}); err != nil {
			b.Fatal(err)
		}
		sessions, err := sessionkv.Open(ctx, conn, session.Options{}, sessionkv.Options{Sync: mode == "nats-syncsessions", Logger: testkit.Discard()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(sessions.Close)
		cfg.Sessions = sessions
		cfg.Fanout = func(local *hub.Hub) (hub.Publisher, error) {
			f, err := fanout.Start(conn, local, fanout.Options{Logger: testkit.Discard()})
			if err == nil {
				b.Cleanup(f.Close)
			}
			return f, err
		}
	}
	s, err := server.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return s.Core()
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkDecision measures one Intercept at a time through the decision core (no HTTP) with
// each mode's stores, 64 sessions, a new event each call, and reports p50 and p99 besides the
// mean. docs/performance.md records it.
func BenchmarkDecision(b *testing.B) {
	for _, mode := range benchModes {
		b.Run(mode, func(b *testing.B) {
			c := benchCore(b, mode)
			events := make([]*ahpv1.Event, b.N)
			for i := range events {
				events[i] = testkit.ShellEvent(fmt.Sprintf("%s-%d", mode, i), "ls -la", testkit.Source("urn:bench"), testkit.Session(fmt.Sprintf("s%d", i%64)))
			}
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := c.Intercept(context.Background(), events[i], nil); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(start)
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkDecisionConcurrent is BenchmarkDecision with 4 callers at once, each in its own
// session (as ahp-bench's workers are), and reports decisions per second.
func BenchmarkDecisionConcurrent(b *testing.B) {
	const workers = 4
	for _, mode := range benchModes {
		b.Run(mode, func(b *testing.B) {
			c := benchCore(b, mode)
			events := make([]*ahpv1.Event, b.N)
			for i := range events {
				events[i] = testkit.ShellEvent(fmt.Sprintf("%s-%d", mode, i), "ls -la", testkit.Source("urn:bench"), testkit.Session(fmt.Sprintf("w%d", i%workers)))
			}
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var failed atomic.Pointer[error]
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						t := time.Now()
						if _, err := c.Intercept(context.Background(), events[i], nil); err != nil {
							failed.Store(&err)
							return
						}
						lat[i] = time.Since(t)
					}
				}()
			}
			wg.Wait()
			took := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
			b.ReportMetric(float64(b.N)/took.Seconds(), "decisions/s")
			reportLatency(b, lat)
		})
	}
}
