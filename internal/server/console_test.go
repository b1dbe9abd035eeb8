package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/console"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// The console's policy page reports the server's reloads: a failed one with its error (the
// previous policy staying in force), then a successful one.
func TestConsoleReportsReloadResults(t *testing.T) {
	t.Parallel()
	file := t.TempDir() + "/policy.yaml"
	testkit.ReplaceFile(t, file, testkit.PolicyYAML("one", ""))
	srv, err := server.New(server.Config{
		PolicyFile: file, PolicyPollInterval: -1, Logger: testkit.Discard(),
		Metrics: metrics.New(metrics.Options{NoRuntimeMetrics: true, Logger: testkit.Discard()}),
		Console: console.Options{Enabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	type policyPage struct {
		Name   string `json:"name"`
		Digest string `json:"digest"`
		Reload struct {
			FromFile bool                  `json:"from_file"`
			Reloads  uint64                `json:"reloads"`
			Failures uint64                `json:"failures"`
			Last     *console.ReloadResult `json:"last"`
		} `json:"reload"`
	}
	get := func() policyPage {
		t.Helper()
		r := httptest.NewRequest("GET", "http://127.0.0.1/ui/api/policy", nil)
		r.RemoteAddr = "127.0.0.1:4000"
		r = r.WithContext(contextWithLocalAddr(r, "127.0.0.1:8080"))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		var p policyPage
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := get()
	if !first.Reload.FromFile || first.Reload.Last != nil || first.Name != "one" {
		t.Fatalf("before any reload: %+v", first)
	}
	testkit.ReplaceFile(t, file, "version: 1\nrules:\n  - id: broken\n    when: 'input.('\n    effect: {deny: {reason: r}}\n")
	if err := srv.ReloadPolicy(); err == nil {
		t.Fatal("a broken policy reloaded")
	}
	failed := get()
	if l := failed.Reload.Last; l == nil || l.OK || !strings.Contains(l.Error, "broken") || l.Digest != first.Digest || failed.Reload.Failures != 1 {
		t.Fatalf("after a failed reload: %+v, last %+v", failed.Reload, failed.Reload.Last)
	}
	testkit.ReplaceFile(t, file, testkit.PolicyYAML("two", ""))
	if err := srv.ReloadPolicy(); err != nil {
		t.Fatal(err)
	}
	ok := get()
	if l := ok.Reload.Last; l == nil || !l.OK || l.Error != "" || ok.Name != "two" || l.Digest != ok.Digest || ok.Reload.Reloads != 1 {
		t.Fatalf("after a good reload: %+v, last %+v", ok.Reload, ok.Reload.Last)
	}
}

// contextWithLocalAddr gives r the listener address net/http would, for the console's loopback
// check.
func contextWithLocalAddr(r *http.Request, local string) context.Context {
	addr, _ := net.ResolveTCPAddr("tcp", local)
	return context.WithValue(r.Context(), http.LocalAddrContextKey, addr)
}
