package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// reloadServer builds a server of a policy file without running its watcher: the tests reload
// with ReloadPolicy, as SIGHUP does.
func reloadServer(t *testing.T, content string, logs *testkit.LogBuffer) (*server.Server, *metrics.Metrics, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	testkit.ReplaceFile(t, file, content)
	m := metrics.New(metrics.Options{NoRuntimeMetrics: true, Logger: testkit.Discard()})
	srv, err := server.New(server.Config{PolicyFile: file, PolicyPollInterval: -1, Metrics: m, Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	return srv, m, file
}

// After a failed reload, a file restored to the policy in force makes the last reload a success
// again, without counting a reload.
func TestRestoredPolicyFileSetsReloadSuccessBack(t *testing.T) {
	t.Parallel()
	var logs testkit.LogBuffer
	srv, m, file := reloadServer(t, basePolicy, &logs)
	testkit.ReplaceFile(t, file, "rules: [this is: not valid")
	if err := srv.ReloadPolicy(); err == nil {
		t.Fatal("ReloadPolicy of a broken file = nil")
	}
	if v := gauge(t, m, "ahp_policy_last_reload_success", ""); v != 0 {
		t.Fatalf("after a failed reload ahp_policy_last_reload_success = %v, want 0", v)
	}
	testkit.ReplaceFile(t, file, basePolicy)
	if err := srv.ReloadPolicy(); err != nil {
		t.Fatal(err)
	}
	if v := gauge(t, m, "ahp_policy_last_reload_success", ""); v != 1 {
		t.Errorf("after restoring the file ahp_policy_last_reload_success = %v, want 1", v)
	}
	if v := gauge(t, m, "ahp_policy_reloads_total", ""); v != 0 {
		t.Errorf("ahp_policy_reloads_total = %v: restoring the policy in force is not a reload", v)
	}
	if !strings.Contains(logs.String(), `msg="policy file loads again`) {
		t.Errorf("recovery not logged:\n%s", logs.String())
	}
}

// A reload that loses rules is logged at WARN with both counts.
func TestReloadToFewerRulesWarns(t *testing.T) {
	t.Parallel()
	var logs testkit.LogBuffer
	srv, _, file := reloadServer(t, basePolicy, &logs)
	was := len(srv.Policy().Rules())
	if err := os.WriteFile(file, []byte("version: 1\nname: shrunk\nrules:\n  - id: a\n    effect: {deny: {reason: one}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.ReloadPolicy(); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	for _, want := range []string{"level=WARN", "FEWER rules", "rules=1 ", "previous_rules=" + strconv.Itoa(was)} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
}
