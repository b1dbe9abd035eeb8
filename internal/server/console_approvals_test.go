package server_test

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/console"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"go.yaml.in/yaml/v3"
)

const viewerToken = "viewer-token-0123456789abcdef"

// The console's approvals view lists, gets and watches approvals for a credential with the
// watch scope and never decides: its Decide is refused, the API's Decide still needs the approve
// scope, and a credential without watch cannot look. A decision through the API shows on a view
// Watch at once.
func TestConsoleApprovalsViewIsReadOnly(t *testing.T) {
	t.Parallel()
	var cfg auth.Config
	if err := yaml.Unmarshal([]byte(`
tokens:
  - {name: agent, scopes: [agent], env: AGENT_TOKEN}
  - {name: alice, scopes: [approve], groups: [release], env: ALICE_TOKEN}
  - {name: viewer, scopes: [watch], env: VIEWER_TOKEN}
`), &cfg); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENT_TOKEN": agentToken, "ALICE_TOKEN": aliceToken, "VIEWER_TOKEN": viewerToken}
	a, err := auth.New(cfg, auth.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, approvalPolicy, func(c *server.Config) {
		c.Auth = a
		c.Console = console.Options{Enabled: true, AllowedHosts: []string{"in-memory.test"}}
	})
	ctx := t.Context()
	viewURL := memhttp.URL + "/ui/api/approvals"
	view := ahpv1connect.NewApprovalServiceClient(ts.mem.Client(), viewURL, bearer(viewerToken))
	viewAsAgent := ahpv1connect.NewApprovalServiceClient(ts.mem.Client(), viewURL, bearer(agentToken))
	apiAsViewer := ahpv1connect.NewApprovalServiceClient(ts.mem.Client(), memhttp.URL, bearer(viewerToken))
	alice := ahpv1connect.NewApprovalServiceClient(ts.mem.Client(), memhttp.URL, bearer(aliceToken))
	agent := ahpv1connect.NewInterceptServiceClient(ts.mem.Client(), memhttp.URL, bearer(agentToken))

	stream, err := view.Watch(ctx, connect.NewRequest(&ahpv1.ApprovalServiceWatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	held := make(chan *ahpv1.Decision, 1)
	go func() {
		resp, err := agent.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("e-view", "deploy prod", testkit.Session("s-view"))}))
		if err != nil {
			held <- nil
			return
		}
		held <- resp.Msg.GetDecision()
	}()
	next := func(want ahpv1.ApprovalChange) *ahpv1.Approval {
		t.Helper()
		for stream.Receive() {
			if m := stream.Msg(); m.GetChange() == want {
				return m.GetApproval()
			}
		}
		t.Fatalf("view Watch ended before a %v: %v", want, stream.Err())
		return nil
	}
	ap := next(ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED)
	if ap.GetHoldUntil() == "" || ap.GetInputSummary() != `{"command":"deploy prod"}` {
		t.Errorf("viewed approval = %v", ap)
	}
	list, err := view.List(ctx, connect.NewRequest(&ahpv1.ApprovalServiceListRequest{State: ahpv1.ApprovalState_APPROVAL_STATE_PENDING}))
	if err != nil || len(list.Msg.GetApprovals()) != 1 {
		t.Fatalf("view List = %v, %v; want the pending approval", list, err)
	}
	if _, err := view.Get(ctx, connect.NewRequest(&ahpv1.ApprovalServiceGetRequest{Id: ap.GetId()})); err != nil {
		t.Errorf("view Get: %v", err)
	}
	decide := &ahpv1.ApprovalServiceDecideRequest{Id: ap.GetId(), Approve: true, Comment: "from the view"}
	if _, err := view.Decide(ctx, connect.NewRequest(decide)); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("Decide through the view: %v, want permission_denied", err)
	}
	if _, err := apiAsViewer.Decide(ctx, connect.NewRequest(decide)); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("Decide with a watch-only token: %v, want permission_denied", err)
	}
	if _, err := viewAsAgent.List(ctx, connect.NewRequest(&ahpv1.ApprovalServiceListRequest{})); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("view List with an agent token: %v, want permission_denied", err)
	}
	decide.Comment = "ship it"
	if _, err := alice.Decide(ctx, connect.NewRequest(decide)); err != nil {
		t.Fatalf("alice deciding: %v", err)
	}
	got := next(ahpv1.ApprovalChange_APPROVAL_CHANGE_DECIDED)
	if got.GetDecidedBy() != "alice" || got.GetComment() != "ship it" || got.GetState() != ahpv1.ApprovalState_APPROVAL_STATE_APPROVED {
		t.Errorf("decided approval on the view = %v", got)
	}
	d := testkit.Receive(t, held, "the held Intercept was not answered")
	if d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || d.GetApprovalId() != ap.GetId() {
		t.Errorf("held Intercept = %v; want allow on %s", d, ap.GetId())
	}
}
