package idempotency_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// event is a shell call with id from source.
func event(source, id, command string) *ahpv1.Event {
	return testkit.ShellEvent(id, command, testkit.Source(source))
}

func TestKeyRecognisesRetriesOnly(t *testing.T) {
	t.Parallel()
	base := idempotency.Key(event("urn:a", "e1", "ls"))
	if idempotency.Key(event("urn:a", "e1", "ls")) != base {
		t.Error("a retry (same source, id and content) must have the same key")
	}
	for name, other := range map[string]*ahpv1.Event{
		"other source":              event("urn:b", "e1", "ls"),
		"other id":                  event("urn:a", "e2", "ls"),
		"same id, different action": event("urn:a", "e1", "rm -rf /"),
	} {
		if idempotency.Key(other) == base {
			t.Errorf("%s: must not share the key of the original event", name)
		}
	}
	h1 := &ahpv1.Event{Id: "r1", Harness: &ahpv1.HarnessEnvelope{AgentId: "a1"}}
	h2 := &ahpv1.Event{Id: "r1", Harness: &ahpv1.HarnessEnvelope{AgentId: "a2"}}
	if idempotency.Key(h1) == idempotency.Key(h2) {
		t.Error("events without a source are scoped by agent")
	}
}

// TestKeyFormat pins what a key is a hash of, so replicas of different versions sharing a
// cluster store compute the same keys: SHA-256 over scope, 0, id, 0 and the deterministic
// encoding, the scope being the source or "agent:" and the agent id.
func TestKeyFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev    *ahpv1.Event
		scope string
	}{
		{event("urn:a", "e1", "ls -la"), "urn:a"},
		{&ahpv1.Event{Id: "r1", Harness: &ahpv1.HarnessEnvelope{AgentId: "a1"}}, "agent:a1"},
		{&ahpv1.Event{Id: "r2", Session: &ahpv1.Session{Agent: &ahpv1.Agent{Id: "a2"}}}, "agent:a2"},
	} {
		enc, err := proto.MarshalOptions{Deterministic: true}.Marshal(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(append([]byte(tc.scope+"\x00"+tc.ev.GetId()+"\x00"), enc...))
		if got := idempotency.Key(tc.ev); got != string(want[:]) {
			t.Errorf("%s/%s: key %x, want %x", tc.scope, tc.ev.GetId(), got, want)
		}
	}
}

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	m := idempotency.NewMemory(10, time.Minute)
	if _, ok := m.Decision("k"); ok {
		t.Fatal("empty store returned a decision")
	}
	m.RememberDecision("k", &ahpv1.Decision{DecisionId: "d1"})
	if d, ok := m.Decision("k"); !ok {
		t.Fatal("Decision found nothing for a remembered key")
	} else if d.GetDecisionId() != "d1" {
		t.Fatalf("Decision = %v, want decision d1", d)
	}
	if !m.FirstObservation("o") {
		t.Fatal("first FirstObservation = false, want true")
	}
	if m.FirstObservation("o") {
		t.Fatal("second FirstObservation = true, want false")
	}
}

func TestMemoryFirstDecisionStands(t *testing.T) {
	t.Parallel()
	m := idempotency.NewMemory(10, time.Minute)
	if d, stored := m.RememberDecision("k", &ahpv1.Decision{DecisionId: "d1"}); !stored || d.GetDecisionId() != "d1" {
		t.Fatalf("first RememberDecision = %v, %v; want d1 stored", d, stored)
	}
	if d, stored := m.RememberDecision("k", &ahpv1.Decision{DecisionId: "d2"}); stored || d.GetDecisionId() != "d1" {
		t.Fatalf("second RememberDecision = %v, %v; want d1 standing, d2 not stored", d, stored)
	}
	m.ForgetDecision("k")
	if _, ok := m.Decision("k"); ok {
		t.Fatal("Decision found a forgotten key")
	}
}

// What a retry replays is what was remembered: neither changing the decision afterwards nor
// changing what a lookup returned reaches the store.
func TestMemoryKeepsACopy(t *testing.T) {
	t.Parallel()
	m := idempotency.NewMemory(10, time.Minute)
	d := &ahpv1.Decision{DecisionId: "d1", MatchedRuleIds: []string{"r1"}}
	m.RememberDecision("k", d)
	d.DecisionId, d.MatchedRuleIds[0] = "changed", "changed"
	got, _ := m.Decision("k")
	if got.GetDecisionId() != "d1" || got.GetMatchedRuleIds()[0] != "r1" {
		t.Fatalf("replay = %v, want the decision as remembered", got)
	}
	got.DecisionId = "changed again"
	if again, _ := m.Decision("k"); again.GetDecisionId() != "d1" {
		t.Fatalf("replay = %v after the caller changed its copy", again)
	}
}

// A decision protobuf cannot encode (not UTF-8) is still remembered and replayed.
func TestMemoryRemembersUnencodableDecisions(t *testing.T) {
	t.Parallel()
	m := idempotency.NewMemory(10, time.Minute)
	bad := "deny \xff"
	m.RememberDecision("k", &ahpv1.Decision{DecisionId: bad})
	if d, ok := m.Decision("k"); !ok || d.GetDecisionId() != bad {
		t.Fatalf("Decision = %v, %v; want the unencodable decision", d, ok)
	}
	if d, stored := m.RememberDecision("k", &ahpv1.Decision{DecisionId: "d2"}); stored || d.GetDecisionId() != bad {
		t.Fatalf("second RememberDecision = %v, %v; want the first standing", d, stored)
	}
	m.ForgetDecision("k")
	if _, ok := m.Decision("k"); ok {
		t.Fatal("forgotten")
	}
}
