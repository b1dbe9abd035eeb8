package server_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"go.yaml.in/yaml/v3"
)

// aliceToken is approvals_test.go's.
const ciKey = "ci-api-key-0123456789abcdef"

// twoPrincipals is a server with a bearer token "alice" and an API key "ci", both agents.
func twoPrincipals(t *testing.T) (alice, ci []connect.ClientOption, url string, client connect.HTTPClient) {
	t.Helper()
	var cfg auth.Config
	if err := yaml.Unmarshal([]byte(`
tokens:
  - {name: alice, scopes: [agent], env: ALICE_TOKEN}
api_keys:
  - {name: ci, scopes: [agent], env: CI_KEY}
`), &cfg); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ALICE_TOKEN": aliceToken, "CI_KEY": ciKey}
	a, err := auth.New(cfg, auth.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Auth: a, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	mem := memhttp.Serve(t, srv.HTTPServer())
	return []connect.ClientOption{bearer(aliceToken)},
		[]connect.ClientOption{connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindAPIKey, Secret: ciKey}))},
		mem.URL(), mem.Client()
}

// Secrets a tool error can carry; none may come back from memory.
var recallSecrets = []string{"hunter2-password-value", "ghp_0123456789abcdefghijABCDEFGHIJ012345", "xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx"}

func recall(t *testing.T, c ahpv1connect.TypedDecisionServiceClient, id string) []*ahpv1.Fact {
	t.Helper()
	ev := testkit.Event(id, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL, testkit.Session("victim-session"), testkit.Agent("victim-agent"))
	ev.Body = &ahpv1.Event_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallPayload{SessionId: "victim-session", Query: "deploy failed password token", MaxResults: 20}}
	resp, err := c.RecallMemory(context.Background(), connect.NewRequest(&ahpv1.RecallMemoryRequest{Event: ev}))
	if err != nil {
		t.Fatalf("RecallMemory: %v", err)
	}
	return resp.Msg.GetDecision().GetMemoryRecall().GetAllow().GetInjectedFacts()
}

// TestRecallMemoryIsRedactedAndBoundToThePrincipal: a tool error carrying secrets becomes a fact;
// recalling it returns it masked, and only to the principal that wrote it — another principal
// naming the same session and agent gets nothing.
func TestRecallMemoryIsRedactedAndBoundToThePrincipal(t *testing.T) {
	t.Parallel()
	alice, ci, url, hc := twoPrincipals(t)
	observe := ahpv1connect.NewObservationServiceClient(hc, url, alice...)
	ev := testkit.Event("tool-err-1", ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, testkit.Session("victim-session"), testkit.Agent("victim-agent"), testkit.Tool("deploy", ahpv1.ToolKind_TOOL_KIND_SHELL))
	ev.Tool.Error = &ahpv1.ToolError{Message: "deploy failed: password=" + recallSecrets[0] + " GITHUB_TOKEN " + recallSecrets[1] + " slack " + recallSecrets[2]}
	if _, err := observe.Observe(context.Background(), connect.NewRequest(&ahpv1.ObserveRequest{Event: ev})); err != nil {
		t.Fatal(err)
	}

	facts := recall(t, ahpv1connect.NewTypedDecisionServiceClient(hc, url, alice...), "recall-alice")
	if len(facts) == 0 {
		t.Fatal("the writer's own recall found no fact")
	}
	for _, f := range facts {
		for _, s := range recallSecrets {
			if strings.Contains(f.GetContent(), s) {
				t.Fatalf("recalled fact carries a secret: %q", f.GetContent())
			}
		}
		if !strings.Contains(f.GetContent(), "[REDACTED:") {
			t.Fatalf("fact %q is not marked as redacted", f.GetContent())
		}
	}
	if other := recall(t, ahpv1connect.NewTypedDecisionServiceClient(hc, url, ci...), "recall-ci"); len(other) != 0 {
		t.Fatalf("another principal recalled %d facts of alice's session: %v", len(other), other)
	}
}

// TestIdempotencyIsKeyedByPrincipal: the same event sent by another principal is decided afresh,
// never handed the first principal's remembered decision; the first principal's retry is a replay.
func TestIdempotencyIsKeyedByPrincipal(t *testing.T) {
	t.Parallel()
	alice, ci, url, hc := twoPrincipals(t)
	ev := testkit.ShellEvent("same-event", "ls", testkit.Source("urn:shared"))
	ask := func(opts []connect.ClientOption) *ahpv1.Decision {
		t.Helper()
		resp, err := ahpv1connect.NewInterceptServiceClient(hc, url, opts...).Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Msg.GetDecision()
	}
	first := ask(alice)
	other := ask(ci)
	if other.GetReplayed() || other.GetDecisionId() == first.GetDecisionId() {
		t.Fatalf("an API-key caller got the bearer caller's cached decision %s (replayed %v)", first.GetDecisionId(), other.GetReplayed())
	}
	again := ask(alice)
	if !again.GetReplayed() || again.GetDecisionId() != first.GetDecisionId() {
		t.Fatalf("alice's retry: decision %s replayed %v, want a replay of %s", again.GetDecisionId(), again.GetReplayed(), first.GetDecisionId())
	}
}
