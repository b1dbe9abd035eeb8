package auth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	a := newAuth(t, testConfig, auth.Options{})
	assertEqual(t, "mode", a.Mode(), auth.Enforced)
	for _, tc := range []struct {
		c    auth.Credential
		name string // "" for invalid
	}{
		{auth.Credential{Kind: auth.KindBearer, Secret: agentToken}, "agent-bearer"},
		{auth.Credential{Kind: auth.KindBearer, Secret: watchToken}, "watch-bearer"},
		{auth.Credential{Kind: auth.KindBearer, Secret: adminToken}, "admin-bearer"},
		{auth.Credential{Kind: auth.KindAPIKey, Secret: agentKey}, "agent-key"},
		{auth.Credential{Kind: auth.KindAPIKey, Secret: watchKey}, "watch-key"},
		{auth.Credential{Kind: auth.KindBearer, Secret: wrongToken}, ""},
		{auth.Credential{Kind: auth.KindBearer, Secret: agentToken[:len(agentToken)-1]}, ""}, // a prefix
		{auth.Credential{Kind: auth.KindBearer, Secret: agentToken + "x"}, ""},               // an extension
		{auth.Credential{Kind: auth.KindBearer, Secret: ""}, ""},
		{auth.Credential{Kind: auth.KindAPIKey, Secret: agentToken}, ""}, // right secret, wrong kind
	} {
		p, err := a.Authenticate(tc.c)
		if tc.name == "" {
			if !errors.Is(err, auth.ErrInvalid) {
				t.Errorf("Authenticate(%v) = %v, %v; want ErrInvalid", tc.c, p, err)
			}
			assertEqual(t, "error text", err.Error(), "invalid credentials") // says nothing more
			continue
		}
		if err != nil {
			t.Errorf("Authenticate(%v): %v", tc.c, err)
			continue
		}
		assertEqual(t, "principal", p.Name, tc.name)
		assertEqual(t, "kind", p.Kind, tc.c.Kind)
	}
	p, _ := a.Authenticate(auth.Credential{Kind: auth.KindBearer, Secret: adminToken})
	assertEqual(t, "admin has admin", p.Has(auth.ScopeAdmin), true)
	assertEqual(t, "admin has agent", p.Has(auth.ScopeAgent), false) // scopes do not imply each other
}

func TestAuthorizeScopes(t *testing.T) {
	t.Parallel()
	a := newAuth(t, testConfig, auth.Options{})
	watch := "/ahp.v1.ObservationService/Watch"
	agentCred := auth.Credential{Kind: auth.KindBearer, Secret: agentToken}
	if _, err := a.Authorize(watch, agentCred, nil); !errors.Is(err, auth.ErrForbidden) {
		t.Errorf("agent token on Watch: %v, want ErrForbidden", err)
	} else if auth.Unauthenticated(err) {
		t.Errorf("agent token on Watch: %v counts as unauthenticated, want only forbidden", err)
	} else {
		assertEqual(t, "message", err.Error(), `permission denied: /ahp.v1.ObservationService/Watch needs the "watch" scope`)
	}
	if _, err := a.Authorize(watch, auth.Credential{}, auth.ErrMissing); auth.ReasonOf(err) != auth.ReasonMissing {
		t.Errorf("no credential on Watch: %v", err)
	}
	if p, err := a.Authorize("/grpc.health.v1.Health/Check", auth.Credential{}, auth.ErrMissing); err != nil {
		t.Errorf("health without a credential: %v; want public", err)
	} else if p != nil {
		t.Errorf("health without a credential: principal %v, want none", p)
	}
	if _, err := a.Authorize("/ahp.v1.Nope/Nope", agentCred, nil); auth.ReasonOf(err) != auth.ReasonNoRule {
		t.Errorf("unknown procedure: %v, want no_rule", err)
	}
}

func TestMissingOrEmptySecretNamesTheEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	short := filepath.Join(dir, "short")
	twoLines := filepath.Join(dir, "two-lines")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	os.WriteFile(short, []byte("short-secret\n"), 0o600)
	os.WriteFile(twoLines, []byte(agentToken+"\n"+watchToken+"\n"), 0o600)
	for _, tc := range []struct {
		name string
		cfg  auth.CredentialConfig
		env  map[string]string
		want string
	}{
		{"unset env", auth.CredentialConfig{Env: "UNSET"}, nil, `tokens[0] ("x"): env: the environment variable is not set`},
		{"empty env", auth.CredentialConfig{Env: "EMPTY"}, map[string]string{"EMPTY": "  "}, `tokens[0] ("x"): env: the secret is empty`},
		{"empty file", auth.CredentialConfig{File: empty}, nil, `tokens[0] ("x"): file: the secret is empty`},
		{"short file", auth.CredentialConfig{File: short}, nil, "shorter than 16 characters"},
		{"two lines", auth.CredentialConfig{File: twoLines}, nil, "one line of printable"},
		{"missing file", auth.CredentialConfig{File: filepath.Join(dir, "nope")}, nil, `tokens[0] ("x"): file: cannot read: no such file or directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Name, tc.cfg.Scopes = "x", []auth.Scope{auth.ScopeAgent}
			_, err := auth.New(auth.Config{Tokens: []auth.CredentialConfig{tc.cfg}}, auth.Options{LookupEnv: lookup(tc.env)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			assertNoSecret(t, "error", err.Error(), "short-secret")
		})
	}
}

func TestDuplicateSecretRefused(t *testing.T) {
	t.Parallel()
	cfg := auth.Config{Tokens: []auth.CredentialConfig{
		{Name: "a", Scopes: []auth.Scope{auth.ScopeAgent}, Env: "AGENT_TOKEN"},
		{Name: "b", Scopes: []auth.Scope{auth.ScopeWatch}, Env: "SAME"},
	}}
	_, err := auth.New(cfg, auth.Options{LookupEnv: lookup(map[string]string{"AGENT_TOKEN": agentToken, "SAME": agentToken})})
	if err == nil || !strings.Contains(err.Error(), `tokens[1] ("b"): has the same secret as tokens[0] ("a")`) {
		t.Fatalf("err = %v", err)
	}
	assertNoSecret(t, "error", err.Error())
	// The same secret as a token and as an API key is one credential presented two ways: fine.
	cfg = auth.Config{
		Tokens:  []auth.CredentialConfig{{Name: "a", Scopes: []auth.Scope{auth.ScopeAgent}, Env: "AGENT_TOKEN"}},
		APIKeys: []auth.CredentialConfig{{Name: "b", Scopes: []auth.Scope{auth.ScopeAgent}, Env: "AGENT_TOKEN"}},
	}
	if _, err := auth.New(cfg, auth.Options{LookupEnv: lookup(testEnv)}); err != nil {
		t.Fatal(err)
	}
}

// TestFileReload: a rotated token file takes effect on Reload and Run; a broken one keeps the
// previous secrets in force, and the log names the entry but never a secret.
func TestFileReload(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(agentToken + "\n")
	logs := &testkit.LogBuffer{}
	// Once Run runs, each of its reads waits until the test takes it from reads: the test counts
	// Run's ticks instead of sleeping through them.
	var running atomic.Bool
	reads, stop := make(chan struct{}), make(chan struct{})
	readFile := func(path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		if running.Load() {
			select {
			case reads <- struct{}{}:
			case <-stop:
			}
		}
		return b, err
	}
	ticks := func(n int) {
		t.Helper()
		timeout := time.NewTimer(testkit.WaitTimeout)
		defer timeout.Stop()
		for i := range n {
			select {
			case <-reads:
			case <-timeout.C:
				t.Fatalf("Run read the token file %d times in %v, want %d", i, testkit.WaitTimeout, n)
			}
		}
	}
	a := newAuth(t, "reload_interval: 5ms\ntokens:\n  - {name: rotating, scopes: [agent], file: "+file+"}\n",
		auth.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), ReadFile: readFile})
	valid := func(secret string) bool {
		_, err := a.Authenticate(auth.Credential{Kind: auth.KindBearer, Secret: secret})
		return err == nil
	}
	if !valid(agentToken) {
		t.Fatal("initial token not accepted")
	}

	changed, err := a.Reload()
	if err != nil {
		t.Fatalf("Reload of an unchanged file: %v", err)
	}
	if changed {
		t.Fatal("Reload of an unchanged file reports a change")
	}

	write(watchToken)
	if changed, err := a.Reload(); err != nil {
		t.Fatalf("Reload of a rotated file: %v", err)
	} else if !changed {
		t.Fatal("Reload of a rotated file reports no change")
	}
	assertEqual(t, "old token after rotation", valid(agentToken), false)
	assertEqual(t, "new token after rotation", valid(watchToken), true)

	write("")
	_, err = a.Reload()
	if err == nil || !strings.Contains(err.Error(), `tokens[0] ("rotating"): file: the secret is empty`) {
		t.Fatalf("Reload of an empty file: %v", err)
	}
	assertEqual(t, "token kept after a failed reload", valid(watchToken), true)

	// Run picks up the next rotation by itself. A read under way when the file is written may
	// see the old content; the next read sees the new one, and the read after that begins once
	// Run has applied it.
	running.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	write(adminToken)
	ticks(3)
	assertEqual(t, "new token after Run's reload", valid(adminToken), true)
	write("x") // broken for ten ticks: logged once, old secret stays
	ticks(1 + 10 + 1)
	close(stop)
	cancel()
	<-done
	assertEqual(t, "token kept while the file is broken", valid(adminToken), true)
	out := logs.String()
	if !strings.Contains(out, "auth: secret files reloaded") {
		t.Errorf("no reload logged; logs = %s", out)
	}
	if n := strings.Count(out, "shorter than 16 characters"); n != 1 {
		t.Errorf("the broken file was logged %d times, want once; logs = %s", n, out)
	}
	assertNoSecret(t, "logs", out)
}

func TestRunWithoutFilesReturns(t *testing.T) {
	t.Parallel()
	a := newAuth(t, testConfig, auth.Options{})
	done := make(chan struct{})
	go func() { a.Run(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run blocked with nothing to reload")
	}
}

// A secret file every local user may read loads, with a warning naming the credential; a private
// one loads silently.
func TestWorldReadableSecretFileWarns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o600, false}} {
		file := filepath.Join(dir, tc.mode.String())
		if err := os.WriteFile(file, []byte(agentToken+"\n"), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(file, tc.mode); err != nil { // past the umask
			t.Fatal(err)
		}
		logs := &bytes.Buffer{}
		newAuth(t, "tokens:\n  - {name: shared, scopes: [agent], file: "+file+"}\n",
			auth.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
		got := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "readable by every local user") && strings.Contains(logs.String(), "credential=shared")
		if got != tc.warn {
			t.Errorf("mode %v: log = %q, want a warning: %v", tc.mode, logs.String(), tc.warn)
		}
		if strings.Contains(logs.String(), agentToken) {
			t.Errorf("mode %v: the log shows the secret", tc.mode)
		}
	}
}
