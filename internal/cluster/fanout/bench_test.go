package fanout_test

import (
	"fmt"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// BenchmarkFanout publishes b.N decisions on replica A with replica B unwatched or watched, items
// batched (the default) or one a message (BatchItems 1, as before batches), and waits until A has
// sent them all and a watcher on B has them. allocs/op and B/op count both processes' work (they
// share this one); msgs/item is A's messages per item, recv-msgs/item what NATS delivered to B.
//
//	go test -run '^$' -bench Fanout -benchtime 20000x ./internal/cluster/fanout/
func BenchmarkFanout(b *testing.B) {
	srv := natstest.Start(b)
	ev := testkit.ShellEvent("e", "ls -la", testkit.Session("s"))
	for _, watched := range []bool{false, true} {
		for _, batch := range []int{fanout.DefaultBatchItems, 1} {
			b.Run(fmt.Sprintf("watched=%v/batch=%d", watched, batch), func(b *testing.B) {
				a := onServer(b, srv.URL(), "a", fanout.Options{BatchItems: batch, QueueItems: b.N + 1})
				r := onServer(b, srv.URL(), "b", fanout.Options{})
				var w *hub.Subscription
				if watched {
					w = r.hub.Subscribe(hub.Filter{}, b.N+1)
				}
				it := hub.Item{Event: ev, Decision: &ahpv1.Decision{DecisionId: "d", Verdict: ahpv1.Verdict_VERDICT_ALLOW}}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					a.f.Publish(it)
				}
				// The publisher drains the queue on its own goroutine.
				waitFor(b, "A to send everything", func() bool { st := a.f.Stats(); return st.Sent+st.Dropped == uint64(b.N) })
				if w != nil {
					for range b.N {
						testkit.Receive(b, w.Items(), "an item on B")
					}
				}
				b.StopTimer()
				st, rs := a.f.Stats(), r.f.Stats()
				if st.Dropped > 0 {
					b.Fatalf("dropped %d", st.Dropped)
				}
				b.ReportMetric(float64(st.SentMessages)/float64(b.N), "msgs/item")
				b.ReportMetric(float64(rs.ReceivedMessages)/float64(b.N), "recv-msgs/item")
			})
		}
	}
}
