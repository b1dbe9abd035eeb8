package approvalkv_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/approvalkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/nats-io/nats.go"
)

var t0 = time.Now().Truncate(time.Second)

func open(t *testing.T, url, name string, opts approval.MemoryOptions) *approvalkv.Store {
	t.Helper()
	s, _ := openConn(t, url, name, opts)
	return s
}

func openConn(t *testing.T, url, name string, opts approval.MemoryOptions) (*approvalkv.Store, *cluster.Conn) {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, Name: name, LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	s, err := approvalkv.Open(context.Background(), conn, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, conn
}

func pending(id, key, agent string) approval.Approval {
	return approval.Approval{ID: id, Key: key, Agent: agent, RuleIDs: []string{"r"}, CreatedAt: t0, HoldUntil: t0.Add(time.Minute), TTL: time.Minute}
}

// changes collects a store's changes on a channel.
func changes(t *testing.T, s approval.Store) <-chan approval.Change {
	ch := make(chan approval.Change, 64)
	t.Cleanup(s.Subscribe(func(c approval.Change) {
		select {
		case ch <- c:
		default:
		}
	}))
	return ch
}

func next(t *testing.T, ch <-chan approval.Change) approval.Change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no approval change within 10s")
	}
	return approval.Change{}
}

// Open on another store joins the pending approval of the same action; a decision through one
// store reaches the other's subscribers as a remote change; a second decision keeps the first.
func TestOpenJoinsAndDecisionReachesOtherReplica(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, b := open(t, srv.URL(), "a", approval.MemoryOptions{}), open(t, srv.URL(), "b", approval.MemoryOptions{})
	onA, onB := changes(t, a), changes(t, b)
	got, created, err := a.Open(pending("1", "k1", "ag"), t0)
	if err != nil || !created || got.State != approval.StatePending || got.Revision == 0 {
		t.Fatalf("open = %+v, created %v, %v; want a new pending approval with a revision", got, created, err)
	}
	if c := next(t, onA); c.Kind != approval.Requested || c.Remote {
		t.Fatalf("on a: %v remote=%v, want a local requested", c.Kind, c.Remote)
	}
	if c := next(t, onB); c.Kind != approval.Requested || !c.Remote || c.Approval.ID != "1" {
		t.Fatalf("on b: %v remote=%v %q, want a remote requested of 1", c.Kind, c.Remote, c.Approval.ID)
	}
	joined, created, err := b.Open(pending("2", "k1", "ag"), t0)
	if err != nil || created || joined.ID != "1" {
		t.Fatalf("second open = %q created %v, %v; want to join 1", joined.ID, created, err)
	}
	if _, err := b.Decide("1", approval.Decision{Approve: true, By: "alice", Comment: "ok"}, t0); err != nil {
		t.Fatal(err)
	}
	if c := next(t, onA); c.Kind != approval.Decided || !c.Remote || c.Approval.State != approval.StateApproved || c.Approval.DecidedBy != "alice" {
		t.Fatalf("on a: %+v, want a remote decision approved by alice", c)
	}
	if _, err := a.Decide("1", approval.Decision{By: "bob"}, t0); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("second decision: %v, want ErrDecided", err)
	}
	if g, err := a.Get("1", t0); err != nil || g.State != approval.StateApproved || g.DecidedBy != "alice" {
		t.Fatalf("after a second decision: %+v, %v; want the first to stand", g, err)
	}
	if _, err := a.Decide("nope", approval.Decision{}, t0); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("unknown id: %v, want ErrNotFound", err)
	}
	if l := b.List(approval.Filter{State: approval.StateApproved}, t0); len(l) != 1 || l[0].ID != "1" {
		t.Fatalf("list on b = %v, want approval 1", l)
	}
}

// Eight consumers on two stores race for one grant: exactly one gets it; a retry of the winning
// event gets it again, another event does not.
func TestConsumeOnceUnderConcurrentConsumers(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	stores := []*approvalkv.Store{open(t, srv.URL(), "a", approval.MemoryOptions{}), open(t, srv.URL(), "b", approval.MemoryOptions{})}
	if _, _, err := stores[0].Open(pending("1", "k1", "ag"), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[1].Decide("1", approval.Decision{Approve: true, By: "alice"}, t0); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ev := fmt.Sprint("ev", i)
			if _, ok := stores[i%2].Consume("k1", ev, t0.Add(time.Second)); ok {
				wins.Add(1)
				winner.Store(ev)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d consumers got the grant, want exactly 1", n)
	}
	if _, ok := stores[1].Consume("k1", winner.Load().(string), t0.Add(2*time.Second)); !ok {
		t.Error("a retry of the winning event was refused")
	}
	if _, ok := stores[0].Consume("k1", "other", t0.Add(2*time.Second)); ok {
		t.Error("another event used a consumed grant")
	}
	// The action asks afresh after its grant was used.
	if a, created, err := stores[0].Open(pending("2", "k1", "ag"), t0.Add(3*time.Second)); err != nil || !created || a.ID != "2" {
		t.Fatalf("open after use = %q created %v, %v; want a new approval", a.ID, created, err)
	}
}

// Concurrent opens of one action on two stores make one approval.
func TestConcurrentOpensMakeOneApproval(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	stores := []*approvalkv.Store{open(t, srv.URL(), "a", approval.MemoryOptions{}), open(t, srv.URL(), "b", approval.MemoryOptions{})}
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, _, err := stores[i%2].Open(pending(fmt.Sprint("id", i), "k", "ag"), t0)
			if err != nil {
				t.Error(err)
			}
			ids[i] = a.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("opens got ids %v, want one approval", ids)
		}
	}
}

// The hold ends: expired (a decision then fails with ErrExpired), and the action may ask afresh.
func TestExpire(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, b := open(t, srv.URL(), "a", approval.MemoryOptions{Retain: time.Hour}), open(t, srv.URL(), "b", approval.MemoryOptions{Retain: time.Hour})
	onB := changes(t, b)
	a.Open(pending("1", "k1", "ag"), t0)
	next(t, onB)
	b.Expire(t0.Add(time.Minute))
	c := next(t, onB)
	if c.Kind != approval.Expired || c.Remote || c.Approval.Latency() != time.Minute {
		t.Fatalf("change = %+v, want a local expiry after a minute", c)
	}
	if _, err := a.Decide("1", approval.Decision{Approve: true, By: "alice"}, t0.Add(time.Minute)); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("deciding an expired approval: %v, want ErrExpired", err)
	}
	if _, created, err := a.Open(pending("2", "k1", "ag"), t0.Add(time.Minute)); err != nil || !created {
		t.Fatalf("open after expiry: created %v, %v; want a new approval", created, err)
	}
	if _, err := a.Get("1", t0.Add(3*time.Hour)); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("expired approval visible past retention: %v", err)
	}
}

// The pending caps and the byte bound of approval.Memory hold across replicas.
func TestCapsAndByteBound(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	opts := approval.MemoryOptions{MaxPending: 3, MaxPendingPerAgent: 2}
	a, b := open(t, srv.URL(), "a", opts), open(t, srv.URL(), "b", opts)
	onB := changes(t, b)
	for i, agent := range []string{"x", "x", "y"} {
		if _, _, err := a.Open(pending(fmt.Sprint(i), fmt.Sprint("k", i), agent), t0); err != nil {
			t.Fatal(err)
		}
		next(t, onB)
	}
	if _, _, err := b.Open(pending("9", "k9", "z"), t0); !errors.Is(err, approval.ErrFull) {
		t.Fatalf("over the pending cap on the other replica: %v, want ErrFull", err)
	}
	srv2 := natstest.Start(t)
	small := open(t, srv2.URL(), "s", approval.MemoryOptions{MaxBytes: 8 << 10})
	onS := changes(t, small)
	for i := range 12 {
		p := pending(fmt.Sprint(i), fmt.Sprint("k", i), "ag")
		p.Input = strings.Repeat("i", 1500)
		if _, _, err := small.Open(p, t0); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		next(t, onS)
		if _, err := small.Decide(p.ID, approval.Decision{By: "bob"}, t0); err != nil {
			t.Fatal(err)
		}
		next(t, onS)
	}
	if _, err := small.Get("0", t0); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("oldest decided approval kept past the byte bound: %v", err)
	}
	if _, err := small.Get("11", t0); err != nil {
		t.Errorf("newest approval forgotten: %v", err)
	}
}

// With NATS gone, Open fails with ErrUnavailable (the core denies), Consume grants nothing.
func TestUnavailableNeverGrants(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	s := open(t, srv.URL(), "a", approval.MemoryOptions{})
	s.Open(pending("1", "k1", "ag"), t0)
	if _, err := s.Decide("1", approval.Decision{Approve: true, By: "alice"}, t0); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	var err error
	for range 20 { // until the client has seen the connection drop
		if _, _, err = s.Open(pending("2", "k2", "ag"), t0); errors.Is(err, approval.ErrUnavailable) {
			break
		}
	}
	if !errors.Is(err, approval.ErrUnavailable) {
		t.Fatalf("open without NATS: %v, want ErrUnavailable", err)
	}
	if _, ok := s.Consume("k1", "ev", t0); ok {
		t.Fatal("a grant was used without NATS")
	}
	if _, err := s.Decide("2", approval.Decision{By: "alice"}, t0); !errors.Is(err, approval.ErrUnavailable) {
		t.Fatalf("decide without NATS: %v, want ErrUnavailable", err)
	}
}

// After NATS restarts, a decision through one store still reaches the other's subscribers (the
// watcher resumes), and the pending approval is still there (file storage).
func TestWatcherResumesAfterNATSRestart(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a, connA := openConn(t, srv.URL(), "a", approval.MemoryOptions{})
	logB := &testkit.LogBuffer{}
	connB, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "b", LookupBudget: 10 * time.Second}, logB.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(connB.Close)
	b, err := approvalkv.Open(context.Background(), connB, approval.MemoryOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	onA := changes(t, a)
	a.Open(pending("1", "k1", "ag"), t0)
	next(t, onA)
	backA := connA.NATS().StatusChanged(nats.CONNECTED)
	backB := connB.NATS().StatusChanged(nats.CONNECTED)
	srv.Stop()
	srv.Restart()
	testkit.Receive(t, backA, "replica a did not reconnect")
	testkit.Receive(t, backB, "replica b did not reconnect")
	natstest.WaitJetStream(t, srv.URL())
	// b's degraded period ends once its check finds JetStream answering, logged once.
	logB.WaitFor(t, "NATS available again", 1)
	if _, err := b.Decide("1", approval.Decision{Approve: true, By: "alice"}, t0); err != nil {
		t.Fatalf("decide after the restart: %v", err)
	}
	if c := next(t, onA); c.Kind != approval.Decided || !c.Remote {
		t.Fatalf("on a after the restart: %+v, want the remote decision", c)
	}
}
