package mcpproxy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/mcpproxy"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// approvalRules hold an echo of a text starting with "hold" for a person's approval.
const approvalRules = `  - id: ask-hold-echo
    on: [tool.before]
    match: {tool_kinds: [mcp], tool_names: ["mcp__testserver__echo"]}
    when: 'input.text.startsWith("hold")'
    effect:
      ask:
        reason: echoing this needs a human
        approval: {hold: 1h}
  - id: ask-remind-echo
    on: [tool.before]
    match: {tool_names: ["mcp__testserver__echo"]}
    when: 'input.text == "remind"'
    effect: {ask: {reason: "a reminder nobody must answer"}}
    fallback: no-effect
`

// approvals is a real ahp-server holding calls for approval, and a watcher of its approvals.
type approvals struct {
	c         ahpv1connect.ApprovalServiceClient
	clients   bridge.Clients
	requested chan *ahpv1.Approval
	abandoned chan *ahpv1.Approval
}

func approvalServer(t *testing.T) *approvals {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(testkit.PolicyYAML("mcp-approvals", approvalRules)), 0o600); err != nil {
		t.Fatal(err)
	}
	url := clitest.Serve(t, server.Config{PolicyFile: file, PolicyPollInterval: -1, Logger: testkit.Discard()})
	clients, closer, err := bridge.NewUpstream(url, bridge.UpstreamOptions{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "upstream clients", closer.Close)
	a := &approvals{
		c: ahpv1connect.NewApprovalServiceClient(testkit.H2CClient(), url), clients: clients,
		requested: make(chan *ahpv1.Approval, 16), abandoned: make(chan *ahpv1.Approval, 16),
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := a.c.Watch(ctx, connect.NewRequest(&ahpv1.ApprovalServiceWatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for stream.Receive() {
			switch m := stream.Msg(); m.GetChange() {
			case ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED:
				a.requested <- m.GetApproval()
			case ahpv1.ApprovalChange_APPROVAL_CHANGE_ABANDONED:
				a.abandoned <- m.GetApproval()
			}
		}
	}()
	return a
}

// decideNext waits for the next approval request and decides it.
func (a *approvals) decideNext(t *testing.T, approve bool, comment string) *ahpv1.Approval {
	t.Helper()
	req := testkit.Receive(t, a.requested, "no approval was requested")
	if _, err := a.c.Decide(context.Background(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: req.GetId(), Approve: approve, Comment: comment})); err != nil {
		t.Fatal(err)
	}
	return req
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool in the background (the call is held) and returns where its result arrives.
func (r *rig) callAsync(ctx context.Context, name string, args any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := r.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		ch <- callResult{res, err}
	}()
	return ch
}

func approvalIDOf(res *mcp.CallToolResult) string {
	id, _ := res.Meta["dev.ahpgateway/approval_id"].(string)
	return id
}

func TestHeldCallApprovedReachesTheServer(t *testing.T) {
	t.Parallel()
	a := approvalServer(t)
	r := newRig(t, rigOptions{clients: a.clients, failure: bridge.FailClosed, approvalWait: time.Hour})
	got := r.callAsync(context.Background(), "echo", map[string]any{"text": "hold the line"})
	req := a.decideNext(t, true, "fine by me")
	if req.GetTool() != "mcp__testserver__echo" || req.GetReason() != "echoing this needs a human" {
		t.Errorf("approval asked about %q (%q)", req.GetTool(), req.GetReason())
	}
	c := testkit.Receive(t, got, "the approved call was not answered")
	if c.err != nil {
		t.Fatalf("approved call: %v; logs:\n%s", c.err, r.stderr.String())
	}
	if tx := texts(c.res); c.res.IsError || len(tx) != 2 || tx[0] != "echo: hold the line" || tx[1] != "approved by an unauthenticated approver: fine by me" {
		t.Errorf("approved call answered %q (isError %v), want the echo and the approver's note", tx, c.res.IsError)
	}
	if rec := r.received(); len(rec) != 1 || rec[0]["tool"] != "echo" {
		t.Errorf("server received %v, want the approved echo", rec)
	}
}

func TestHeldCallDeniedNeverReachesTheServer(t *testing.T) {
	t.Parallel()
	a := approvalServer(t)
	r := newRig(t, rigOptions{clients: a.clients, failure: bridge.FailOpen, approvalWait: time.Hour})
	got := r.callAsync(context.Background(), "echo", map[string]any{"text": "hold on"})
	req := a.decideNext(t, false, "not today")
	c := testkit.Receive(t, got, "the denied call was not answered")
	if c.err != nil {
		t.Fatalf("denied call: %v", c.err)
	}
	if tx := texts(c.res); !c.res.IsError || len(tx) == 0 || tx[0] != "denied by an unauthenticated approver: not today" {
		t.Errorf("denied call answered %q (isError %v), want a tool error with the approver's comment", tx, c.res.IsError)
	}
	if id := approvalIDOf(c.res); id != req.GetId() {
		t.Errorf("_meta approval id %q, want %q", id, req.GetId())
	}
	if rec := r.received(); len(rec) != 0 {
		t.Errorf("server received %v, want nothing", rec)
	}
}

func TestHeldCallCancelledIsNeverForwarded(t *testing.T) {
	t.Parallel()
	a := approvalServer(t)
	r := newRig(t, rigOptions{clients: a.clients, failure: bridge.FailOpen, approvalWait: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	got := r.callAsync(ctx, "echo", map[string]any{"text": "hold it"})
	req := testkit.Receive(t, a.requested, "no approval was requested")
	cancel() // the SDK client sends notifications/cancelled
	if c := testkit.Receive(t, got, "the cancelled call did not return"); c.err == nil {
		t.Fatal("the cancelled call succeeded")
	}
	if ab := testkit.Receive(t, a.abandoned, "the held call was not given up"); ab.GetId() != req.GetId() {
		t.Errorf("abandoned %q, want %q", ab.GetId(), req.GetId())
	}
	r.stderr.Wait(t, func(line string) bool { return strings.Contains(line, "cancelled the call while it was being decided") })
	// Approving now lets nothing through: the call is gone. A later call goes through alone.
	if _, err := a.c.Decide(context.Background(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: req.GetId(), Approve: true})); err != nil {
		t.Fatal(err)
	}
	if res := r.mustCall("echo", map[string]any{"text": "after"}); res.IsError {
		t.Errorf("later call: %q", texts(res))
	}
	if rec := r.received(); len(rec) != 1 || rec[0]["args"].(map[string]any)["text"] != "after" {
		t.Errorf("server received %v, want only the later call", rec)
	}
}

// A caller that cannot wait (no ApprovalWait, a deadline too short to hold) gets a denial naming
// the approval and where to decide; a retry once approved goes through.
func TestHeldCallWithoutApprovalWaitNamesTheApproval(t *testing.T) {
	t.Parallel()
	a := approvalServer(t)
	r := newRig(t, rigOptions{clients: a.clients, failure: bridge.FailOpen, timeout: 500 * time.Millisecond})
	res := r.mustCall("echo", map[string]any{"text": "hold please"})
	req := testkit.Receive(t, a.requested, "no approval was requested")
	tx := texts(res)
	if !res.IsError || len(tx) == 0 || !strings.HasPrefix(tx[0], "approval required: echoing this needs a human; approval "+req.GetId()+" is pending") ||
		!strings.Contains(tx[0], "ahp-server approvals approve "+req.GetId()) {
		t.Errorf("answer %q (isError %v), want a denial naming approval %s and how to decide", tx, res.IsError, req.GetId())
	}
	if id := approvalIDOf(res); id != req.GetId() {
		t.Errorf("_meta approval id %q, want %q", id, req.GetId())
	}
	if _, err := a.c.Decide(context.Background(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: req.GetId(), Approve: true})); err != nil {
		t.Fatal(err)
	}
	if res := r.mustCall("echo", map[string]any{"text": "hold please"}); res.IsError {
		t.Errorf("retry once approved: %q", texts(res))
	}
	if rec := r.received(); len(rec) != 1 {
		t.Errorf("server received %v, want the approved retry", rec)
	}
}

// An ask rule without an approval block keeps its fallback, even with ApprovalWait: here
// no-effect, so the call goes through without waiting for anyone.
func TestAskWithoutApprovalKeepsItsFallback(t *testing.T) {
	t.Parallel()
	a := approvalServer(t)
	r := newRig(t, rigOptions{clients: a.clients, failure: bridge.FailClosed, approvalWait: time.Hour})
	if res := r.mustCall("echo", map[string]any{"text": "remind"}); res.IsError || texts(res)[0] != "echo: remind" {
		t.Errorf("answer %q (isError %v), want the echo", texts(res), res.IsError)
	}
	if rec := r.received(); len(rec) != 1 {
		t.Errorf("server received %v", rec)
	}
}

// The HTTP form holds the POST of a tools/call the same way.
func TestHTTPHeldCallApprovedAndDenied(t *testing.T) {
	t.Parallel()
	a := approvalServer(t)
	r := newHTTPRigWith(t, "", mcpproxy.DefaultMaxMessageBytes, a.clients, time.Hour)
	got := r.callAsync(context.Background(), "echo", map[string]any{"text": "hold over http"})
	a.decideNext(t, true, "")
	if c := testkit.Receive(t, got, "the approved call was not answered"); c.err != nil || c.res.IsError || texts(c.res)[0] != "echo: hold over http" {
		t.Errorf("approved over HTTP: %v %v", c.res, c.err)
	}
	got = r.callAsync(context.Background(), "echo", map[string]any{"text": "hold again"})
	a.decideNext(t, false, "no")
	if c := testkit.Receive(t, got, "the denied call was not answered"); c.err != nil || !c.res.IsError || texts(c.res)[0] != "denied by an unauthenticated approver: no" {
		t.Errorf("denied over HTTP: %v %v", c.res, c.err)
	}
	if rec := r.received(); len(rec) != 1 || rec[0]["args"].(map[string]any)["text"] != "hold over http" {
		t.Errorf("server received %v, want only the approved call", rec)
	}
}
