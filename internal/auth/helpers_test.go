package auth_test

import (
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// Secrets used across the tests. Every test that can produce text (errors, logs, responses)
// checks that none of them appears in it.
const (
	agentToken = "agent-token-0123456789abcdef"
	watchToken = "watch-token-0123456789abcdef"
	adminToken = "admin-token-0123456789abcdef"
	agentKey   = "agent-key-0123456789abcdef"
	watchKey   = "watch-key-0123456789abcdef"
	wrongToken = "wrong-token-0123456789abcdef"
)

var allSecrets = []string{agentToken, watchToken, adminToken, agentKey, watchKey, wrongToken}

var testEnv = map[string]string{
	"AGENT_TOKEN": agentToken,
	"WATCH_TOKEN": watchToken,
	"ADMIN_TOKEN": adminToken,
	"AGENT_KEY":   agentKey,
	"WATCH_KEY":   watchKey,
}

const testConfig = `
tokens:
  - {name: agent-bearer, scopes: [agent], env: AGENT_TOKEN}
  - {name: watch-bearer, scopes: [watch], env: WATCH_TOKEN}
  - {name: admin-bearer, scopes: [admin], env: ADMIN_TOKEN}
api_keys:
  - {name: agent-key, scopes: [agent], env: AGENT_KEY}
  - {name: watch-key, scopes: [watch], env: WATCH_KEY}
`

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

// newAuth builds an Authenticator from YAML with the test environment.
func newAuth(t testing.TB, yamlText string, opts auth.Options) *auth.Authenticator {
	t.Helper()
	cfg, err := auth.ParseConfig([]byte(yamlText))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = lookup(testEnv)
	}
	if opts.Logger == nil {
		opts.Logger = testkit.Discard()
	}
	a, err := auth.New(cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// assertNoSecret fails if text contains any test secret (or the extra ones given).
func assertNoSecret(t testing.TB, what, text string, extra ...string) {
	t.Helper()
	for _, s := range append(append([]string(nil), allSecrets...), extra...) {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s leaks a secret: %q", what, text)
		}
	}
}

func assertEqual[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
