package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/policykv"
	"github.com/ahp-gateway/ahp/internal/cluster/sessionkv"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// Replicas starting together race to create the same replicated buckets; on a JetStream
// cluster a losing request can go unanswered, and setup must still finish for every replica.
func TestReplicasCreatingBucketsTogetherAllFinish(t *testing.T) {
	t.Parallel()
	nodes := natstest.Cluster(t, 3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := cluster.Connect(cluster.Config{Servers: []string{natstest.URLs(nodes)}, Replicas: 3}, testkit.Discard())
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			defer conn.Close()
			if _, err := idemkv.Open(ctx, conn, idemkv.Options{}); err != nil {
				t.Error(err)
			}
			if _, err := sessionkv.Open(ctx, conn, session.Options{}); err != nil {
				t.Error(err)
			}
			if _, err := policykv.Open(ctx, conn); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
