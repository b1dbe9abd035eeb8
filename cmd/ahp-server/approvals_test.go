package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/notify"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

const (
	e2eAgentToken    = "agent-token-0123456789abcdef"
	e2eApproverToken = "alice-token-0123456789abcdef"
)

// approvalServer runs ahp-server with a policy that holds "deploy …" for approval, auth, an audit
// log and a webhook notifier posting to a loopback receiver; it returns the server URL, the
// notified approval ids, the audit log path and the server's log.
func approvalServer(t *testing.T) (url string, notified <-chan notify.Payload, auditPath string, logs *clitest.Output, stop func() int) {
	t.Helper()
	dir := t.TempDir()
	ids := make(chan notify.Payload, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p notify.Payload
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &p) == nil {
			ids <- p
		}
	}))
	t.Cleanup(hook.Close)
	policyFile := filepath.Join(dir, "policy.yaml")
	write(t, policyFile, testkit.PolicyYAML("approvals-e2e", `  - id: ask-deploy
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("deploy ")'
    effect:
      ask:
        reason: deploying needs a human
        approval: {hold: 1h, approvers: [alice], notifiers: [ops]}
  - id: ask-quick
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("quick ")'
    effect:
      ask:
        approval: {hold: 300ms, notifiers: [ops]}
`))
	// Secrets in files: the server reads credentials from its real environment, which a parallel
	// test must not change.
	for name, secret := range map[string]string{"agent": e2eAgentToken, "alice": e2eApproverToken, "hook": "hook-secret"} {
		write(t, filepath.Join(dir, name+".secret"), secret)
	}
	configFile := filepath.Join(dir, "config.yaml")
	write(t, configFile, `
auth:
  tokens:
    - {name: agent, scopes: [agent], file: "`+filepath.Join(dir, "agent.secret")+`"}
    - {name: alice, scopes: [approve], file: "`+filepath.Join(dir, "alice.secret")+`"}
approvals:
  notifiers:
    - {name: ops, kind: webhook, url: "`+hook.URL+`", secret_file: "`+filepath.Join(dir, "hook.secret")+`"}
`)
	auditPath = filepath.Join(dir, "audit.jsonl")
	url, logs, stop = startServer(t, []string{"-policy", policyFile, "-config", configFile, "-audit-path", auditPath, "-approval-url", "https://console.example/a/{id}"}, nil)
	return url, ids, auditPath, logs, stop
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// approvals runs `ahp-server approvals ARGS…` against url as alice.
func approvals(url string, args ...string) clitest.Result {
	return clitest.Run(func(ctx context.Context, _ io.Reader, stdout, stderr io.Writer) int {
		return run(ctx, append([]string{"approvals"}, append(args, "-server", url)...), stdout, stderr,
			clitest.Env(map[string]string{"AHP_APPROVER_TOKEN": e2eApproverToken}))
	}, "")
}

type heldAnswer struct {
	d   *ahpv1.Decision
	err error
}

// holdIntercept sends a Hooks tool.before for command and returns where its answer will arrive.
func holdIntercept(url, id, command string) <-chan heldAnswer {
	ch := make(chan heldAnswer, 1)
	c := ahpv1connect.NewInterceptServiceClient(http.DefaultClient, url,
		connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindBearer, Secret: e2eAgentToken})))
	go func() {
		resp, err := c.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent(id, command, testkit.HooksOrigin())}))
		if err != nil {
			ch <- heldAnswer{err: err}
			return
		}
		ch <- heldAnswer{d: resp.Msg.GetDecision()}
	}()
	return ch
}

// notifiedWhileHeld waits for the webhook to be told of the approval that the held call opened.
// A call answered first (refused, failed, not held at all) ends the wait with that answer, not
// with a timeout that hides it. logs, when not nil, is the server's log, shown when the wait
// fails.
func notifiedWhileHeld(t *testing.T, notified <-chan notify.Payload, held <-chan heldAnswer, logs *clitest.Output, failure string) notify.Payload {
	t.Helper()
	serverLog := func() string {
		if logs == nil {
			return ""
		}
		return "; the server's log:\n" + logs.String()
	}
	timeout := time.NewTimer(testkit.WaitTimeout)
	defer timeout.Stop()
	select {
	case p := <-notified:
		return p
	case r := <-held:
		t.Fatalf("%s: the call was answered first: decision %v, error %v%s", failure, r.d, r.err, serverLog())
	case <-timeout.C:
		t.Fatalf("%s (waited %v)%s", failure, testkit.WaitTimeout, serverLog())
	}
	return notify.Payload{}
}

func TestApprovalsEndToEndWithTheCLIAndAWebhook(t *testing.T) {
	t.Parallel()
	url, notified, auditPath, logs, stop := approvalServer(t)

	// Approved with the CLI -> allowed.
	held := holdIntercept(url, "e1", "deploy prod")
	p := notifiedWhileHeld(t, notified, held, logs, "the webhook was not told about the approval")
	if p.RuleID != "ask-deploy" || p.Tool != "Bash" || p.Link != "https://console.example/a/"+p.ApprovalID {
		t.Errorf("notification = %+v", p)
	}
	list := approvals(url, "list", "-state", "pending")
	list.Expect(t, "approvals list", 0, "")
	if !strings.Contains(list.Stdout, p.ApprovalID) || !strings.Contains(list.Stdout, "decide within") {
		t.Errorf("approvals list:\n%s\nwant the pending approval %s", list.Stdout, p.ApprovalID)
	}
	ok := approvals(url, "approve", p.ApprovalID, "-comment", "go")
	ok.Expect(t, "approvals approve", 0, "")
	if want := p.ApprovalID + " approved by alice\n"; ok.Stdout != want {
		t.Errorf("approve printed %q, want %q", ok.Stdout, want)
	}
	if r := testkit.Receive(t, held, "the held call was not answered"); r.err != nil || r.d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("approved call = %v, %v; want allow", r.d, r.err)
	}
	again := approvals(url, "deny", p.ApprovalID)
	again.Expect(t, "deciding twice", 1, "already decided")

	// Denied with the CLI -> denied with the comment.
	held = holdIntercept(url, "e2", "deploy staging")
	p = notifiedWhileHeld(t, notified, held, logs, "the webhook was not told about the second approval")
	approvals(url, "deny", "-comment", "not on a Friday", p.ApprovalID).Expect(t, "approvals deny", 0, "")
	r := testkit.Receive(t, held, "the held call was not answered")
	if deny := r.d.GetEffects()[0].GetDeny(); r.err != nil || deny.GetReason() != "denied by alice: not on a Friday" {
		t.Fatalf("denied call = %v, %v; want the comment", r.d, r.err)
	}
	show := approvals(url, "show", p.ApprovalID)
	show.Expect(t, "approvals show", 0, "")
	for _, want := range []string{"state:       denied", "decided by:  alice", "comment:     not on a Friday", `input:       {"command":"deploy staging"}`} {
		if !strings.Contains(show.Stdout, want) {
			t.Errorf("approvals show lacks %q:\n%s", want, show.Stdout)
		}
	}

	// No decision -> denied when the hold ends.
	held = holdIntercept(url, "e3", "quick fix")
	r = testkit.Receive(t, held, "the held call was not answered at the end of its hold")
	if deny := r.d.GetEffects()[0].GetDeny(); r.err != nil || deny.GetReason() != "approval timed out" {
		t.Fatalf("undecided call = %v, %v; want approval timed out", r.d, r.err)
	}

	// Bad usage and a refused token.
	approvals(url, "approve").Expect(t, "approve without an id", 2, "want one approval id")
	bad := clitest.Run(func(ctx context.Context, _ io.Reader, stdout, stderr io.Writer) int {
		return run(ctx, []string{"approvals", "list", "-server", url}, stdout, stderr, clitest.Env(map[string]string{"AHP_APPROVER_TOKEN": e2eAgentToken}))
	}, "")
	bad.Expect(t, "an agent token", 1, "permission denied")
	if strings.Contains(bad.Stderr, e2eAgentToken) {
		t.Errorf("stderr shows the token: %s", bad.Stderr)
	}

	if code := stop(); code != 0 {
		t.Fatalf("server exit code %d", code)
	}
	data, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, want := range []string{`"kind":"approval"`, `"change":"requested"`, `"change":"decided"`, `"decided_by":"alice"`, `"change":"expired"`, `"approval_id":"` + p.ApprovalID + `"`} {
		if !strings.Contains(log, want) {
			t.Errorf("audit log lacks %s", want)
		}
	}
}
