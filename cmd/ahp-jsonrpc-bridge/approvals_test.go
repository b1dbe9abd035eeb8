package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// approvalUpstream is an ahp-server whose policy holds shell commands starting with "deploy " for
// a person's approval, and an approver watching its approvals.
func approvalUpstream(t *testing.T) (url string, approver *approverClient) {
	t.Helper()
	return approvalUpstreamWith(t, `  - id: ask-deploy
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("deploy ")'
    effect:
      ask:
        reason: deploying needs a human
        approval: {hold: 1h}
`)
}

// approvalUpstreamWith is an ahp-server with the approval rules rules, and an approver watching
// its approvals.
func approvalUpstreamWith(t *testing.T, rules string) (url string, approver *approverClient) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(testkit.PolicyYAML("bridge-approvals", rules)), 0o600); err != nil {
		t.Fatal(err)
	}
	url = clitest.Serve(t, server.Config{PolicyFile: file, PolicyPollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	c := ahpv1connect.NewApprovalServiceClient(testkit.H2CClient(), url)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := c.Watch(ctx, connect.NewRequest(&ahpv1.ApprovalServiceWatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	requested := make(chan *ahpv1.Approval, 16)
	go func() {
		for stream.Receive() {
			if m := stream.Msg(); m.GetChange() == ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED {
				requested <- m.GetApproval()
			}
		}
	}()
	return url, &approverClient{c: c, requested: requested}
}

type approverClient struct {
	c         ahpv1connect.ApprovalServiceClient
	requested <-chan *ahpv1.Approval
}

// decideNext waits for the next approval request and decides it.
func (a *approverClient) decideNext(t *testing.T, approve bool, comment string) *ahpv1.Approval {
	t.Helper()
	req := testkit.Receive(t, a.requested, "no approval was requested")
	if _, err := a.c.Decide(context.Background(), connect.NewRequest(&ahpv1.ApprovalServiceDecideRequest{Id: req.GetId(), Approve: approve, Comment: comment})); err != nil {
		t.Fatal(err)
	}
	return req
}

// bridgeAsync runs the bridge with stdin and returns where its result arrives.
func bridgeAsync(args []string, stdin string) <-chan clitest.Result {
	ch := make(chan clitest.Result, 1)
	go func() { ch <- runBridge(args, nil, stdin) }()
	return ch
}

func TestHeldDecisionThroughTheBridge(t *testing.T) {
	t.Parallel()
	up, approver := approvalUpstream(t)
	wait := []string{"-upstream", up, "-failure-policy", "fail-open", "-approval-wait", "1m", "-log-level", "warn"}
	for _, tc := range []struct {
		name, line    string
		approve       bool
		comment, want string
		args          []string
	}{
		{"hooks over the stream, approved", hooksIntercept("h1", "deploy prod"), true, "ok", "no-effect", wait},
		{"hooks unary, denied", hooksIntercept("h2", "deploy prod"), false, "not now", "deny: denied by an unauthenticated approver: not now", append([]string{"-upstream-unary"}, wait...)},
		{"harness, approved", harnessEvent("a1", "deploy prod"), true, "", "allow", wait},
		{"harness, denied", harnessEvent("a2", "deploy staging"), false, "use the pipeline", "block: denied by an unauthenticated approver: use the pipeline", wait},
	} {
		got := bridgeAsync(tc.args, tc.line+"\n")
		approver.decideNext(t, tc.approve, tc.comment)
		r := testkit.Receive(t, got, tc.name+": the bridge did not answer")
		if r.Code != 0 {
			t.Fatalf("%s: exit %d; stderr %s", tc.name, r.Code, r.Stderr)
		}
		if v := verdict(t, strings.TrimSpace(r.Stdout)); v != tc.want {
			t.Errorf("%s: answer %q, want %q", tc.name, v, tc.want)
		}
	}
}

func TestGrantThroughTheBridgeForACallerThatCannotWait(t *testing.T) {
	t.Parallel()
	up, approver := approvalUpstream(t)
	// No -approval-wait: the 2s deadline is too short to hold, so the answer names the approval.
	args := []string{"-upstream", up, "-failure-policy", "fail-closed", "-log-level", "warn"}
	r := runBridge(args, nil, hooksIntercept("g1", "deploy prod")+"\n")
	v := verdict(t, strings.TrimSpace(r.Stdout))
	if !strings.HasPrefix(v, "deny: approval required: deploying needs a human; approval ") || !strings.Contains(v, "ahp-server approvals approve") {
		t.Fatalf("answer %q, want a denial naming the pending approval and how to decide", v)
	}
	approver.decideNext(t, true, "")
	// The same action again, with a new event id: let through once, then asked afresh.
	if v := verdict(t, strings.TrimSpace(runBridge(args, nil, hooksIntercept("g2", "deploy prod")+"\n").Stdout)); v != "no-effect" {
		t.Errorf("retry after approval: %q, want no-effect", v)
	}
	if v := verdict(t, strings.TrimSpace(runBridge(args, nil, hooksIntercept("g3", "deploy prod")+"\n").Stdout)); !strings.HasPrefix(v, "deny: approval required") {
		t.Errorf("second retry: %q, want a new pending approval", v)
	}
}

func TestHeldDecisionThroughTheClaudeCodeHook(t *testing.T) {
	t.Parallel()
	up, approver := approvalUpstream(t)
	args := []string{"hook", "claude-code", "-upstream", up, "-failure-policy", "fail-closed", "-approval-wait", "10m", "-log-level", "warn"}
	got := bridgeAsync(args, claudePreToolUse("deploy prod"))
	approver.decideNext(t, false, "wait for the release")
	r := testkit.Receive(t, got, "the hook did not answer")
	expectExit(t, "denied", r.Code, 0, r.Stderr)
	expectDecision(t, "denied", parseHookOut(t, r.Stdout), "deny", "denied by an unauthenticated approver: wait for the release")

	got = bridgeAsync(args, claudePreToolUse("deploy staging"))
	approver.decideNext(t, true, "")
	r = testkit.Receive(t, got, "the hook did not answer")
	expectExit(t, "approved", r.Code, 0, r.Stderr)
	if o := parseHookOut(t, r.Stdout); o.HookSpecificOutput.PermissionDecision == "deny" || o.HookSpecificOutput.PermissionDecision == "ask" {
		t.Errorf("approved: permission decision %q, want the call let through", o.HookSpecificOutput.PermissionDecision)
	}
}

func TestHeldDecisionOverHTTPWebSocketAndUnix(t *testing.T) {
	t.Parallel()
	up, approver := approvalUpstream(t)
	sock := testkit.SocketPath(t)
	args := []string{"-upstream", up, "-failure-policy", "fail-closed", "-approval-wait", "1m",
		"-http", "127.0.0.1:0", "-ws", "127.0.0.1:0", "-unix", sock, "-log-format", "json"}
	b := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, args, strings.NewReader(""), stdout, stderr, noEnv)
	})
	addrs := listening(t, b.Stderr, "http", "websocket", "unix")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	// HTTP: the POST waits for the decision.
	posted := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+addrs["http"]+"/hooks", "application/json", strings.NewReader(hooksIntercept("http-1", "deploy prod")))
		if err != nil {
			posted <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		posted <- string(body)
	}()
	approver.decideNext(t, true, "")
	if v := verdict(t, testkit.Receive(t, posted, "HTTP: no answer")); v != "no-effect" {
		t.Errorf("HTTP: %s, want no-effect", v)
	}

	// WebSocket: the answer arrives when decided.
	c, _, err := websocket.Dial(ctx, "ws://"+addrs["websocket"]+"/ahp", &websocket.DialOptions{Subprotocols: []string{"ahp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(harnessEvent("ws-1", "deploy prod"))); err != nil {
		t.Fatal(err)
	}
	approver.decideNext(t, false, "no")
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(t, string(msg)); v != "block: denied by an unauthenticated approver: no" {
		t.Errorf("WebSocket: %s", v)
	}
	c.Close(websocket.StatusNormalClosure, "")

	// Unix socket.
	uc, err := net.DialTimeout("unix", sock, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	uc.SetDeadline(time.Now().Add(testTimeout))
	fmt.Fprintf(uc, "%s\n", hooksIntercept("unix-1", "deploy staging"))
	approver.decideNext(t, true, "")
	sc := bufio.NewScanner(uc)
	if !sc.Scan() {
		t.Fatal(sc.Err())
	}
	if v := verdict(t, sc.Text()); v != "no-effect" {
		t.Errorf("Unix socket: %s, want no-effect", v)
	}
	if code := b.Stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, b.Stderr.String())
	}
}

func TestHeldDecisionThroughTheCodexHook(t *testing.T) {
	t.Parallel()
	up, approver := approvalUpstream(t)
	args := []string{"hook", "codex", "-upstream", up, "-failure-policy", "fail-closed", "-approval-wait", "10m", "-log-level", "warn"}
	got := bridgeAsync(args, codexPreToolUse("deploy prod"))
	approver.decideNext(t, false, "ask in #release")
	r := testkit.Receive(t, got, "the hook did not answer")
	expectExit(t, "denied", r.Code, 0, r.Stderr)
	expectDecision(t, "denied", parseHookOut(t, r.Stdout), "deny", "denied by an unauthenticated approver: ask in #release")

	got = bridgeAsync(args, codexPreToolUse("deploy staging"))
	approver.decideNext(t, true, "")
	r = testkit.Receive(t, got, "the hook did not answer")
	expectExit(t, "approved", r.Code, 0, r.Stderr)
	if strings.Contains(r.Stdout, `"deny"`) {
		t.Errorf("approved: hook output %q denies", r.Stdout)
	}
}
