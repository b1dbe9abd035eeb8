package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"go.yaml.in/yaml/v3"
)

const (
	aliceToken = "alice-token-0123456789abcdef"
	bobToken   = "bob-token-0123456789abcdef01"
)

var approvalPolicy = testkit.PolicyYAML("approvals", `  - id: ask-deploy
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("deploy ")'
    effect:
      ask:
        reason: deploying needs a human
        approval: {hold: 1h, approvers: ["group:release"]}
`)

func approvalServer(t *testing.T) *memhttp.Server {
	t.Helper()
	var cfg auth.Config
	if err := yaml.Unmarshal([]byte(`
tokens:
  - {name: agent, scopes: [agent], env: AGENT_TOKEN}
  - {name: alice, scopes: [approve], groups: [release], env: ALICE_TOKEN}
  - {name: bob, scopes: [approve], env: BOB_TOKEN}
`), &cfg); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENT_TOKEN": agentToken, "ALICE_TOKEN": aliceToken, "BOB_TOKEN": bobToken}
	a, err := auth.New(cfg, auth.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, approvalPolicy, func(c *server.Config) { c.Auth = a })
	return ts.mem
}

func TestApprovalOverEveryProtocol(t *testing.T) {
	t.Parallel()
	mem := approvalServer(t)
	for _, proto := range protocols {
		t.Run(proto.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			agent := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL(), append(proto.opts, bearer(agentToken))...)
			alice := ahpv1connect.NewApprovalServiceClient(mem.Client(), mem.URL(), append(proto.opts, bearer(aliceToken))...)
			bob := ahpv1connect.NewApprovalServiceClient(mem.Client(), mem.URL(), append(proto.opts, bearer(bobToken))...)
			asAgent := ahpv1connect.NewApprovalServiceClient(mem.Client(), mem.URL(), append(proto.opts, bearer(agentToken))...)

			session := "sess-" + proto.name
			stream, err := alice.Watch(ctx, connect.NewRequest(&ahpv1.ApprovalServiceWatchRequest{SessionId: session}))
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			type answer struct {
				d   *ahpv1.Decision
				err error
			}
			held := make(chan answer, 1)
			go func() {
				resp, err := agent.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("e-"+proto.name, "deploy prod", testkit.Session(session))}))
				if err != nil {
					held <- answer{nil, err}
					return
				}
				held <- answer{resp.Msg.GetDecision(), nil}
			}()
			var a *ahpv1.Approval
			for a == nil && stream.Receive() {
				if m := stream.Msg(); m.GetChange() == ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED {
					a = m.GetApproval()
				}
			}
			if a == nil {
				t.Fatalf("watch ended without the request: %v", stream.Err())
			}
			if a.GetState() != ahpv1.ApprovalState_APPROVAL_STATE_PENDING || a.GetPrincipal() != "agent" || a.GetHoldUntil() == "" || a.GetInputSummary() != `{"command":"deploy prod"}` {
				t.Errorf("requested approval = %v", a)
			}

			decide := func(c ahpv1connect.ApprovalServiceClient, approve bool, comment string) (*ahpv1.Approval, error) {
				resp, err := c.Decide(ctx, connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: a.GetId(), Approve: approve, Comment: comment}))
				if err != nil {
					return nil, err
				}
				return resp.Msg.GetApproval(), nil
			}
			if _, err := decide(bob, true, ""); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("bob (not in group release) deciding: %v, want permission_denied", err)
			}
			if _, err := decide(asAgent, true, ""); connect.CodeOf(err) != connect.CodePermissionDenied {
				t.Errorf("the agent (no approve scope) deciding: %v, want permission_denied", err)
			}
			got, err := decide(alice, true, "ship it")
			if err != nil || got.GetDecidedBy() != "alice" || got.GetState() != ahpv1.ApprovalState_APPROVAL_STATE_APPROVED {
				t.Fatalf("alice approving: %v, %v", got, err)
			}
			r := testkit.Receive(t, held, "held Intercept was not answered")
			if r.err != nil || r.d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || r.d.GetApprovalId() != a.GetId() {
				t.Fatalf("held Intercept = %v, %v; want allow on %s", r.d, r.err, a.GetId())
			}
			if effects := r.d.GetEffects(); len(effects) != 1 || effects[0].GetMessage().GetText() != "approved by alice: ship it" {
				t.Errorf("effects = %v, want the approver's comment as a message", effects)
			}
			if _, err := decide(alice, false, ""); connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("second decision: %v, want failed_precondition", err)
			}
			if _, err := alice.Get(ctx, connect.NewRequest(&ahpv1.ApprovalServiceGetRequest{Id: "nope"})); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("unknown id: %v, want not_found", err)
			}
			list, err := alice.List(ctx, connect.NewRequest(&ahpv1.ApprovalServiceListRequest{SessionId: session, State: ahpv1.ApprovalState_APPROVAL_STATE_APPROVED}))
			if err != nil {
				t.Fatal(err)
			}
			if got := list.Msg.GetApprovals(); len(got) != 1 || got[0].GetConsumedAt() == "" {
				t.Errorf("list approved in session: %v; want the consumed approval", got)
			}
		})
	}
}

func TestApprovalDecideRequestChecks(t *testing.T) {
	t.Parallel()
	mem := approvalServer(t)
	alice := ahpv1connect.NewApprovalServiceClient(mem.Client(), mem.URL(), bearer(aliceToken))
	long := make([]byte, 1025)
	for i := range long {
		long[i] = 'x'
	}
	_, err := alice.Decide(context.Background(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: "x", Comment: string(long)}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a 1025-byte comment: %v, want invalid_argument", err)
	}
	_, err = alice.Decide(context.Background(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("no id: %v, want invalid_argument", err)
	}
}

func TestShutdownAnswersHeldCalls(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(approvalPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{PolicyFile: file, PolicyPollInterval: -1, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, served := testkit.ServeTCP(t, srv.Serve)
	url := "http://" + addr
	approvals := ahpv1connect.NewApprovalServiceClient(testkit.H2CClient(), url)
	stream, err := approvals.Watch(t.Context(), connect.NewRequest(&ahpv1.ApprovalServiceWatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	type answer struct {
		d   *ahpv1.Decision
		err error
	}
	held := make(chan answer, 1)
	go func() {
		c := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), url)
		resp, err := c.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("s1", "deploy prod")}))
		if err != nil {
			held <- answer{err: err}
			return
		}
		held <- answer{d: resp.Msg.GetDecision()}
	}()
	if !stream.Receive() || stream.Msg().GetChange() != ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED {
		t.Fatalf("no approval requested: %v", stream.Err())
	}
	stop()
	r := testkit.Receive(t, held, "shutdown did not answer the held call")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if deny := r.d.GetEffects()[0].GetDeny(); deny.GetCode() != core.CodeApprovalShutdown {
		t.Errorf("held call at shutdown = %v, want the shutdown denial", r.d)
	}
	if err := testkit.Receive(t, served, "Serve did not return"); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestApprovalWatchStartsWithThePending(t *testing.T) {
	t.Parallel()
	mem := approvalServer(t)
	agent := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL(), bearer(agentToken))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	// A caller that cannot wait: the approval stays pending.
	resp, err := agent.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("p1", "deploy prod", testkit.Session("pending-first"))}))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Msg.GetDecision().GetApprovalId()
	alice := ahpv1connect.NewApprovalServiceClient(mem.Client(), mem.URL(), bearer(aliceToken))
	stream, err := alice.Watch(t.Context(), connect.NewRequest(&ahpv1.ApprovalServiceWatchRequest{SessionId: "pending-first"}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Receive() {
		t.Fatalf("watch ended: %v", stream.Err())
	}
	if m := stream.Msg(); m.GetChange() != ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED || m.GetApproval().GetId() != id {
		t.Fatalf("first item = %v, want the pending approval %s", m, id)
	}
	if _, err := alice.Decide(t.Context(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: id, Approve: true})); err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() || stream.Msg().GetChange() != ahpv1.ApprovalChange_APPROVAL_CHANGE_DECIDED {
		t.Fatalf("second item = %v, %v; want the decision", stream.Msg(), stream.Err())
	}
}
