package fanout_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/fanout"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/nats-io/nats.go"
)

// replica is one fan-out with its hub, on its own NATS connection.
type replica struct {
	name   string
	conn   *cluster.Conn
	hub    *hub.Hub
	f      *fanout.Fanout
	timers *manualTimers
}

func startReplica(t testing.TB, cfg cluster.Config, opts fanout.Options) *replica {
	t.Helper()
	conn, err := cluster.Connect(cfg, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	r := &replica{name: cfg.Name, conn: conn, hub: hub.New(1<<16, hub.WithBatchWindow(0)), timers: &manualTimers{}}
	t.Cleanup(r.hub.Close)
	if opts.AfterFunc == nil {
		opts.AfterFunc = r.timers.AfterFunc
	}
	opts.Logger = testkit.Discard()
	if r.f, err = fanout.Start(conn, r.hub, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.f.Close)
	return r
}

func onServer(t testing.TB, url, name string, opts fanout.Options) *replica {
	t.Helper()
	return startReplica(t, cluster.Config{Servers: []string{url}, Name: name}, opts)
}

// manualTimers stand in for time.AfterFunc: nothing fires until the test says so.
type manualTimers struct {
	mu     sync.Mutex
	timers []*manualTimer
}

type manualTimer struct {
	d              time.Duration
	f              func()
	stopped, fired bool
}

func (m *manualTimers) AfterFunc(d time.Duration, f func()) func() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	tm := &manualTimer{d: d, f: f}
	m.timers = append(m.timers, tm)
	return func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		live := !tm.stopped && !tm.fired
		tm.stopped = true
		return live
	}
}

// pending returns the durations of the timers neither stopped nor fired.
func (m *manualTimers) pending() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	for _, tm := range m.timers {
		if !tm.stopped && !tm.fired {
			out = append(out, tm.d)
		}
	}
	return out
}

// fireAll runs every pending timer, as if its time had come, and returns how many it ran.
func (m *manualTimers) fireAll() int {
	m.mu.Lock()
	var due []func()
	for _, tm := range m.timers {
		if !tm.stopped && !tm.fired {
			tm.fired = true
			due = append(due, tm.f)
		}
	}
	m.mu.Unlock()
	for _, f := range due {
		f()
	}
	return len(due)
}

// watchSubscription returns what the server says of r's subscription to the Watch subjects:
// whether it has one, and the messages the server delivered to it. With flush, it first makes
// sure the server has what r's connection wrote (an unsubscription is sent soon, not at once);
// without, it tells what the server had already.
func watchSubscription(t *testing.T, srv *natstest.Server, r *replica, flush bool) (subscribed bool, msgs uint64) {
	t.Helper()
	if flush {
		if err := r.conn.NATS().Flush(); err != nil {
			t.Fatal(err)
		}
	}
	name := r.name
	found := false
	for _, c := range srv.Connections(t) {
		if c.Name != "ahp-server/"+name {
			continue
		}
		found = true
		for _, s := range c.Subscriptions {
			if s.Subject == "ahp.watch.*" {
				subscribed, msgs = true, msgs+s.Msgs
			}
		}
	}
	if !found {
		t.Fatalf("the server has no connection named ahp-server/%s", name)
	}
	return subscribed, msgs
}

// probe subscribes a plain connection to every replica's Watch items and returns the items in
// the order they come.
func probe(t *testing.T, url string) <-chan hub.Item {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	out := make(chan hub.Item, 1<<16)
	if _, err := nc.Subscribe("ahp.watch.*", func(m *nats.Msg) {
		items, err := fanout.DecodeMessage(m.Data)
		if err != nil {
			t.Errorf("probe: %v", err)
		}
		for _, it := range items {
			out <- it
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return out
}

func item(id string) hub.Item {
	return hub.Item{Event: testkit.ShellEvent(id, "ls"), Time: time.Now()}
}

// receiveUntil reads s until the item with id end and returns the ids before it.
func receiveUntil(t *testing.T, s *hub.Subscription, end string) []string {
	t.Helper()
	var ids []string
	for {
		it := testkit.Receive(t, s.Items(), "a Watch item (waiting for "+end+")")
		if it.Event.GetId() == end {
			return ids
		}
		ids = append(ids, it.Event.GetId())
	}
}

func wantIDs(t *testing.T, what string, got []string, prefix string, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d items, want %d: %v", what, len(got), n, got)
	}
	for i, id := range got {
		if want := fmt.Sprintf("%s-%d", prefix, i); id != want {
			t.Fatalf("%s: item %d is %s, want %s (every item once, in order)", what, i, id, want)
		}
	}
}

// While nobody watches a replica it holds no subscription, and the server delivers it nothing.
func TestUnwatchedReplicaIsSentNothing(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	a := onServer(t, srv.URL(), "a", fanout.Options{})
	b := onServer(t, srv.URL(), "b", fanout.Options{})
	seen := probe(t, srv.URL())
	const n = 200
	for i := range n {
		a.f.Publish(item(fmt.Sprintf("x-%d", i)))
	}
	for range n { // the server routed every item (to the probe)
		testkit.Receive(t, seen, "an item at the probe")
	}
	if sub, _ := watchSubscription(t, srv, b, true); sub {
		t.Fatal("the server holds a Watch subscription of b, which nobody watches")
	}
	if st := b.f.Stats(); st.Subscribed || st.Subscribes != 0 || st.ReceivedMessages != 0 {
		t.Fatalf("unwatched b: %+v, want no subscription and nothing received", st)
	}
	if st := a.f.Stats(); st.Sent != n {
		t.Fatalf("a sent %d items, want %d", st.Sent, n)
	}
}

// A Watch that has started gets every item another replica publishes after that, exactly once,
// including right after the first subscriber made the fan-out subscribe.
func TestWatchSeesEveryItemPublishedAfterItStartedOnce(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	a := onServer(t, srv.URL(), "a", fanout.Options{})
	b := onServer(t, srv.URL(), "b", fanout.Options{})
	const rounds, n = 20, 50
	for r := range rounds {
		s := b.hub.Subscribe(hub.Filter{}, 1024)
		prefix := fmt.Sprintf("r%d", r)
		for i := range n {
			a.f.Publish(item(fmt.Sprintf("%s-%d", prefix, i)))
		}
		a.f.Publish(item(prefix + "-end"))
		wantIDs(t, "round "+prefix, receiveUntil(t, s, prefix+"-end"), prefix, n)
		s.Close()
		// The linger ends: the next round subscribes anew.
		if fired := b.timers.fireAll(); fired != 1 {
			t.Fatalf("round %d: %d linger timers fired, want 1", r, fired)
		}
		if st := b.f.Stats(); st.Subscribed || st.Subscribes != uint64(r+1) || st.Unsubscribes != uint64(r+1) {
			t.Fatalf("round %d: %+v, want unsubscribed after %d subscriptions", r, st, r+1)
		}
	}
	if sub, msgs := watchSubscription(t, srv, b, true); sub || msgs != 0 {
		t.Fatalf("after the last round the server still holds b's subscription (%d messages)", msgs)
	}
	if st := b.f.Stats(); st.Received != rounds*(n+1) || st.Unconfirmed != 0 {
		t.Fatalf("b: %+v, want %d items received, every subscription confirmed", st, rounds*(n+1))
	}
}

// The subscription outlives the last watcher by the linger, so watchers coming and going do not
// make the replica subscribe each time; after it, the replica unsubscribes, and the next watcher
// subscribes again.
func TestLingerKeepsTheSubscriptionThroughChurn(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	a := onServer(t, srv.URL(), "a", fanout.Options{})
	b := onServer(t, srv.URL(), "b", fanout.Options{Linger: 30 * time.Second})
	w1 := b.hub.Subscribe(hub.Filter{}, 64)
	if sub, _ := watchSubscription(t, srv, b, false); !sub {
		t.Fatal("a watcher's Subscribe returned before the server had the replica's subscription")
	}
	w1.Close()
	if p := b.timers.pending(); len(p) != 1 || p[0] != 30*time.Second {
		t.Fatalf("pending linger timers %v, want one of 30s", p)
	}
	w2 := b.hub.Subscribe(hub.Filter{}, 64)
	b.timers.fireAll() // its time comes while w2 watches: nothing changes
	if st := b.f.Stats(); !st.Subscribed || st.Subscribes != 1 {
		t.Fatalf("with a watcher back within the linger: %+v, want the one subscription kept", st)
	}
	a.f.Publish(item("w2-0"))
	a.f.Publish(item("w2-end"))
	wantIDs(t, "w2", receiveUntil(t, w2, "w2-end"), "w2", 1)
	w2.Close()
	// Lingering: items still come but nobody watches, so they are not decoded.
	a.f.Publish(item("unwatched"))
	waitFor(t, "the lingering subscription to get a message", func() bool { return b.f.Stats().Unwatched == 1 })
	if got := b.f.Stats().Received; got != 2 {
		t.Fatalf("received %d items, want the 2 of w2 (none decoded while nobody watched)", got)
	}
	if n := b.timers.fireAll(); n != 1 {
		t.Fatalf("%d timers fired, want 1", n)
	}
	if sub, _ := watchSubscription(t, srv, b, true); sub {
		t.Fatal("the server still holds b's subscription after the linger")
	}
	w3 := b.hub.Subscribe(hub.Filter{}, 64)
	if sub, _ := watchSubscription(t, srv, b, false); !sub {
		t.Fatal("a new watcher's Subscribe returned before the server had the replica's subscription")
	}
	a.f.Publish(item("w3-0"))
	a.f.Publish(item("w3-end"))
	wantIDs(t, "w3", receiveUntil(t, w3, "w3-end"), "w3", 1)
	if st := b.f.Stats(); st.Subscribes != 2 || st.Unsubscribes != 1 {
		t.Fatalf("%+v, want 2 subscriptions and 1 unsubscription", st)
	}
}

// With the real clock and no linger the subscription ends as soon as the last watcher leaves.
func TestNoLingerUnsubscribesAtOnce(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	b := onServer(t, srv.URL(), "b", fanout.Options{Linger: -1, AfterFunc: func(d time.Duration, f func()) func() bool {
		return time.AfterFunc(d, f).Stop
	}})
	b.hub.Subscribe(hub.Filter{}, 4).Close()
	waitFor(t, "the subscription to end", func() bool { return !b.f.Stats().Subscribed })
	if sub, _ := watchSubscription(t, srv, b, true); sub {
		t.Fatal("the server still holds b's subscription")
	}
}

// Queued items go as one message, bounded in items, in order, and a single item as a frame an
// older replica reads.
func TestQueuedItemsGoInBatches(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a := onServer(t, srv.URL(), "a", fanout.Options{Transform: func(it hub.Item) hub.Item {
		once.Do(func() { close(entered); <-release })
		return it
	}})
	b := onServer(t, srv.URL(), "b", fanout.Options{})
	w := b.hub.Subscribe(hub.Filter{}, 4096)
	a.f.Publish(item("q-0"))
	<-entered // the publisher holds q-0; the rest queue up behind it
	const n = 600
	for i := 1; i < n; i++ {
		a.f.Publish(item(fmt.Sprintf("q-%d", i)))
	}
	close(release)
	a.f.Publish(item("q-end")) // may join the last batch or go alone
	wantIDs(t, "batched", receiveUntil(t, w, "q-end"), "q", n)
	waitFor(t, "a to count what it sent", func() bool { return a.f.Stats().Sent == n+1 })
	st := a.f.Stats()
	// 256 + 256 + 88, then q-end with the last or alone.
	if st.Sent != n+1 || st.SentMessages < 3 || st.SentMessages > 4 {
		t.Fatalf("a: %d items in %d messages, want %d in 3 or 4", st.Sent, st.SentMessages, n+1)
	}
	if got := b.f.Stats(); got.ReceivedMessages != st.SentMessages || got.Received != n+1 {
		t.Fatalf("b: %+v, want %d messages carrying %d items", got, st.SentMessages, n+1)
	}
}

// A batch stays within BatchBytes.
func TestBatchesAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	const limit = 4096
	a := onServer(t, srv.URL(), "a", fanout.Options{BatchBytes: limit, Transform: func(it hub.Item) hub.Item {
		once.Do(func() { close(entered); <-release })
		return it
	}})
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msgs, err := nc.SubscribeSync("ahp.watch.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1000) // about 1 KiB a frame: three fit in a batch
	const n = 30
	a.f.Publish(hub.Item{Event: testkit.ShellEvent("b-0", big), Time: time.Now()})
	<-entered
	for i := 1; i < n; i++ {
		a.f.Publish(hub.Item{Event: testkit.ShellEvent(fmt.Sprintf("b-%d", i), big), Time: time.Now()})
	}
	close(release)
	var ids []string
	for len(ids) < n {
		m, err := msgs.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("after %d items: %v", len(ids), err)
		}
		if len(m.Data) > limit {
			t.Fatalf("a message of %d bytes, over BatchBytes %d", len(m.Data), limit)
		}
		items, err := fanout.DecodeMessage(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			ids = append(ids, it.Event.GetId())
		}
	}
	wantIDs(t, "bounded batches", ids, "b", n)
	waitFor(t, "a to count what it sent", func() bool { return a.f.Stats().Sent == n })
	if st := a.f.Stats(); st.SentMessages < n/3 || st.SentMessages >= n {
		t.Fatalf("%d items in %d messages, want about three a message", st.Sent, st.SentMessages)
	}
}

// A message of one item in the format of replicas older than batches still reaches the watchers.
func TestOneItemMessagesOfOlderReplicasDecode(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	b := onServer(t, srv.URL(), "b", fanout.Options{})
	w := b.hub.Subscribe(hub.Filter{}, 64)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	frame, err := fanout.Encode(hub.Item{Event: testkit.ShellEvent("old-0", "ls"), Decision: &ahpv1.Decision{DecisionId: "d"}, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	end, _ := fanout.Encode(item("old-end"))
	for _, data := range [][]byte{frame, end} {
		if err := nc.PublishMsg(&nats.Msg{Subject: "ahp.watch.old", Data: data, Header: nats.Header{"Ahp-Origin": []string{"older"}}}); err != nil {
			t.Fatal(err)
		}
	}
	wantIDs(t, "from an older replica", receiveUntil(t, w, "old-end"), "old", 1)
}

// Started while NATS is down, a replica's watcher does not wait for it; once NATS is there the
// subscription is made and the other replicas' items come.
func TestWatchOnAReplicaStartedDegraded(t *testing.T) {
	t.Parallel()
	srv := natstest.Later(t)
	b := startReplica(t, cluster.Config{Servers: []string{srv.URL()}, Name: "b", OnStartUnavailable: cluster.Degrade}, fanout.Options{})
	w := b.hub.Subscribe(hub.Filter{}, 64)
	if st := b.f.Stats(); !st.Subscribed || st.Unconfirmed != 1 {
		t.Fatalf("degraded: %+v, want a subscription held, unconfirmed", st)
	}
	srv.Run()
	a := onServer(t, srv.URL(), "a", fanout.Options{})
	nc := b.conn.NATS()
	waitFor(t, "b to connect", nc.IsConnected)
	if err := nc.Flush(); err != nil { // the subscription, sent again on connect, is at the server
		t.Fatal(err)
	}
	a.f.Publish(item("late-0"))
	a.f.Publish(item("late-end"))
	wantIDs(t, "after NATS came", receiveUntil(t, w, "late-end"), "late", 1)
}

// waitFor waits until cond holds, up to ten seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// An item larger than a batch may be goes alone, in its place; one over MaxItemBytes is dropped
// and counted; the order of the others holds.
func TestLargeItemsGoAloneInOrder(t *testing.T) {
	t.Parallel()
	srv := natstest.StartMonitored(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a := onServer(t, srv.URL(), "a", fanout.Options{BatchBytes: 4096, MaxItemBytes: 16 << 10, Transform: func(it hub.Item) hub.Item {
		once.Do(func() { close(entered); <-release })
		return it
	}})
	b := onServer(t, srv.URL(), "b", fanout.Options{})
	w := b.hub.Subscribe(hub.Filter{}, 64)
	big := func(id string, n int) hub.Item {
		return hub.Item{Event: testkit.ShellEvent(id, strings.Repeat("x", n)), Time: time.Now()}
	}
	a.f.Publish(item("l-0"))
	<-entered
	a.f.Publish(item("l-1"))
	a.f.Publish(big("l-2", 6000))      // over BatchBytes: alone, after l-0 and l-1
	a.f.Publish(item("l-3"))           // a new batch
	a.f.Publish(big("dropped", 20000)) // over MaxItemBytes
	a.f.Publish(item("l-4"))
	a.f.Publish(item("l-end"))
	close(release)
	wantIDs(t, "large items", receiveUntil(t, w, "l-end"), "l", 5)
	waitFor(t, "a to count what it sent", func() bool { return a.f.Stats().Sent == 6 })
	if st := a.f.Stats(); st.Dropped != 1 || st.SentMessages != 3 {
		t.Fatalf("a: %+v, want 1 dropped and 3 messages (l-0 l-1 | l-2 | l-3 l-4 l-end)", st)
	}
}
