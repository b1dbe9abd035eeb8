//go:build unix

package cluster_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// A node put in lame duck mode (how a NATS pod should stop: nats-server --signal ldm) tells its
// clients; the replica moves to another node at once, not when the node closes its connection
// (over the lame duck duration, two minutes by default), and decisions stay shared.
func TestLameDuckNodeIsLeftAtOnce(t *testing.T) {
	t.Parallel()
	nodes := natstest.Cluster(t, 3)
	logs := new(testkit.LogBuffer)
	conn, a := replicaOn(t, cluster.Config{Servers: []string{nodes[0].URL()}, Replicas: 3, Name: "a", LookupBudget: 5 * time.Second}, logs)
	_, b := replicaOn(t, cluster.Config{Servers: []string{nodes[1].URL()}, Replicas: 3, Name: "b", LookupBudget: 5 * time.Second}, nil)
	if err := nodes[0].Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	logs.WaitFor(t, "entering lame duck mode; moving to another server", 1)
	logs.WaitFor(t, "reconnected to NATS", 1)
	if url := conn.NATS().ConnectedUrl(); url == nodes[0].URL() || url == "" {
		t.Fatalf("connected to %q after its node entered lame duck mode, want another node", url)
	}
	logs.WaitFor(t, "NATS available again", 1)
	for i := range 10 {
		if key := fmt.Sprintf("after-%d", i); !shared(a, b, key) {
			t.Fatalf("decision %s after the move is not shared", key)
		}
	}
}
