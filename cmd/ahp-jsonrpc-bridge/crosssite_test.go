package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
)

// hookRequest POSTs a Claude Code hook input the way a browser page or a runtime would.
func hookRequest(t *testing.T, url, contentType string, header map[string]string, host string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(claudePreToolUse("rm -rf /")))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := (&http.Client{Timeout: testTimeout}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestHookHTTPRefusesCrossSiteRequests: the Claude Code HTTP hook adapter answers its runtime,
// but not a web page — a cross-site form POST (no JSON content type), a fetch from another
// origin, or a request under a rebinding attacker's host name — so nothing a page sends reaches
// session memory as an injected fact.
func TestHookHTTPRefusesCrossSiteRequests(t *testing.T) {
	t.Parallel()
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"hook", "claude-code", "-http", "127.0.0.1:0", "-log-format", "json"}, strings.NewReader(""), stdout, stderr, noEnv)
	})
	addr := listening(t, c.Stderr, "http")["http"]
	url := "http://" + addr + "/claude-code"
	_, port, _ := strings.Cut(addr, ":")
	for _, tc := range []struct {
		name, contentType string
		header            map[string]string
		host              string
		want              int
	}{
		{"Claude Code", "application/json", nil, "", http.StatusOK},
		{"Claude Code at localhost", "application/json", nil, "localhost:" + port, http.StatusOK},
		{"a form POST without a content type", "", nil, "", http.StatusUnsupportedMediaType},
		{"a text/plain cross-site POST", "text/plain", map[string]string{"Origin": "https://evil.example"}, "", http.StatusForbidden},
		{"a fetch from another origin", "application/json", map[string]string{"Origin": "https://evil.example"}, "", http.StatusForbidden},
		{"DNS rebinding", "application/json", nil, "rebind.attacker.example:" + port, http.StatusForbidden},
	} {
		if got := hookRequest(t, url, tc.contentType, tc.header, tc.host); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	if code := c.Stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, c.Stderr.String())
	}
}

// TestHookHTTPAuth: with an auth section in -config, the HTTP form asks for agent credentials,
// as the bridge's HTTP transport does (Claude Code's http hooks send headers from the settings).
func TestHookHTTPAuth(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("auth:\n  tokens:\n    - {name: claude, scopes: [agent], env: HOOK_TOKEN}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "hook-token-0123456789abcdef"
	env := clitest.Env(map[string]string{"HOOK_TOKEN": token})
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"hook", "claude-code", "-http", "127.0.0.1:0", "-log-format", "json", "-config", config}, strings.NewReader(""), stdout, stderr, env)
	})
	url := "http://" + listening(t, c.Stderr, "http")["http"] + "/claude-code"
	if got := hookRequest(t, url, "application/json", nil, ""); got != http.StatusUnauthorized {
		t.Errorf("no credential: status %d, want 401", got)
	}
	if got := hookRequest(t, url, "application/json", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, ""); got != http.StatusUnauthorized {
		t.Errorf("wrong credential: status %d, want 401", got)
	}
	if got := hookRequest(t, url, "application/json", map[string]string{"Authorization": "Bearer " + token}, ""); got != http.StatusOK {
		t.Errorf("agent token: status %d, want 200", got)
	}
	c.Stop(t)
}

// TestBridgeHTTPAndWebSocketCheckHostAndOrigin: the bridge's HTTP and WebSocket listeners on
// loopback answer loopback names only, and HTTP answers no other site's page.
func TestBridgeHTTPAndWebSocketCheckHostAndOrigin(t *testing.T) {
	t.Parallel()
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"-http", "127.0.0.1:0", "-ws", "127.0.0.1:0", "-log-format", "json"}, strings.NewReader(""), stdout, stderr, noEnv)
	})
	addrs := listening(t, c.Stderr, "http", "websocket")
	_, port, _ := strings.Cut(addrs["http"], ":")
	send := func(method, url string, header map[string]string, host, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := (&http.Client{Timeout: testTimeout}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	hooks := "http://" + addrs["http"] + "/hooks"
	msg := hooksIntercept("x1", "ls")
	if got := send(http.MethodPost, hooks, nil, "localhost:"+port, msg); got != http.StatusOK {
		t.Errorf("HTTP at localhost: %d, want 200", got)
	}
	if got := send(http.MethodPost, hooks, nil, "rebind.attacker.example:"+port, msg); got != http.StatusForbidden {
		t.Errorf("HTTP under a rebinding name: %d, want 403", got)
	}
	if got := send(http.MethodPost, hooks, map[string]string{"Origin": "https://evil.example"}, "", msg); got != http.StatusForbidden {
		t.Errorf("HTTP from another origin: %d, want 403", got)
	}
	upgrade := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	_, wsPort, _ := strings.Cut(addrs["websocket"], ":")
	if got := send(http.MethodGet, "http://"+addrs["websocket"]+"/", upgrade, "rebind.attacker.example:"+wsPort, ""); got != http.StatusForbidden {
		t.Errorf("WebSocket upgrade under a rebinding name: %d, want 403", got)
	}
	c.Stop(t)
}
