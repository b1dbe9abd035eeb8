package session_test

import (
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/session"
)

func toolEvent(typ ahpv1.EventType, sid, agent string) *ahpv1.Event {
	return &ahpv1.Event{
		Id: "e", Type: typ,
		Session: &ahpv1.Session{Id: sid, Agent: &ahpv1.Agent{Id: agent}},
		Tool:    &ahpv1.Tool{Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL},
	}
}

func TestCountsAndFacts(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	m := session.NewMemory(session.Options{Now: func() time.Time { return now }})
	m.RecordEvent(toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, "s1", "a1"), now)
	failed := toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, "s1", "a1")
	failed.Tool.Error = &ahpv1.ToolError{Message: "exit status 2"}
	m.RecordEvent(failed, now.Add(time.Second))
	m.RecordEvent(&ahpv1.Event{
		Id: "v", Type: ahpv1.EventType_EVENT_TYPE_VERIFICATION, Session: &ahpv1.Session{Id: "s1"},
		Body: &ahpv1.Event_Verification{Verification: &ahpv1.Verification{
			RunId: "r1", Status: ahpv1.VerificationStatus_VERIFICATION_STATUS_FAILED,
			Checks: []*ahpv1.VerificationCheck{{Subject: "unit tests", Status: ahpv1.VerificationStatus_VERIFICATION_STATUS_FAILED, Message: strp("3 failing")}},
		}},
	}, now.Add(2*time.Second))
	m.RecordDecision(failed, &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY})

	v := m.View("s1", "")
	if v.EventCount != 3 || v.ToolCallCount != 1 || v.ErrorCount != 1 || v.DenyCount != 1 {
		t.Fatalf("counters = %+v", v)
	}
	if v.AgentID != "a1" || v.VerificationStatus != "failed" || v.LastEventType != "verification" {
		t.Fatalf("view = agent %q verification %q last %q", v.AgentID, v.VerificationStatus, v.LastEventType)
	}
	if len(v.Facts) != 3 || !strings.Contains(v.Facts[0].GetContent(), "unit tests failed: 3 failing") {
		t.Fatalf("facts (newest first) = %v", v.Facts)
	}
	if !strings.Contains(v.Facts[2].GetContent(), "tool Bash failed: exit status 2") {
		t.Fatalf("oldest fact = %q", v.Facts[2].GetContent())
	}
	if len(v.AgentFacts) != 1 {
		t.Fatalf("agent facts = %v", v.AgentFacts)
	}
	if len(v.Recent) != 3 || v.Recent[2].ToolName != "Bash" {
		t.Fatalf("recent = %+v", v.Recent)
	}
}

func TestBoundedRing(t *testing.T) {
	t.Parallel()
	m := session.NewMemory(session.Options{RecentEvents: 4})
	for range 10 {
		m.RecordEvent(toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, "s", ""), time.Now())
	}
	if got := len(m.View("s", "").Recent); got != 4 {
		t.Fatalf("recent = %d, want 4", got)
	}
}

func TestUnknownSessionGivesEmptyView(t *testing.T) {
	t.Parallel()
	v := session.NewMemory(session.Options{}).View("nope", "")
	if v == nil || v.EventCount != 0 || v.SessionID != "nope" {
		t.Fatalf("view = %+v", v)
	}
}

func strp(s string) *string { return &s }
