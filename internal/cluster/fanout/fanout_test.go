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

func TestBatchRoundTripAndOlderDecoders(t *testing.T) {
	t.Parallel()
	at := time.Unix(1700000000, 5)
	items := []hub.Item{
		{Event: testkit.ShellEvent("e1", "ls"), Decision: &ahpv1.Decision{DecisionId: "d1"}, Time: at},
		{Event: testkit.ShellEvent("e2", "ls"), Time: at.Add(time.Second)},
		{Event: testkit.ShellEvent("e3", "rm"), Decision: &ahpv1.Decision{DecisionId: "d3", Verdict: ahpv1.Verdict_VERDICT_DENY}, Time: at},
	}
	b, err := fanout.EncodeBatch(items)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fanout.DecodeMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(items) {
		t.Fatalf("%d items, want %d", len(got), len(items))
	}
	for i := range items {
		if !proto.Equal(got[i].Event, items[i].Event) || !proto.Equal(got[i].Decision, items[i].Decision) || !got[i].Time.Equal(items[i].Time) {
			t.Fatalf("item %d changed: %+v", i, got[i])
		}
	}
	// A replica that predates batches reads a message as one frame: it must refuse a batch.
	if _, err := fanout.Decode(b); err == nil {
		t.Fatal("the one-frame decoder accepted a batch")
	}
	// And a one-frame message still decodes as one item.
	one, _ := fanout.Encode(items[0])
	if got, err := fanout.DecodeMessage(one); err != nil || len(got) != 1 || got[0].Event.GetId() != "e1" {
		t.Fatalf("one frame: %v, %v", got, err)
	}
}

func TestDecodeMessageRefusesMalformedBatches(t *testing.T) {
	t.Parallel()
	good, err := fanout.EncodeBatch([]hub.Item{{Event: testkit.ShellEvent("e1", "ls"), Time: time.Now()}, {Event: testkit.ShellEvent("e2", "ls"), Time: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	marker := good[:13]
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for name, c := range map[string]struct {
		b       []byte
		decoded int
	}{
		"empty batch":           {marker, 0},
		"other version":         {cat(good[:12], []byte{2}, good[13:]), 0},
		"short length":          {cat(marker, []byte{0, 0}), 0},
		"length past the end":   {cat(marker, []byte{0x7f, 0xff, 0xff, 0xff}, good[17:]), 0},
		"second item truncated": {good[:len(good)-2], 1},
		"garbage item":          {cat(good, []byte{0, 0, 0, 3, 1, 2, 3}), 2},
	} {
		items, err := fanout.DecodeMessage(c.b)
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if len(items) != c.decoded {
			t.Errorf("%s: %d items decoded before the error, want %d", name, len(items), c.decoded)
		}
	}
}

// FuzzDecodeMessage: whatever a message holds, decoding neither panics nor allocates beyond its
// size, and what decodes encodes back to the same items.
func FuzzDecodeMessage(f *testing.F) {
	one, _ := fanout.Encode(hub.Item{Event: testkit.ShellEvent("e1", "ls"), Decision: &ahpv1.Decision{DecisionId: "d"}, Time: time.Unix(1, 2)})
	batch, _ := fanout.EncodeBatch([]hub.Item{{Event: testkit.ShellEvent("e1", "ls"), Time: time.Unix(1, 2)}, {Event: testkit.ShellEvent("e2", "rm"), Decision: &ahpv1.Decision{}, Time: time.Unix(3, 4)}})
	f.Add(one)
	f.Add(batch)
	f.Add(batch[:13])
	f.Add(append(append([]byte(nil), batch[:13]...), 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := fanout.DecodeMessage(b)
		// Each item takes at least a frame header; nothing allocates for lengths b only claims.
		if len(items) > len(b)/13 {
			t.Fatalf("%d items from %d bytes", len(items), len(b))
		}
		if err != nil || len(items) == 0 {
			return
		}
		again, err := fanout.EncodeBatch(items)
		if err != nil {
			t.Fatal(err)
		}
		back, err := fanout.DecodeMessage(again)
		if err != nil || len(back) != len(items) {
			t.Fatalf("re-encoded items do not decode: %v", err)
		}
		for i := range items {
			if !proto.Equal(back[i].Event, items[i].Event) || !proto.Equal(back[i].Decision, items[i].Decision) ||
				(back[i].Decision == nil) != (items[i].Decision == nil) || !back[i].Time.Equal(items[i].Time) {
				t.Fatalf("item %d changed in a round trip", i)
			}
		}
	})
}
