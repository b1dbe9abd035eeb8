package main

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

var consoleScreenshots = flag.String("console-screenshots", "", "directory the console browser test writes its screenshots to (../../docs/console updates the documentation's); default: a temporary one")

// The console's browser test policy: the test suite's two rules, a dry-run rule, an ask rule
// that holds deploys for alice's approval and, after a reload, one more rule.
const consolePolicyExtra = `  - id: hold-deploy
    description: Deploys wait for a release manager.
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("deploy ")'
    effect:
      ask:
        reason: deploying needs a release manager
        approval: {hold: 1h, approvers: [alice]}
  - id: watch-curl
    description: Would flag downloads piped to a shell.
    mode: dry-run
    on: [tool.before]
    when: 'has(input.command) && input.command.contains("curl")'
    effect: {deny: {reason: "curl piped to a shell"}}
`

const consolePolicyReloaded = consolePolicyExtra + `  - id: deny-secrets-read
    description: Keep agents out of .env files.
    on: [tool.before]
    when: 'has(input.command) && input.command.contains(".env")'
    effect: {deny: {reason: "secrets files are off limits", code: dev.ahpgateway.test.secrets}}
  - id: pattern-check
    description: Fails at run time on a bad pattern, so the decision is a synthetic denial.
    on: [tool.before]
    when: 'has(input.pattern) && input.command.matches(input.pattern)'
    effect: {deny: {reason: "matched the pattern"}}
`

// TestConsoleInBrowser drives the console in headless Chromium (Debian's chromium package) with
// playwright-core (testdata/console, npm ci) against a real ahp-server on loopback with tokens:
// a decision made with an HTTP request shows on Live within a second, filters hide and show it,
// pause holds it back, the detail, policy and sessions pages show what they should, a deploy held
// for approval shows on Approvals to a watch-only token that cannot decide and, approved there with
// a comment by a token with the approve scope, returns allow (the held call's answer is checked), a
// page without a token and a request with a foreign Origin are refused. It takes the screenshots
// docs/console.md shows (-console-screenshots ../../docs/console). Without node, chromium or
// playwright-core it skips, unless AHP_CONSOLE_OPTIONAL=0 (CI), where it fails.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	scriptDir, err := filepath.Abs(filepath.Join("testdata", "console"))
	if err != nil {
		t.Fatal(err)
	}
	chromium := os.Getenv("AHP_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	var missing []string
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install chromium)")
	}
	if _, err := os.Stat(filepath.Join(scriptDir, "node_modules", "playwright-core")); err != nil {
		missing = append(missing, "playwright-core (npm ci in cmd/ahp-server/testdata/console)")
	}
	if len(missing) > 0 {
		msg := "console browser test needs " + strings.Join(missing, ", ") + "; scripts/install-console-deps.sh installs them"
		if os.Getenv("AHP_CONSOLE_OPTIONAL") == "0" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (set AHP_CONSOLE_OPTIONAL=0 to fail instead)")
	}
	shots := *consoleScreenshots
	if shots == "" {
		shots = t.TempDir()
	} else if shots, err = filepath.Abs(shots); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	watchToken, agentToken := "console-watch-token-0123456789", "console-agent-token-0123456789"
	approverToken := "console-approver-token-0123456789"
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	config := write("config.yaml", "auth:\n  tokens:\n"+
		"    - {name: security-team, scopes: [watch], file: "+write("watch.secret", watchToken)+"}\n"+
		"    - {name: ci-agent, scopes: [agent], file: "+write("agent.secret", agentToken)+"}\n"+
		"    - {name: alice, scopes: [watch, approve], file: "+write("approver.secret", approverToken)+"}\n")
	policyFile := write("policy.yaml", testkit.PolicyYAML("console-demo", consolePolicyExtra))

	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-addr", "127.0.0.1:0", "-config", config, "-policy", policyFile, "-policy-poll", "20ms"}, stdout, stderr, noEnv)
	})
	url := listenURL(t, c)
	// One reload, so that the policy page has a revision 2 and a reload result to show.
	testkit.ReplaceFile(t, policyFile, testkit.PolicyYAML("console-demo", consolePolicyReloaded))
	c.Stderr.Wait(t, func(line string) bool { return strings.Contains(line, "policy reloaded") })

	// A deploy over HTTP that the hold-deploy rule holds until someone decides: the browser test
	// finds it on Approvals and approves it as alice; its answer is checked below.
	held := make(chan heldAnswer, 1)
	go func() {
		client := ahpv1connect.NewInterceptServiceClient(http.DefaultClient, url,
			connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindBearer, Secret: agentToken})))
		ev := testkit.ShellEvent("ev-deploy", "deploy console-demo --env prod", testkit.Session("sess-deploy"), testkit.Agent("agent-d"))
		resp, err := client.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if err != nil {
			held <- heldAnswer{err: err}
			return
		}
		held <- heldAnswer{d: resp.Msg.GetDecision()}
	}()

	node := exec.Command("node", "console.test.mjs")
	node.Dir = scriptDir
	node.Env = append(os.Environ(),
		"AHP_URL="+url, "AHP_WATCH_TOKEN="+watchToken, "AHP_AGENT_TOKEN="+agentToken, "AHP_APPROVER_TOKEN="+approverToken,
		"AHP_CHROMIUM="+chromium, "AHP_SCREENSHOTS="+shots)
	out, err := node.CombinedOutput()
	t.Logf("console.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("browser test failed: %v", err)
	}
	if !strings.Contains(string(out), "all console checks passed") {
		t.Fatal("browser test ended without its closing line")
	}
	// The held call returns allow once the page approved it, with the approver's comment.
	r := testkit.Receive(t, held, "the held deploy was not answered after the page approved it")
	if r.err != nil || r.d.GetVerdict() != ahpv1.Verdict_VERDICT_ALLOW || r.d.GetApprovalId() == "" {
		t.Fatalf("held deploy = %v, %v; want allow with its approval id", r.d, r.err)
	}
	if effects := r.d.GetEffects(); len(effects) != 1 || effects[0].GetMessage().GetText() != "approved by alice: looks good, ship it" {
		t.Errorf("held deploy effects = %v; want the approval comment", effects)
	}
	if strings.Contains(c.Stderr.String(), watchToken) || strings.Contains(c.Stderr.String(), agentToken) || strings.Contains(c.Stderr.String(), approverToken) {
		t.Error("a token reached the server's log")
	}
}

// The console is on by default; -ui=false or AHP_UI=false turns it off, and /ui/ is then an
// unknown path like any other.
func TestUIFlagTurnsTheConsoleOff(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"default", nil, nil, http.StatusOK},
		{"-ui=false", []string{"-ui=false"}, nil, http.StatusNotFound},
		{"AHP_UI=false", nil, map[string]string{"AHP_UI": "false"}, http.StatusNotFound},
		{"AHP_UI=false, -ui", []string{"-ui"}, map[string]string{"AHP_UI": "false"}, http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
				return run(ctx, append([]string{"-addr", "127.0.0.1:0"}, tc.args...), stdout, stderr, clitest.Env(tc.env))
			})
			url := listenURL(t, c)
			resp, err := http.Get(url + "/ui/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("GET /ui/: status %d, want %d", resp.StatusCode, tc.want)
			}
			if code := c.Stop(t); code != 0 {
				t.Fatalf("exit code %d; stderr: %s", code, c.Stderr.String())
			}
		})
	}
}
