package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// replicaOn connects a replica named name to servers and opens its idempotency store.
func replicaOn(t *testing.T, cfg cluster.Config, logs *testkit.LogBuffer) (*cluster.Conn, *idemkv.Store) {
	t.Helper()
	log := testkit.Discard()
	if logs != nil {
		log = logs.Logger()
	}
	conn, err := cluster.Connect(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, err := idemkv.Open(ctx, conn, idemkv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return conn, store
}

// shared reports whether a decision remembered through a is found standing through b.
func shared(a, b *idemkv.Store, key string) bool {
	a.RememberDecision(key, &ahpv1.Decision{DecisionId: "d-" + key})
	d, stored := b.RememberDecision(key, &ahpv1.Decision{DecisionId: "other"})
	return !stored && d.GetDecisionId() == "d-"+key
}

// When the link to the node a replica is connected to goes silent (no reset: a partition), the
// first store operation that runs out of its budget makes the connection ping; no pong comes,
// so it drops the link and reconnects to another node of the cluster (learnt from the first
// node's INFO: the replica was given only the silent one), and decisions are shared again. The
// client's own pings are set far apart here: the store operation found the link.
func TestSilentLinkMovesToAnotherNode(t *testing.T) {
	t.Parallel()
	nodes := natstest.Cluster(t, 3)
	proxy := natstest.NewProxy(t, nodes[0])
	logs := new(testkit.LogBuffer)
	conn, a := replicaOn(t, cluster.Config{Servers: []string{proxy.URL()}, Replicas: 3, Name: "a",
		LookupBudget: 500 * time.Millisecond, PingInterval: cluster.MaxPingInterval}, logs)
	_, b := replicaOn(t, cluster.Config{Servers: []string{nodes[1].URL()}, Replicas: 3, Name: "b", LookupBudget: 5 * time.Second}, nil)
	if !shared(a, b, "before") {
		t.Fatal("a decision made before the link went silent is not shared")
	}
	proxy.Silence()
	before := conn.Stats()
	if shared(a, b, "silent") {
		t.Fatal("a decision through a silent link was stored in the bucket")
	}
	logs.WaitFor(t, "NATS link silent", 1)
	logs.WaitFor(t, "reconnected to NATS", 1)
	logs.WaitFor(t, "NATS available again", 1)
	if url := conn.NATS().ConnectedUrl(); url == proxy.URL() || url == "" {
		t.Fatalf("connected to %q after the link went silent, want another server", url)
	}
	for i := range 20 {
		if key := fmt.Sprintf("after-%d", i); !shared(a, b, key) {
			t.Fatalf("decision %s after the reconnect is not shared (stats %+v)", key, conn.Stats())
		}
	}
	st := conn.Stats()
	if st.SilentReconnects != before.SilentReconnects+1 || st.Reconnects != before.Reconnects+1 || st.Degraded {
		t.Fatalf("stats after the silent link %+v (before %+v): want one silent reconnect, one reconnect, not degraded", st, before)
	}
	if n := strings.Count(logs.String(), "NATS unavailable"); n != 1 {
		t.Fatalf("the silent link's outage was logged %d times, want once", n)
	}
}

// With no store operation at all, the client's pings (cluster.ping_interval, two outstanding at
// most) find a silent link and the connection moves to another node.
func TestSilentIdleLinkFoundByPings(t *testing.T) {
	t.Parallel()
	nodes := natstest.Cluster(t, 2)
	proxy := natstest.NewProxy(t, nodes[0])
	logs := new(testkit.LogBuffer)
	conn, a := replicaOn(t, cluster.Config{Servers: []string{proxy.URL()}, Replicas: 2, Name: "a",
		LookupBudget: 5 * time.Second, PingInterval: 200 * time.Millisecond}, logs)
	_, b := replicaOn(t, cluster.Config{Servers: []string{nodes[1].URL()}, Replicas: 2, Name: "b", LookupBudget: 5 * time.Second}, nil)
	proxy.Silence()
	logs.WaitFor(t, "reconnected to NATS", 1)
	if url := conn.NATS().ConnectedUrl(); url == proxy.URL() || url == "" {
		t.Fatalf("connected to %q after the idle link went silent, want another server", url)
	}
	logs.WaitFor(t, "NATS available again", 1)
	if !strings.Contains(logs.String(), "stale connection") {
		t.Fatalf("the reconnect was not the pings' (stale connection); log:\n%s", logs.String())
	}
	if !shared(a, b, "after") {
		t.Fatal("a decision after the reconnect is not shared")
	}
}

// With a single NATS node behind a link gone silent there is nowhere to go: the connection
// reports itself degraded (not ready; decisions use the local stores at once, logged once), and
// when the link carries traffic again it reconnects and the shared store is used again.
func TestSilentLinkToTheOnlyNodeDegradesUntilItReturns(t *testing.T) {
	t.Parallel()
	node := natstest.Start(t)
	proxy := natstest.NewProxy(t, node)
	logs := new(testkit.LogBuffer)
	conn, a := replicaOn(t, cluster.Config{Servers: []string{proxy.URL()}, Name: "a", LookupBudget: 500 * time.Millisecond,
		ConnectTimeout: time.Second, PingInterval: cluster.MaxPingInterval}, logs)
	_, b := replicaOn(t, cluster.Config{Servers: []string{node.URL()}, Name: "b", LookupBudget: 5 * time.Second}, nil)
	proxy.Silence()
	if shared(a, b, "silent") {
		t.Fatal("a decision through a silent link was stored in the bucket")
	}
	logs.WaitFor(t, "NATS link silent", 1)
	logs.WaitFor(t, "NATS unavailable", 1)
	if err := conn.Ready(); err == nil || !conn.Stats().Degraded {
		t.Fatalf("with the only node's link silent: ready %v, stats %+v; want not ready and degraded", err, conn.Stats())
	}
	before := conn.Stats().Failures
	if _, stored := a.RememberDecision("local", &ahpv1.Decision{DecisionId: "d-local"}); !stored || conn.Stats().Failures == before {
		t.Fatal("a decision while degraded was not remembered locally, counted")
	}
	proxy.Resume()
	logs.WaitFor(t, "NATS available again", 1)
	if err := conn.Ready(); err != nil {
		t.Fatalf("after the link returned: %v", err)
	}
	if !shared(a, b, "after") {
		t.Fatal("a decision after the link returned is not shared")
	}
	if n := strings.Count(logs.String(), "NATS unavailable"); n != 1 {
		t.Fatalf("the outage was logged %d times, want once", n)
	}
}
