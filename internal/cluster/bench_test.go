package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// BenchmarkDecision measures one Intercept through the decision core (no HTTP) with the
// in-memory stores and with the NATS stores (idempotency, session memory, Watch fan-out) on a
// loopback nats-server, and reports p50 and p99 besides the mean. docs/performance.md records it.
func BenchmarkDecision(b *testing.B) {
	for _, mode := range []string{"memory", "nats"} {
		b.Run(mode, func(b *testing.B) {
			cfg := server.Config{Logger: testkit.Discard()}
			if mode == "nats" {
				srv := natstest.Start(b)
				conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "bench", LookupBudget: time.Second}, testkit.Discard())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(conn.Close)
				ctx := context.Background()
				if cfg.Idempotency, err = idemkv.Open(ctx, conn, idemkv.Options{}); err != nil {
					b.Fatal(err)
				}
				sessions, err := sessionkv.Open(ctx, conn, session.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(sessions.Close)
				cfg.Sessions = sessions
				cfg.Fanout = func(local *hub.Hub) (hub.Publisher, error) {
					f, err := fanout.Start(conn, local, fanout.Options{})
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
			core := s.Core()
			events := make([]*ahpv1.Event, b.N)
			for i := range events {
				events[i] = testkit.ShellEvent(fmt.Sprintf("%s-%d", mode, i), "ls -la", testkit.Source("urn:bench"), testkit.Session(fmt.Sprintf("s%d", i%64)))
			}
			lat := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := core.Intercept(context.Background(), events[i], nil); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(start)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
