package approval_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func pending(id, key, agent string) approval.Approval {
	return approval.Approval{ID: id, Key: key, Agent: agent, RuleIDs: []string{"r"}, CreatedAt: t0, HoldUntil: t0.Add(time.Minute), TTL: time.Minute}
}

func TestMemoryCapsPending(t *testing.T) {
	t.Parallel()
	s := approval.NewMemory(approval.MemoryOptions{MaxPending: 3, MaxPendingPerAgent: 2})
	for i, agent := range []string{"a", "a", "b"} {
		if _, _, err := s.Open(pending(fmt.Sprint(i), fmt.Sprint("k", i), agent), t0); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	if _, _, err := s.Open(pending("x", "kx", "c"), t0); !errors.Is(err, approval.ErrFull) {
		t.Errorf("over the pending cap: err = %v, want ErrFull", err)
	}
	s2 := approval.NewMemory(approval.MemoryOptions{MaxPendingPerAgent: 1})
	s2.Open(pending("1", "k1", "a"), t0)
	if _, _, err := s2.Open(pending("2", "k2", "a"), t0); !errors.Is(err, approval.ErrFull) {
		t.Errorf("over the per-agent cap: err = %v, want ErrFull", err)
	}
	if _, _, err := s2.Open(pending("3", "k3", "b"), t0); err != nil {
		t.Errorf("another agent: %v", err)
	}
}

func TestMemoryBoundedInBytesForgetsOldestDecided(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("i", 1500)
	s := approval.NewMemory(approval.MemoryOptions{MaxBytes: 8 << 10})
	for i := range 20 {
		a := pending(fmt.Sprint(i), fmt.Sprint("k", i), "a")
		a.Input = big
		if _, _, err := s.Open(a, t0); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if _, err := s.Decide(a.ID, approval.Decision{By: "bob"}, t0); err != nil {
			t.Fatal(err)
		}
	}
	total, _ := s.Len()
	if total >= 20 || total == 0 {
		t.Fatalf("%d approvals kept, want fewer than 20 within 8 KiB", total)
	}
	if _, err := s.Get("0", t0); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("oldest decided approval still kept: %v", err)
	}
	if _, err := s.Get("19", t0); err != nil {
		t.Errorf("newest approval forgotten: %v", err)
	}
}

func TestMemoryExpiresAndForgets(t *testing.T) {
	t.Parallel()
	s := approval.NewMemory(approval.MemoryOptions{Retain: time.Hour})
	var changes []approval.ChangeKind
	defer s.Subscribe(func(c approval.Change) { changes = append(changes, c.Kind) })()
	s.Open(pending("1", "k1", "a"), t0)
	s.Expire(t0.Add(time.Minute))
	a, err := s.Get("1", t0.Add(time.Minute))
	if err != nil || a.State != approval.StateExpired || a.Latency() != time.Minute {
		t.Fatalf("after the hold: %+v, %v; want expired after a minute", a, err)
	}
	if _, err := s.Get("1", t0.Add(2*time.Hour)); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("expired approval kept past retention: %v", err)
	}
	if len(changes) != 2 || changes[0] != approval.Requested || changes[1] != approval.Expired {
		t.Errorf("changes = %v, want requested, expired", changes)
	}
}

func TestMemoryGrantEndsAtTTL(t *testing.T) {
	t.Parallel()
	s := approval.NewMemory(approval.MemoryOptions{})
	s.Open(pending("1", "k1", "a"), t0)
	if _, err := s.Decide("1", approval.Decision{Approve: true, By: "alice"}, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Consume("k1", "ev", t0.Add(time.Minute)); ok {
		t.Error("grant used at its ttl, want refused")
	}
	if _, ok := s.Consume("k1", "ev", t0.Add(time.Second)); !ok {
		t.Error("grant refused within its ttl")
	}
}

func TestActionKey(t *testing.T) {
	t.Parallel()
	rules := []string{"r"}
	base := approval.ActionKey("p", testkit.ShellEvent("e1", "rm x"), rules)
	if base != approval.ActionKey("p", testkit.ShellEvent("e2", "rm x"), rules) {
		t.Error("a new event id changed the action key")
	}
	for name, other := range map[string]string{
		"input":     approval.ActionKey("p", testkit.ShellEvent("e1", "rm y"), rules),
		"principal": approval.ActionKey("q", testkit.ShellEvent("e1", "rm x"), rules),
		"session":   approval.ActionKey("p", testkit.ShellEvent("e1", "rm x", testkit.Session("s2")), rules),
		"agent":     approval.ActionKey("p", testkit.ShellEvent("e1", "rm x", testkit.Agent("a2")), rules),
		"rules":     approval.ActionKey("p", testkit.ShellEvent("e1", "rm x"), []string{"r2"}),
	} {
		if other == base {
			t.Errorf("another %s gave the same action key", name)
		}
	}
}
