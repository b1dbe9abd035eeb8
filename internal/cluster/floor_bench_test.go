package cluster_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkNATSFloor measures what the NATS operations of one cluster-mode decision cost on
// their own, through nats.go and a loopback nats-server with none of ahp-server's code: the
// floor under what the NATS stores can cost, on this machine. Per operation:
//
//   - claim: one KV create-if-absent of a 400-byte value (the idempotency claim, on the
//     decision path);
//   - claim+session: and one compare-and-set update of a 2 KiB value on the worker's own key
//     (a session record write; ahp-server makes it off the decision path, but it is made);
//   - claim+session+publish: and one core NATS publish of 600 bytes (the Watch fan-out).
//
// With 1 worker (the p50 of claim alone is one loopback KV round trip: the least a first decision
// can wait for), 4 and 32 workers (ahp-bench's default and a saturating concurrency), it reports
// operations per second, the p50 of one operation, and the CPU this process (the client) and
// nats-server spent per operation. docs/performance.md compares that CPU with what a whole
// in-memory decision costs.
func BenchmarkNATSFloor(b *testing.B) {
	srv := natstest.Start(b)
	nc, err := nats.Connect(srv.URL(), nats.NoEcho())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	claims, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "floor_claims", History: 1, TTL: 10 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	sessions, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "floor_sessions", History: 1})
	if err != nil {
		b.Fatal(err)
	}
	claim, record, item := make([]byte, 400), make([]byte, 2048), make([]byte, 600)
	var run atomic.Int64
	for _, steps := range []int{1, 2, 3} {
		name := []string{"claim", "claim+session", "claim+session+publish"}[steps-1]
		for _, workers := range []int{1, 4, 32} {
			b.Run(fmt.Sprintf("%s/workers-%d", name, workers), func(b *testing.B) {
				r := run.Add(1)
				lat := make([]time.Duration, b.N)
				var next atomic.Int64
				var failed atomic.Pointer[error]
				var wg sync.WaitGroup
				client0, _ := natstest.ProcessCPU(os.Getpid())
				server0, _ := srv.CPU()
				b.ResetTimer()
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := "s" + strconv.FormatInt(r, 10) + "-" + strconv.Itoa(w)
						var rev uint64
						for {
							i := int(next.Add(1)) - 1
							if i >= b.N {
								return
							}
							start := time.Now()
							err := func() error {
								if _, err := claims.Create(ctx, "c"+strconv.FormatInt(r, 10)+"-"+strconv.Itoa(i), claim); err != nil {
									return err
								}
								if steps < 2 {
									return nil
								}
								var err error
								if rev == 0 {
									rev, err = sessions.Create(ctx, key, record)
								} else {
									rev, err = sessions.Update(ctx, key, record, rev)
								}
								if err != nil || steps < 3 {
									return err
								}
								return nc.Publish("floor.watch", item)
							}()
							if err != nil {
								failed.Store(&err)
								return
							}
							lat[i] = time.Since(start)
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				if err := failed.Load(); err != nil {
					b.Fatal(*err)
				}
				client1, okc := natstest.ProcessCPU(os.Getpid())
				server1, oks := srv.CPU()
				if okc && oks {
					b.ReportMetric(float64((client1-client0).Microseconds())/float64(b.N), "client-cpu-µs/op")
					b.ReportMetric(float64((server1-server0).Microseconds())/float64(b.N), "nats-cpu-µs/op")
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
				reportLatency(b, lat)
			})
		}
	}
}
