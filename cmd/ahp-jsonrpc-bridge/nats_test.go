package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/natstest"
	"github.com/ahp-gateway/ahp/internal/cluster/policykv"
)

// Policy A denies `make deploy`; policy B does not mention it, so the built-in allow decides.
const (
	policyDenyDeploy = `
version: 1
name: deny-deploy
rules:
  - id: deny-deploy
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.startsWith("make deploy")'
    effect: {deny: {reason: "no deploys today", code: dev.ahpgateway.test.deploy}}
`
	policyAllowDeploy = `
version: 1
name: allow-deploy
rules:
  - id: deny-rm
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.startsWith("rm ")'
    effect: {deny: {reason: "no rm"}}
`
)

// switchedTo waits until the bridge logs that the policy of revision rev is in force.
func switchedTo(t *testing.T, logs *clitest.Output, rev string) {
	t.Helper()
	logs.Wait(t, func(line string) bool {
		return strings.Contains(line, `"msg":"policy switched"`) && strings.Contains(line, `"revision":`+rev+`,`) &&
			strings.Contains(line, `"digest":"sha256:`)
	})
}

// wantRevision sends one intercept and checks that its answer names the cluster policy of
// revision rev (issue 15: every decision records the policy revision and digest).
func wantRevision(t *testing.T, url, id string, rev float64) {
	t.Helper()
	status, body := post(t, url, hooksIntercept(id, "ls"))
	if status != 200 {
		t.Fatalf("%s: status %d: %s", id, status, body)
	}
	digest, got, present := policyOf(t, body)
	if !present || got != rev || !strings.HasPrefix(digest, "sha256:") {
		t.Errorf("%s: policy revision %v (present %v), digest %q, want revision %v: %s", id, got, present, digest, rev, body)
	}
}

func TestEmbeddedBridgeFollowsTheClusterPolicy(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	conn, err := cluster.Connect(cluster.Config{Servers: []string{nats.URL()}, Prefix: "bridgetest"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	if _, err := policykv.Push(ctx, conn, []byte(policyDenyDeploy), "a.yaml"); err != nil {
		t.Fatal(err)
	}

	args := []string{"-http", "127.0.0.1:0", "-log-format", "json", "-nats", nats.URL(), "-nats-prefix", "bridgetest"}
	bridge := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, args, strings.NewReader(""), stdout, stderr, noEnv)
	})
	url := "http://" + listening(t, bridge.Stderr, "http")["http"] + "/hooks"
	// The policy pushed before the bridge started is in force from its first call.
	switchedTo(t, bridge.Stderr, "1")
	expectPost(t, "make deploy under policy A", url, hooksIntercept("a1", "make deploy"), 200, "deny: no deploys today")
	wantRevision(t, url, "a2", 1)

	if _, err := policykv.Push(ctx, conn, []byte(policyAllowDeploy), "b.yaml"); err != nil {
		t.Fatal(err)
	}
	switchedTo(t, bridge.Stderr, "2")
	expectPost(t, "make deploy under policy B", url, hooksIntercept("b1", "make deploy"), 200, "no-effect")
	expectPost(t, "rm under policy B", url, hooksIntercept("b2", "rm -rf x"), 200, "deny: no rm")
	wantRevision(t, url, "b3", 2)

	// A value that does not compile, written past the push command's check, is logged once and
	// ignored: policy B stays.
	kv, err := policykv.Open(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, policykv.Key, []byte("version: 1\nrules: [{id: x, when: '(', effect: {deny: {reason: r}}}]\n")); err != nil {
		t.Fatal(err)
	}
	bridge.Stderr.Wait(t, func(line string) bool {
		return strings.Contains(line, "does not compile") && strings.Contains(line, `"revision":3`)
	})
	expectPost(t, "make deploy after a broken value", url, hooksIntercept("c1", "make deploy"), 200, "no-effect")
	expectPost(t, "rm after a broken value", url, hooksIntercept("c2", "rm -rf x"), 200, "deny: no rm")
	wantRevision(t, url, "c3", 2) // the broken revision 3 is not in force

	if code := bridge.Stop(t); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, bridge.Stderr.String())
	}
	if n := strings.Count(bridge.Stderr.String(), "does not compile"); n != 1 {
		t.Fatalf("the broken value was logged %d times, want once", n)
	}
}

func TestNATSFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []usageCase{
		{[]string{"-nats-prefix", "x"}, nil, "-nats-prefix needs -nats"},
		{[]string{"-nats-token-env", "TOK"}, nil, "-nats-token-env needs -nats"},
		{[]string{"-nats", "nats://127.0.0.1:1", "-upstream", "http://127.0.0.1:1", "-failure-policy", "fail-open"}, nil, "-nats is for embedded mode"},
		{[]string{"-nats", "nats://u:secret@127.0.0.1:1"}, nil, "cluster.servers[0]: must not carry credentials"},
		{[]string{"-nats", "nats://127.0.0.1:1", "-nats-token-env", "not a name"}, nil, "cluster.token_env"},
		{[]string{"-nats", "nats://127.0.0.1:1", "-nats-cert", "c.pem"}, nil, "cert_file and key_file go together"},
	} {
		c.check(t, "")
	}
}

// A bridge answering one event reads the policy in force once. One that cannot reach NATS does
// not decide by a policy other than the cluster's: with -once its backend did not start, so the
// message meets the failure policy (labelled); a persistent bridge exits 1.
func TestOnceBridgeReadsTheClusterPolicy(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t)
	conn, err := cluster.Connect(cluster.Config{Servers: []string{nats.URL()}, Prefix: "oncetest"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := policykv.Push(context.Background(), conn, []byte(policyDenyDeploy), "a.yaml"); err != nil {
		t.Fatal(err)
	}
	r := runBridge([]string{"-once", "-nats", nats.URL(), "-nats-prefix", "oncetest"}, nil, hooksIntercept("o1", "make deploy")+"\n")
	r.Expect(t, "once with -nats", 0, "")
	if got := verdict(t, strings.TrimSpace(r.Stdout)); got != "deny: no deploys today" {
		t.Fatalf("once with -nats: %s, want the pushed policy's deny", got)
	}

	nats.Stop()
	r = runBridge([]string{"-once", "-nats", nats.URL(), "-nats-prefix", "oncetest"}, nil, hooksIntercept("o2", "make deploy")+"\n")
	r.Expect(t, "once with NATS down", 0, "cannot start the policy backend")
	if a := strings.TrimSpace(r.Stdout); verdict(t, a) != "deny: Required policy backend unavailable." || !strings.Contains(a, `"synthetic":true`) {
		t.Fatalf("once with NATS down answered %s, want the labelled fail-closed deny", a)
	}
	r = runBridge([]string{"-http", "127.0.0.1:0", "-nats", nats.URL(), "-nats-prefix", "oncetest"}, nil, "")
	r.Expect(t, "persistent with NATS down", 1, "cannot start the bridge")
}
