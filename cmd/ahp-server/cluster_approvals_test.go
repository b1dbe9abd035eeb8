package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/notify"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// clusterApprovalReplica starts one ahp-server on nats with the approval policy, auth, and a
// webhook notifier posting to hookURL; dir holds the shared policy and secrets.
func clusterApprovalReplica(t *testing.T, nats, dir, name, hookURL string) (url string, stop func() int) {
	t.Helper()
	configFile := filepath.Join(dir, name+".yaml")
	write(t, configFile, `
cluster:
  name: `+name+`
  lookup_budget: 5s
auth:
  tokens:
    - {name: agent, scopes: [agent], file: "`+filepath.Join(dir, "agent.secret")+`"}
    - {name: alice, scopes: [approve], file: "`+filepath.Join(dir, "alice.secret")+`"}
approvals:
  notifiers:
    - {name: ops, kind: webhook, url: "`+hookURL+`"}
`)
	url, _, stop = startServer(t, []string{"-nats", nats, "-policy", filepath.Join(dir, "policy.yaml"), "-config", configFile}, nil)
	t.Cleanup(func() { stop() })
	return url, stop
}

// A call held on replica A is released by a decision made through replica B; a pending approval
// survives a restart of the replica that opened it, and a retry on the restarted replica joins it.
func TestClusterApprovalDecidedOnAnotherReplicaAndSurvivingRestart(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	dir := t.TempDir()
	notified := make(chan notify.Payload, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p notify.Payload
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &p) == nil {
			notified <- p
		}
	}))
	t.Cleanup(hook.Close)
	write(t, filepath.Join(dir, "policy.yaml"), testkit.PolicyYAML("cluster-approvals", `  - id: ask-deploy
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("deploy ")'
    effect:
      ask:
        reason: deploying needs a human
        approval: {hold: 1h, approvers: [alice], notifiers: [ops]}
`))
	write(t, filepath.Join(dir, "agent.secret"), e2eAgentToken)
	write(t, filepath.Join(dir, "alice.secret"), e2eApproverToken)
	urlA, stopA := clusterApprovalReplica(t, nats.URL(), dir, "ra", hook.URL)
	urlB, _ := clusterApprovalReplica(t, nats.URL(), dir, "rb", hook.URL)

	// Held on A, approved through B -> allowed on A.
	held := holdIntercept(urlA, "e1", "deploy prod")
	p := notifiedWhileHeld(t, notified, held, nil, "no notification of the approval opened on A")
	ok := approvals(urlB, "approve", p.ApprovalID, "-comment", "go")
	ok.Expect(t, "approve through B", 0, "")
	if ok.Stdout != p.ApprovalID+" approved by alice\n" {
		t.Errorf("approve through B printed %q", ok.Stdout)
	}
	if r := testkit.Receive(t, held, "the call held on A was not released"); r.err != nil || r.d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("call held on A = %v, %v; want allow", r.d, r.err)
	}
	approvals(urlA, "deny", p.ApprovalID).Expect(t, "deciding twice through A", 1, "already decided")

	// Pending on A, A restarts: the approval is still pending, visible through both replicas.
	held = holdIntercept(urlA, "e2", "deploy staging")
	p = notifiedWhileHeld(t, notified, held, nil, "no notification of the second approval")
	if code := stopA(); code != 0 {
		t.Fatalf("replica A exit code %d", code)
	}
	testkit.Receive(t, held, "the held call was not answered when A shut down")
	urlA2, _ := clusterApprovalReplica(t, nats.URL(), dir, "ra", hook.URL)
	for _, url := range []string{urlA2, urlB} {
		show := approvals(url, "show", p.ApprovalID)
		show.Expect(t, "approvals show after the restart", 0, "")
		if !strings.Contains(show.Stdout, "state:       pending") {
			t.Fatalf("after A restarted, %s shows:\n%s\nwant pending", url, show.Stdout)
		}
	}
	// A retry on the restarted A joins the same approval (no second notification comes before
	// the decision's effect), and B's decision releases it.
	held = holdIntercept(urlA2, "e3", "deploy staging")
	list := approvals(urlB, "list", "-state", "pending")
	list.Expect(t, "approvals list", 0, "")
	if n := strings.Count(list.Stdout, " pending "); n != 1 || !strings.Contains(list.Stdout, p.ApprovalID) {
		t.Fatalf("pending approvals:\n%s\nwant one for the action", list.Stdout)
	}
	approvals(urlB, "approve", p.ApprovalID).Expect(t, "approve through B after the restart", 0, "")
	if r := testkit.Receive(t, held, "the retry held on the restarted A was not released"); r.err != nil || r.d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW {
		t.Fatalf("retry on the restarted A = %v, %v; want allow", r.d, r.err)
	}
	select {
	case extra := <-notified:
		if extra.ApprovalID != p.ApprovalID {
			t.Fatalf("a second approval %s was opened for a retry of %s", extra.ApprovalID, p.ApprovalID)
		}
		t.Fatalf("approval %s notified twice", fmt.Sprint(extra.ApprovalID))
	default:
	}
}
