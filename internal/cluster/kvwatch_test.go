package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A watch outlives the context it was started with (the client library ends a watcher with its
// context) and is not recreated while it delivers: before this was fixed, a watch started with a
// setup context, or resumed after a reconnect, ended at once and was recreated in a loop, one
// JetStream consumer after another.
func TestKVWatchOutlivesItsStartContextWithOneConsumer(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "w"}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	var creates atomic.Int64
	if _, err := nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.CREATED.>", func(*nats.Msg) { creates.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := conn.KeyValue(ctx, jetstream.KeyValueConfig{Bucket: "watched"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 64)
	startCtx, endStart := context.WithCancel(ctx)
	w, err := cluster.WatchKV(startCtx, conn, kv, ">", "watched", func(e jetstream.KeyValueEntry, live bool) {
		if live {
			got <- string(e.Value())
		}
	}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	endStart() // as a setup context ends once the server has started
	testkit.Receive(t, w.Ready(), "the watch never delivered the (empty) bucket")
	const n = 20
	for i := range n {
		if _, err := kv.Put(ctx, fmt.Sprintf("k%d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
		if v := testkit.Receive(t, got, "a change was not delivered"); v != fmt.Sprintf("v%d", i) {
			t.Fatalf("delivered %q, want v%d", v, i)
		}
	}
	// The advisory of the one consumer has arrived long before the last change did.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if c := creates.Load(); c != 1 {
		t.Fatalf("%d consumers created for one watch over %d changes, want 1", c, n)
	}
}
