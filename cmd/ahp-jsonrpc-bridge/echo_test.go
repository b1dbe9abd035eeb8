package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
)

// TestErrorsNeverEchoValuesInEitherDialect feeds secret-looking values into each error path of
// both dialects — a string where a number belongs, an unknown variant, a duplicate key, a bad
// extension name, keys of free-form input in an error's path — and checks that neither the
// answers nor the logs (at debug) carry them.
func TestErrorsNeverEchoValuesInEitherDialect(t *testing.T) {
	t.Parallel()
	secrets := []string{"ghp_0123456789abcdefghijABCDEFGHIJ012345", "password=hunter2secret"}
	var lines []string
	for _, s := range secrets {
		harness := func(id, eventType, depth, payload string) string {
			return `{"jsonrpc":"2.0","id":"` + id + `","method":"ahp/event","params":{"event_type":"` + eventType + `","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":` + depth + `,"payload":` + payload + `}}`
		}
		hooks := func(id, tool, extra string) string {
			return `{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"` + id + `","source":"urn:x","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1"},"tool":` + tool + extra + `},"capabilities":{"effects":["deny"]}}}`
		}
		lines = append(lines,
			harness("h1", "pre_action", `"`+s+`"`, `{"tool_name":"bash"}`),                                     // string in a u32
			harness("h2", s, "0", `{}`),                                                                        // unknown variant
			harness("h3", "pre_action", "0", `{"tool_name":"bash","arguments":{"`+s+`":1,"`+s+`":2}}`),         // accepted (serde keeps the last), and logged without the key
			harness("h4", "run_lifecycle", "0", `{"run_id":"r","status":"`+s+`"}`),                             // unknown variant inside a payload
			hooks("k1", `{"callId":"c","name":"Bash","kind":"shell","input":{}}`, `,"extensions":{"`+s+`":1}`), // extension name
			hooks("k2", `{"callId":"c","name":"Bash","kind":"shell","input":{"`+s+`":1,"`+s+`":2}}`, ""),       // duplicate key
			hooks("k3", `{"callId":"c","name":"Bash","kind":"`+s+`","input":{}}`, ""),                          // unknown enum
			hooks("k4", `{"callId":"c","name":"Bash","kind":"shell","input":{"`+s+`":{"a":1,"a":2}}}`, ""),     // a key on the path
		)
	}
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-log-level", "debug"}, strings.NewReader(strings.Join(lines, "\n")+"\n"), stdout, stderr, noEnv)
	})
	if code := c.Wait(t); code != 0 {
		t.Fatalf("exit %d: %s", code, c.Stderr.String())
	}
	out := c.Stdout.String()
	if n, want := strings.Count(out, `"error"`), len(lines)-len(secrets); n != want {
		t.Fatalf("%d error answers, want %d:\n%s", n, want, out)
	}
	for _, s := range secrets {
		for _, where := range []struct{ name, text string }{{"answers", out}, {"logs", c.Stderr.String()}} {
			if strings.Contains(where.text, s) || strings.Contains(where.text, "hunter2") {
				t.Errorf("the %s carry a value that was sent:\n%s", where.name, where.text)
			}
		}
	}
}

// TestOnceWithABackendThatCannotStartAnswersWithTheFailurePolicy: -once with a policy file that
// does not load, or an unset token variable, answers the message with the failure policy (a
// labelled denial under fail-closed) and exits 0, as `hook` does, instead of printing nothing.
func TestOnceWithABackendThatCannotStartAnswersWithTheFailurePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		deny bool
	}{
		{"missing policy file", []string{"-once", "-policy", "/nonexistent/policy.yaml"}, true},
		{"unset token variable, fail-closed", []string{"-once", "-upstream", "http://127.0.0.1:1", "-upstream-token-env", "AHP_TEST_UNSET_TOKEN", "-failure-policy", "fail-closed"}, true},
		{"unset token variable, fail-open", []string{"-once", "-upstream", "http://127.0.0.1:1", "-upstream-token-env", "AHP_TEST_UNSET_TOKEN", "-failure-policy", "fail-open"}, false},
	} {
		c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
			return run(ctx, tc.args, strings.NewReader(hooksIntercept("e1", "ls")+"\n"), stdout, stderr, noEnv)
		})
		if code := c.Wait(t); code != 0 {
			t.Errorf("%s: exit %d, want 0: %s", tc.name, code, c.Stderr.String())
			continue
		}
		out := c.Stdout.String()
		if !strings.Contains(out, `"synthetic":true`) || strings.Contains(out, `"type":"deny"`) != tc.deny {
			t.Errorf("%s: answer %s, want a labelled answer (deny %v)", tc.name, out, tc.deny)
		}
		if !strings.Contains(c.Stderr.String(), "cannot start the policy backend") {
			t.Errorf("%s: the log does not say why: %s", tc.name, c.Stderr.String())
		}
	}
}

// TestInvalidNotificationIsLoggedAtDebug: a notification nobody answers is not dropped silently.
func TestInvalidNotificationIsLoggedAtDebug(t *testing.T) {
	t.Parallel()
	bad := `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":"deep","payload":{}}}`
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-log-level", "debug"}, strings.NewReader(bad+"\n"), stdout, stderr, noEnv)
	})
	if code := c.Wait(t); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if c.Stdout.String() != "" {
		t.Fatalf("a notification was answered: %s", c.Stdout.String())
	}
	if !strings.Contains(c.Stderr.String(), "notification not accepted") {
		t.Fatalf("no debug line for the dropped notification:\n%s", c.Stderr.String())
	}
}
