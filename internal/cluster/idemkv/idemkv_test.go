package idemkv_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func open(t *testing.T, url, name string, budget time.Duration) (*cluster.Conn, *idemkv.Store) {
	t.Helper()
	conn, err := cluster.Connect(cluster.Config{Servers: []string{url}, Name: name, LookupBudget: budget}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	s, err := idemkv.Open(context.Background(), conn, idemkv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return conn, s
}

func TestFirstWriterWinsAcrossStores(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, a := open(t, srv.URL(), "a", 5*time.Second)
	_, b := open(t, srv.URL(), "b", 5*time.Second)
	key := idempotency.Key(testkit.ShellEvent("e1", "ls"))
	var wg sync.WaitGroup
	var won [2]bool
	var stands [2]string
	for i, s := range []*idemkv.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, stored := s.RememberDecision(key, &ahpv1.Decision{DecisionId: []string{"da", "db"}[i]})
			won[i], stands[i] = stored, d.GetDecisionId()
		}()
	}
	wg.Wait()
	if won[0] == won[1] || stands[0] != stands[1] {
		t.Fatalf("stored = %v, standing = %v: want one writer to win and both to see its decision", won, stands)
	}
	// A retry on either store gets the standing decision.
	if d, stored := b.RememberDecision(key, &ahpv1.Decision{DecisionId: "retry"}); stored || d.GetDecisionId() != stands[0] {
		t.Fatalf("retry on b: %v stored=%v; want %s standing", d.GetDecisionId(), stored, stands[0])
	}
	a.ForgetDecision(key)
	if d, stored := b.RememberDecision(key, &ahpv1.Decision{DecisionId: "fresh"}); !stored || d.GetDecisionId() != "fresh" {
		t.Fatal("a forgotten decision still stands on the other store")
	}
	// Long keys (another scheme may prefix a principal) are opaque too.
	long := strings.Repeat("principal/", 20) + key
	if !a.FirstObservation(long) || b.FirstObservation(long) {
		t.Fatal("an observation must be first exactly once across stores")
	}
}

func TestDegradesToLocalWhenNATSGoes(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	conn, s := open(t, srv.URL(), "a", 100*time.Millisecond)
	if err := conn.Ready(); err != nil {
		t.Fatalf("Ready = %v while connected", err)
	}
	srv.Stop()
	key := idempotency.Key(testkit.ShellEvent("e2", "ls"))
	if _, stored := s.RememberDecision(key, &ahpv1.Decision{DecisionId: "local"}); !stored {
		t.Fatal("RememberDecision without NATS did not store locally")
	}
	if d, ok := s.Decision(key); !ok || d.GetDecisionId() != "local" {
		t.Fatalf("Decision without NATS = %v, %v; want the local one", d, ok)
	}
	if conn.Ready() == nil {
		t.Fatal("Ready = nil with NATS stopped")
	}
	if st := conn.Stats(); !st.Degraded || st.Failures == 0 {
		t.Fatalf("stats = %+v, want degraded with failures counted", st)
	}
}
