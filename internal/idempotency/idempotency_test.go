package idempotency_test

import (
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"google.golang.org/protobuf/types/known/structpb"
)

func event(source, id, command string) *ahpv1.Event {
	input, _ := structpb.NewStruct(map[string]any{"command": command})
	return &ahpv1.Event{Id: id, Source: source, Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Tool: &ahpv1.Tool{Name: "Bash", Input: input}}
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

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	m := idempotency.NewMemory(10, time.Minute)
	if _, ok := m.Decision("k"); ok {
		t.Fatal("empty store returned a decision")
	}
	m.RememberDecision("k", &ahpv1.Decision{DecisionId: "d1"})
	if d, ok := m.Decision("k"); !ok || d.GetDecisionId() != "d1" {
		t.Fatalf("Decision = %v, %v", d, ok)
	}
	if !m.FirstObservation("o") || m.FirstObservation("o") {
		t.Fatal("FirstObservation must be true once, then false")
	}
}
