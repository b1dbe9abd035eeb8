package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/bridge"
)

func TestBridgeClientAuthAndFailureMetrics(t *testing.T) {
	const token = "bridge-client-token-0123456789"
	t.Setenv("AHP_TEST_BRIDGE_TOKEN", token)
	file := filepath.Join(t.TempDir(), "bridge.yaml")
	if err := os.WriteFile(file, []byte("auth:\n  tokens:\n    - {name: harness, scopes: [agent], env: AHP_TEST_BRIDGE_TOKEN}\n  api_keys:\n    - {name: harness-key, scopes: [agent], env: AHP_TEST_BRIDGE_TOKEN}\nmetrics:\n  addr: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := loadHardening(&config{configFile: file}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer h.metricsLn.Close()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

	httpSrv := httptest.NewServer(h.requireHTTP(ok))
	defer httpSrv.Close()
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no credential", nil, http.StatusUnauthorized},
		{"wrong bearer", map[string]string{"Authorization": "Bearer not-the-token-at-all-123"}, http.StatusUnauthorized},
		{"bearer", map[string]string{"Authorization": "Bearer " + token}, http.StatusOK},
		{"api key", map[string]string{"X-API-Key": token}, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, httpSrv.URL+"/hooks", strings.NewReader("{}"))
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if strings.Contains(string(body), token) {
			t.Errorf("%s: response leaks the token", tc.name)
		}
	}

	// WebSocket clients of the Harness reference send credentials as query parameters.
	wsSrv := httptest.NewServer(h.requireWebSocket(ok))
	defer wsSrv.Close()
	for query, want := range map[string]int{"": http.StatusUnauthorized, "?token=" + token: http.StatusOK, "?api_key=" + token: http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, wsSrv.URL+"/ahp"+query, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("websocket %q: status %d, want %d", query, resp.StatusCode, want)
		}
	}

	// Upstream failures reach the metrics, by dialect and policy.
	h.onFailure(bridge.FailureEvent{Dialect: "hooks", Failure: bridge.FailureDeadlineExceeded, Policy: bridge.FailClosed})
	h.onFailure(bridge.FailureEvent{Dialect: "harness", Failure: bridge.FailureUnavailable, Policy: bridge.FailOpen})
	// The listener is open, so the request waits in its backlog until Serve accepts it.
	go func() { _ = h.metrics.Serve(t.Context(), h.metricsLn) }()
	resp, err := http.Get("http://" + h.metricsLn.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`ahp_bridge_fail_closed_total{dialect="hooks",reason="deadline_exceeded"} 1`,
		`ahp_bridge_fail_open_total{dialect="harness",reason="unavailable"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
