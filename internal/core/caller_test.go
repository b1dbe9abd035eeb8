package core_test

import (
	"context"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/types/known/structpb"
)

// leakyStore is a session store that hands back an unredacted fact, as one filled by an older
// version or another implementation might.
type leakyStore struct{ session.Store }

func (leakyStore) View(sid, aid string) *policy.SessionView {
	return &policy.SessionView{SessionID: sid, AgentID: aid, Facts: []*ahpv1.Fact{{Content: "deploy failed with GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345", Source: "observation:tool.error", Confidence: 1}}}
}

func recallEvent(id string) *ahpv1.Event {
	ev := testkit.Event(id, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL, testkit.Session("s"), testkit.Agent("a"))
	ev.Body = &ahpv1.Event_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallPayload{SessionId: "s", Query: "deploy token", MaxResults: 5}}
	return ev
}

// TestTypedAnswersAreRedacted: whatever the store holds, a typed answer leaves without secrets.
func TestTypedAnswersAreRedacted(t *testing.T) {
	t.Parallel()
	p := policy.Default()
	c := core.New(core.Config{
		Policy:   func() core.Policy { return p },
		Typed:    typed.Decide,
		Sessions: leakyStore{session.NewMemory(session.Options{})},
		Logger:   testkit.Discard(),
	})
	d, err := c.Typed(context.Background(), recallEvent("r1"), ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL)
	if err != nil {
		t.Fatal(err)
	}
	facts := d.GetMemoryRecall().GetAllow().GetInjectedFacts()
	if len(facts) != 1 {
		t.Fatalf("%d facts, want 1", len(facts))
	}
	if got := facts[0].GetContent(); strings.Contains(got, "ghp_") || !strings.Contains(got, "[REDACTED:") {
		t.Fatalf("typed answer carries %q", got)
	}
}

type principalKey struct{}

// TestMemoryIsKeyedByTheCaller: facts a principal's observations produce are recalled by that
// principal only; an unauthenticated caller shares the unscoped memory.
func TestMemoryIsKeyedByTheCaller(t *testing.T) {
	t.Parallel()
	p, err := policy.Parse([]byte(testkit.PolicyYAML("caller-test", `  - id: session-s
    on: [tool.before]
    when: 'session.id == "s" && session.agent_id == "a"'
    effect: {deny: {reason: "session s"}}
`)), "caller-test")
	if err != nil {
		t.Fatal(err)
	}
	c := core.New(core.Config{
		Policy: func() core.Policy { return p },
		Typed:  typed.Decide,
		Caller: func(ctx context.Context) string { s, _ := ctx.Value(principalKey{}).(string); return s },
		Logger: testkit.Discard(),
	})
	as := func(who string) context.Context { return context.WithValue(context.Background(), principalKey{}, who) }
	failed := testkit.Event("e1", ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, testkit.Session("s"), testkit.Agent("a"), testkit.Tool("deploy", ahpv1.ToolKind_TOOL_KIND_SHELL))
	failed.Tool.Error = &ahpv1.ToolError{Message: "deploy token expired"}
	if _, err := c.Observe(as("bearer:alice"), failed); err != nil {
		t.Fatal(err)
	}
	recalled := func(who, id string) int {
		d, err := c.Typed(as(who), recallEvent(id), ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL)
		if err != nil {
			t.Fatal(err)
		}
		return len(d.GetMemoryRecall().GetAllow().GetInjectedFacts())
	}
	if n := recalled("bearer:alice", "r-alice"); n == 0 {
		t.Fatal("alice does not recall her own fact")
	}
	if n := recalled("api_key:mallory", "r-mallory"); n != 0 {
		t.Fatalf("mallory recalled %d of alice's facts", n)
	}
	if n := recalled("", "r-anon"); n != 0 {
		t.Fatalf("an unauthenticated caller recalled %d of alice's facts", n)
	}
	// The session view the policy sees names the ids the caller sent, not the keys.
	d, err := c.Intercept(as("bearer:alice"), testkit.ShellEvent("x", "ls", testkit.Session("s"), testkit.Agent("a")), nil)
	if err != nil || d.GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("a rule on session.id and session.agent_id: %v %v, want the deny", d, err)
	}
}

// TestShouldIProceedJudgesAnAction: the reference's should_i_proceed example names an action,
// not a tool; the shell rules judge it (the default policy refuses rm -rf /).
func TestShouldIProceedJudgesAnAction(t *testing.T) {
	t.Parallel()
	p := policy.Default()
	c := core.New(core.Config{Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard()})
	for action, want := range map[string]bool{"rm -rf /": false, "ls -la": true} {
		payload, _ := structpb.NewValue(map[string]any{"action": action})
		resp, err := c.Query(context.Background(), &ahpv1.QueryRequest{QueryType: "should_i_proceed", Payload: payload, SessionId: "s", AgentId: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetAnswer().GetBoolValue(); got != want {
			t.Errorf("should_i_proceed %q = %v, want %v (%v)", action, got, want, resp.GetDecision().GetMatchedRuleIds())
		}
	}
}
