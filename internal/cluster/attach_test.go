package cluster_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/approvalkv"
	"github.com/ahp-gateway/ahp/internal/cluster/auditstream"
	"github.com/ahp-gateway/ahp/internal/cluster/idemkv"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/policykv"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// waitClosed fails t unless ch is closed within testkit.WaitTimeout.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	timer := time.NewTimer(testkit.WaitTimeout)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("%s: not attached within %v of NATS starting", what, testkit.WaitTimeout)
	}
}

// With on_start_unavailable degrade and NATS not running, every store opens at once on its
// local fallback (the idempotency store remembers locally, approvals answer unavailable, audit
// records fail and are counted, the policy watch waits); when NATS starts each attaches in the
// background and from then on the shared bucket or stream is used.
func TestStoresStartedDegradedAttachWhenNATSComes(t *testing.T) {
	t.Parallel()
	srv := natstest.Later(t)
	conn, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "late",
		OnStartUnavailable: cluster.Degrade, LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	// The setup context is already over: nothing may wait for NATS.
	over, cancel := context.WithCancel(context.Background())
	cancel()
	idem, err := idemkv.Open(over, conn, idemkv.Options{})
	if err != nil {
		t.Fatalf("idemkv.Open with NATS down in degrade mode: %v", err)
	}
	approvals, err := approvalkv.Open(over, conn, approval.MemoryOptions{}, nil)
	if err != nil {
		t.Fatalf("approvalkv.Open with NATS down in degrade mode: %v", err)
	}
	t.Cleanup(approvals.Close)
	pub, err := auditstream.Open(over, conn, auditstream.Options{Required: true})
	if err != nil {
		t.Fatalf("auditstream.Open with NATS down in degrade mode: %v", err)
	}
	applied := make(chan *policy.Policy, 4)
	follow, stopFollow := context.WithCancel(context.Background())
	t.Cleanup(stopFollow)
	if err := policykv.Follow(follow, conn, func(p *policy.Policy) { applied <- p }, true, testkit.Discard()); err != nil {
		t.Fatalf("policykv.Follow with NATS down in degrade mode: %v", err)
	}

	early := idempotency.Key(testkit.ShellEvent("early", "ls"))
	if _, stored := idem.RememberDecision(early, &ahpv1.Decision{DecisionId: "d-early"}); !stored {
		t.Fatal("the first decision before NATS was not remembered locally")
	}
	if d, stored := idem.RememberDecision(early, &ahpv1.Decision{DecisionId: "retry"}); stored || d.GetDecisionId() != "d-early" {
		t.Fatalf("a retry before NATS = %s stored=%v, want d-early from the local store", d.GetDecisionId(), stored)
	}
	if _, _, err := approvals.Open(approval.Approval{ID: "1", Key: "k", Agent: "ag", CreatedAt: time.Now(), HoldUntil: time.Now().Add(time.Minute), TTL: time.Minute}, time.Now()); !errors.Is(err, approval.ErrUnavailable) {
		t.Fatalf("approval Open before NATS = %v, want ErrUnavailable", err)
	}
	if err := pub.Publish(audit.Record{Kind: audit.KindObservation, EventID: "early"}); !errors.Is(err, cluster.ErrNotAttached) {
		t.Fatalf("audit Publish before NATS = %v, want ErrNotAttached", err)
	}
	if st := conn.Stats(); !st.Degraded || st.Failures == 0 || pub.Stats().Failed != 1 {
		t.Fatalf("before NATS: stats %+v, audit %+v; want degraded with failures counted", st, pub.Stats())
	}

	srv.Run()
	waitClosed(t, idem.Ready(), "idempotency bucket")
	waitClosed(t, approvals.Ready(), "approval bucket")
	waitClosed(t, pub.Ready(), "audit stream")

	// Shared from now on: a decision remembered here stands on another replica.
	other, err := cluster.Connect(cluster.Config{Servers: []string{srv.URL()}, Name: "other", LookupBudget: 10 * time.Second}, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	setup, cancelSetup := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancelSetup()
	otherIdem, err := idemkv.Open(setup, other, idemkv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	shared := idempotency.Key(testkit.ShellEvent("shared", "ls"))
	if _, stored := idem.RememberDecision(shared, &ahpv1.Decision{DecisionId: "d-shared"}); !stored {
		t.Fatal("the first decision after attaching was not stored")
	}
	if d, stored := otherIdem.RememberDecision(shared, &ahpv1.Decision{DecisionId: "retry"}); stored || d.GetDecisionId() != "d-shared" {
		t.Fatalf("retry on the other replica = %s stored=%v, want d-shared standing", d.GetDecisionId(), stored)
	}
	if _, created, err := approvals.Open(approval.Approval{ID: "2", Key: "k", Agent: "ag", RuleIDs: []string{"r"}, CreatedAt: time.Now(), HoldUntil: time.Now().Add(time.Minute), TTL: time.Minute}, time.Now()); err != nil || !created {
		t.Fatalf("approval Open after attaching: created %v, %v", created, err)
	}
	if err := pub.Publish(audit.Record{Kind: audit.KindObservation, EventID: "after"}); err != nil {
		t.Fatalf("audit Publish after attaching: %v", err)
	}
	// The policy watch attached too: a push reaches apply.
	if _, err := policykv.Push(setup, other, []byte(testkit.PolicyYAML("pushed", "")), "pushed.yaml"); err != nil {
		t.Fatal(err)
	}
	if p := testkit.Receive(t, applied, "the pushed policy did not reach a watch started degraded"); p.Name() != "pushed" {
		t.Fatalf("applied %q, want pushed", p.Name())
	}
	dir := t.TempDir()
	files, err := auditstream.Export(setup, other, dir)
	if err != nil {
		t.Fatal(err)
	}
	if path := filepath.Join(dir, "late.jsonl"); files[path] != 1 {
		t.Fatalf("the stream holds %d records of the replica started degraded, want 1 (files %v)", files[path], files)
	}
}
