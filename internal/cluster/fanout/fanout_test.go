package fanout_test

import (
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/proto"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 123456789)
	for name, it := range map[string]hub.Item{
		"decision":    {Event: testkit.ShellEvent("e1", "ls"), Decision: &ahpv1.Decision{DecisionId: "d1", Verdict: ahpv1.Verdict_VERDICT_DENY}, Time: at},
		"observation": {Event: testkit.ShellEvent("e2", "ls"), Time: at},
	} {
		b, err := fanout.Encode(it)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fanout.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !proto.Equal(got.Event, it.Event) || !proto.Equal(got.Decision, it.Decision) || !got.Time.Equal(it.Time) {
			t.Fatalf("%s: round trip changed the item: %+v", name, got)
		}
		if (got.Decision == nil) != (it.Decision == nil) {
			t.Fatalf("%s: an observation must stay an observation", name)
		}
	}
}

func TestDecodeRefusesMalformedFrames(t *testing.T) {
	t.Parallel()
	good, err := fanout.Encode(hub.Item{Event: testkit.ShellEvent("e1", "ls"), Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":            nil,
		"short header":     good[:5],
		"length past end":  append(append([]byte(nil), good[:8]...), 0xff, 0xff, 0xff, 0xff, 0),
		"truncated event":  good[:len(good)-3],
		"garbage decision": append(append(append([]byte(nil), good[:12]...), 1), append(good[13:], 0xff, 0xff)...),
	} {
		if _, err := fanout.Decode(b); err == nil {
			t.Errorf("%s: Decode accepted a malformed frame", name)
		}
	}
}

// Two replicas with the same name (two on one host, both named after it) still exchange their
// items, and neither sees its own twice.
func TestReplicasSharingANameSeeEachOtherOnce(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	var hubs []*hub.Hub
	var outs []*fanout.Fanout
	var subs []*hub.Subscription
	for range 2 {
		conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "same"}, testkit.Discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conn.Close)
		h := hub.New(64, hub.WithBatchWindow(0))
		t.Cleanup(h.Close)
		subs = append(subs, h.Subscribe(hub.Filter{}, 64))
		f, err := fanout.Start(conn, h, fanout.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		hubs, outs = append(hubs, h), append(outs, f)
	}
	outs[0].Publish(hub.Item{Event: testkit.ShellEvent("from-0", "ls"), Time: time.Now()})
	outs[1].Publish(hub.Item{Event: testkit.ShellEvent("from-1", "ls"), Time: time.Now()})
	// A sentinel from each after its item: the next item each hub gets after its own two.
	outs[0].Publish(hub.Item{Event: testkit.ShellEvent("end-0", "ls"), Time: time.Now()})
	outs[1].Publish(hub.Item{Event: testkit.ShellEvent("end-1", "ls"), Time: time.Now()})
	for i, sub := range subs {
		seen := map[string]int{}
		for len(seen) < 4 {
			it := testkit.Receive(t, sub.Items(), "a Watch item")
			seen[it.Event.GetId()]++
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("hub %d saw %s %d times, want once", i, id, n)
			}
		}
	}
}
