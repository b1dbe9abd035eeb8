package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine to write while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func noEnv(string) string { return "" }

func TestServePrintsOneLineAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, &stdout, &stderr, noEnv) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stdout.String(), "\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no listen line; stderr: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	line := stdout.String()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "ahp-server listening on ")
	if !ok || strings.Count(line, "\n") != 1 {
		t.Fatalf("stdout = %q", line)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/ahp.v1.HarnessService/GetCapabilities", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GetCapabilities status %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d; stderr: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
}

func TestPolicyCheckAndTest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	tests := filepath.Join(dir, "tests.yaml")
	failing := filepath.Join(dir, "failing.yaml")
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(good, `version: 1
name: t
rules:
  - id: deny-rm
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("rm ")'
    effect: {deny: {reason: no rm}}
`)
	write(bad, "version: 1\nrules:\n  - id: broken\n    when: 'input.('\n    effect: {deny: {reason: r}}\n")
	write(tests, `cases:
  - name: rm is denied
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "rm -rf x"}}}
    expect: {verdict: deny}
`)
	write(failing, `cases:
  - name: ls is denied (wrong on purpose)
    event: {type: tool.before, tool: {name: Bash, kind: shell, input: {command: "ls"}}}
    expect: {verdict: deny}
`)
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"policy", "check", good}, 0, "OK (1 rules", ""},
		{[]string{"policy", "check", bad}, 1, "", `"broken"`},
		{[]string{"policy", "test", good, tests}, 0, "rm is denied", ""},
		{[]string{"policy", "test", good, failing}, 1, "ls is denied (wrong on purpose)", ""},
		{[]string{"policy", "frobnicate"}, 2, "", "usage"},
		{[]string{"-no-such-flag"}, 2, "", "no-such-flag"},
		{[]string{"-help"}, 0, "", "-policy"},
	}
	for _, tc := range cases {
		var stdout, stderr syncBuffer
		code := run(context.Background(), tc.args, &stdout, &stderr, noEnv)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%v: code %d, stdout %q, stderr %q", tc.args, code, stdout.String(), stderr.String())
		}
	}
}

func TestEnvironmentSetsDefaults(t *testing.T) {
	t.Parallel()
	var stdout, stderr syncBuffer
	env := map[string]string{"AHP_ADDR": "127.0.0.1:0", "AHP_POLICY": "/nonexistent/policy.yaml"}
	code := run(context.Background(), nil, &stdout, &stderr, func(k string) string { return env[k] })
	if code != 1 || !strings.Contains(stderr.String(), "/nonexistent/policy.yaml") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
}
