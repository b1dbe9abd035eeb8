package idemkv_test

import (
	"context"
	"fmt"
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

// Lookups that run out of their budget while NATS is up fall back to the local store, counted,
// but do not degrade the cluster (nor fail decisions closed): JetStream still answers. Stopping
// NATS does, logged once; its return ends it, logged once.
func TestSlowLookupsFallBackWithoutDegrading(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	var logs testkit.LogBuffer
	conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "slow",
		LookupBudget: time.Nanosecond, OnUnavailable: cluster.FailClosed}, logs.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	s, err := idemkv.Open(context.Background(), conn, idemkv.Options{LookupFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	const lookups = 20
	for i := range lookups {
		key := idempotency.Key(testkit.ShellEvent(fmt.Sprintf("slow-%d", i), "ls"))
		if _, ok := s.Decision(key); ok {
			t.Fatal("a lookup found a decision nobody made")
		}
		if d, stored := s.RememberDecision(key, &ahpv1.Decision{DecisionId: fmt.Sprintf("d-%d", i)}); !stored || d.GetDecisionId() != fmt.Sprintf("d-%d", i) {
			t.Fatalf("RememberDecision over budget = %v, %v; want ours stored locally", d, stored)
		}
		if d, ok := s.Decision(key); !ok || d.GetDecisionId() != fmt.Sprintf("d-%d", i) {
			t.Fatalf("Decision after a late remember = %v, %v; want the local one", d, ok)
		}
	}
	logs.WaitFor(t, "JetStream answers: not degraded", 1)
	st := conn.Stats()
	if st.Degraded || st.Timeouts < lookups || st.Failures < st.Timeouts {
		t.Fatalf("stats = %+v, want not degraded, at least %d timeouts counted", st, lookups)
	}
	if err := conn.Ready(); err != nil {
		t.Fatalf("Ready = %v after late lookups with NATS up", err)
	}
	if why := conn.Unavailable(); why != "" {
		t.Fatalf("Unavailable = %q after late lookups with NATS up; decisions must not fail closed", why)
	}
	if strings.Contains(logs.String(), "NATS unavailable") {
		t.Fatalf("late lookups logged an outage:\n%s", logs.String())
	}

	srv.Stop()
	logs.WaitFor(t, "NATS unavailable", 1)
	for i := range lookups {
		key := idempotency.Key(testkit.ShellEvent(fmt.Sprintf("down-%d", i), "ls"))
		if _, stored := s.RememberDecision(key, &ahpv1.Decision{DecisionId: "local"}); !stored {
			t.Fatal("RememberDecision without NATS did not store locally")
		}
	}
	if why := conn.Unavailable(); why == "" || !conn.Stats().Degraded {
		t.Fatalf("NATS stopped: Unavailable = %q, stats %+v; want failing closed and degraded", why, conn.Stats())
	}
	srv.Restart()
	logs.WaitFor(t, "NATS available again", 1)
	if why := conn.Unavailable(); why != "" || conn.Ready() != nil {
		t.Fatalf("NATS back: Unavailable = %q, Ready = %v; want shared again", why, conn.Ready())
	}
	if n, m := strings.Count(logs.String(), "NATS unavailable"), strings.Count(logs.String(), "NATS available again"); n != 1 || m != 1 {
		t.Fatalf("the outage was logged %d times at its start and %d at its end, want once each:\n%s", n, m, logs.String())
	}
}

// What a store remembered only locally while NATS was gone (decisions, observations) is written
// to the bucket when NATS answers again, create-if-absent, so a retry on another replica after
// the outage is answered with it; a forgotten decision is not.
func TestLocalDecisionsReachTheBucketWhenItAnswers(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	logs := new(testkit.LogBuffer)
	conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "a", LookupBudget: 5 * time.Second}, logs.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	a, err := idemkv.Open(context.Background(), conn, idemkv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	logs.WaitFor(t, "NATS unavailable", 1)
	decided := idempotency.Key(testkit.ShellEvent("wb-1", "ls"))
	forgotten := idempotency.Key(testkit.ShellEvent("wb-2", "ls"))
	observedKey := idempotency.Key(testkit.ShellEvent("wb-3", "ls"))
	if _, stored := a.RememberDecision(decided, &ahpv1.Decision{DecisionId: "d-local"}); !stored {
		t.Fatal("a decision without NATS was not remembered locally")
	}
	if _, stored := a.RememberDecision(decided, &ahpv1.Decision{DecisionId: "retry"}); stored {
		t.Fatal("a local retry was stored again")
	}
	a.RememberDecision(forgotten, &ahpv1.Decision{DecisionId: "d-forgotten"})
	a.ForgetDecision(forgotten)
	if !a.FirstObservation(observedKey) {
		t.Fatal("an observation without NATS was not first locally")
	}
	if st := a.WriteBack(); st.Pending != 2 || st.PendingBytes <= 0 {
		t.Fatalf("write-back before NATS returned: %+v, want 2 waiting", st)
	}
	srv.Restart()
	logs.WaitFor(t, "are in the bucket now", 1)
	if st := a.WriteBack(); st.Written != 2 || st.Pending != 0 || st.PendingBytes != 0 || st.Conflicts != 0 {
		t.Fatalf("write-back after NATS returned: %+v, want 2 written, nothing waiting", st)
	}
	_, b := open(t, srv.URL(), "b", 5*time.Second)
	if d, stored := b.RememberDecision(decided, &ahpv1.Decision{DecisionId: "other"}); stored || d.GetDecisionId() != "d-local" {
		t.Fatalf("retry on another replica after the outage = %s stored=%v, want d-local standing", d.GetDecisionId(), stored)
	}
	if b.FirstObservation(observedKey) {
		t.Fatal("an observation made during the outage is first again on another replica")
	}
	if _, stored := b.RememberDecision(forgotten, &ahpv1.Decision{DecisionId: "fresh"}); !stored {
		t.Fatal("a decision forgotten during the outage was written to the bucket")
	}
}
