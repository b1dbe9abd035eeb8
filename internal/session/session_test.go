package session_test

import (
	"fmt"
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
	if v.EventCount != 3 {
		t.Fatalf("counters: v.EventCount = %v, want 3 in %+v", v.EventCount, v)
	}
	if v.ToolCallCount != 1 {
		t.Fatalf("counters: v.ToolCallCount = %v, want 1 in %+v", v.ToolCallCount, v)
	}
	if v.ErrorCount != 1 {
		t.Fatalf("counters: v.ErrorCount = %v, want 1 in %+v", v.ErrorCount, v)
	}
	if v.DenyCount != 1 {
		t.Fatalf("counters: v.DenyCount = %v, want 1 in %+v", v.DenyCount, v)
	}
	if v.AgentID != "a1" {
		t.Fatalf("view: v.AgentID = %v, want \"a1\"", v.AgentID)
	}
	if v.VerificationStatus != "failed" {
		t.Fatalf("view: v.VerificationStatus = %v, want \"failed\"", v.VerificationStatus)
	}
	if v.LastEventType != "verification" {
		t.Fatalf("view: v.LastEventType = %v, want \"verification\"", v.LastEventType)
	}
	if len(v.Facts) != 3 {
		t.Fatalf("facts (newest first): len(v.Facts) = %v, want 3 in %v", len(v.Facts), v.Facts)
	}
	if !strings.Contains(v.Facts[0].GetContent(), "unit tests failed: 3 failing") {
		t.Fatalf("facts (newest first): strings.Contains(v.Facts[0].GetContent(), \"unit tests failed: 3 failing\") is false in %v", v.Facts)
	}
	if !strings.Contains(v.Facts[2].GetContent(), "tool Bash failed: exit status 2") {
		t.Fatalf("oldest fact = %q", v.Facts[2].GetContent())
	}
	if len(v.AgentFacts) != 1 {
		t.Fatalf("agent facts = %v", v.AgentFacts)
	}
	if len(v.Recent) != 3 {
		t.Fatalf("recent: len(v.Recent) = %v, want 3 in %+v", len(v.Recent), v.Recent)
	}
	if v.Recent[2].ToolName != "Bash" {
		t.Fatalf("recent: v.Recent[2].ToolName = %v, want \"Bash\" in %+v", v.Recent[2].ToolName, v.Recent)
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
	if v == nil {
		t.Fatalf("view: v is nil in %+v", v)
	}
	if v.EventCount != 0 {
		t.Fatalf("view: v.EventCount = %v, want 0 in %+v", v.EventCount, v)
	}
	if v.SessionID != "nope" {
		t.Fatalf("view: v.SessionID = %v, want \"nope\" in %+v", v.SessionID, v)
	}
}

func strp(s string) *string { return &s }

// Session memory is bounded in bytes, not only in entries: sessions with long ids and names
// evict the least recently used ones once the budget is spent.
func TestMemoryIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	const budget = 256 << 10
	m := session.NewMemory(session.Options{MaxBytes: budget})
	long := strings.Repeat("x", 8<<10)
	failed := func(i int) *ahpv1.Event {
		ev := toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, fmt.Sprintf("s%03d-%s", i, long), fmt.Sprintf("a%03d-%s", i, long))
		ev.Tool.Name = long
		return ev
	}
	const n = 200 // far more than the budget holds, far fewer than the entry bounds
	for i := range n {
		m.RecordEvent(failed(i), time.Now())
	}
	if got := m.Bytes(); got > 2*budget {
		t.Fatalf("memory holds about %d bytes, budget %d for sessions and %d for agents", got, budget, budget)
	}
	first, last := failed(0), failed(n-1)
	if v := m.View(first.GetSession().GetId(), ""); v.EventCount != 0 || len(v.Recent) != 0 {
		t.Errorf("the oldest session was kept: %d events", v.EventCount)
	}
	if v := m.View("", agentOf(first)); len(v.AgentFacts) != 0 {
		t.Errorf("the oldest agent's facts were kept: %d", len(v.AgentFacts))
	}
	v := m.View(last.GetSession().GetId(), "")
	if v.EventCount != 1 || len(v.Recent) != 1 || len(v.AgentFacts) != 1 {
		t.Errorf("the newest session lost its memory: %d events, %d recent, %d agent facts", v.EventCount, len(v.Recent), len(v.AgentFacts))
	}
}

func agentOf(ev *ahpv1.Event) string { return ev.GetSession().GetAgent().GetId() }

// TestLazyViewsRecentEvents: a lazy view holds the recent events unconverted until read; read,
// they are what View gives, newest first, with the recorded times (UTC kept as UTC), and events
// recorded after the view was taken do not show up in it.
func TestLazyViewsRecentEvents(t *testing.T) {
	t.Parallel()
	m := session.NewMemory(session.Options{RecentEvents: 8})
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	local := time.Unix(1_800_000_000, 5).Local()
	m.RecordEvent(toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, "s", "a"), at)
	mcp := toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, "s", "a")
	mcp.Tool = &ahpv1.Tool{Name: "mcp__github__create_pull_request_with_a_rather_long_name", Kind: ahpv1.ToolKind_TOOL_KIND_MCP}
	m.RecordEvent(mcp, local)
	m.RecordEvent(&ahpv1.Event{Id: "x", Type: ahpv1.EventType_EVENT_TYPE_SESSION_START, Session: &ahpv1.Session{Id: "s"}}, at.Add(time.Second))

	lazy := m.LazyView("s", "")
	if lazy.Recent != nil {
		t.Fatalf("a lazy view converted its recent events: %+v", lazy.Recent)
	}
	m.RecordEvent(toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, "s", "a"), at.Add(time.Hour)) // after the view
	got := lazy.RecentEvents()
	want := []struct {
		typ, name, kind string
		at              time.Time
	}{
		{"session.start", "", "", at.Add(time.Second)},
		{"tool.after", mcp.Tool.Name, "mcp", local},
		{"tool.before", "Bash", "shell", at},
	}
	if len(got) != len(want) {
		t.Fatalf("%d recent events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.ToolName != w.name || g.ToolKind != w.kind || !g.Time.Equal(w.at) || (g.Time.Location() == time.UTC) != (w.at.Location() == time.UTC) {
			t.Errorf("recent[%d] = %+v, want %+v", i, g, w)
		}
	}
	if v := m.View("s", ""); len(v.Recent) != 4 || v.Recent[1] != got[0] {
		t.Errorf("View: %+v, want the four events, newest first", v.Recent)
	}
	if v := m.View("none", ""); v.Recent == nil || len(v.Recent) != 0 {
		t.Errorf("View of an unknown session: Recent %#v, want empty", v.Recent)
	}
}
