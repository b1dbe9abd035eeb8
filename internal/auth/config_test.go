package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/auth"
	"go.yaml.in/yaml/v3"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cfg, err := auth.ParseConfig([]byte(`
require: true
reload_interval: 5s
public_reflection: false
tokens:
  - name: ci
    scopes: [agent, watch]
    env: CI_TOKEN
api_keys:
  - name: dash
    scopes: [watch]
    file: /run/secrets/dash
`))
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "tokens", len(cfg.Tokens), 1)
	assertEqual(t, "token name", cfg.Tokens[0].Name, "ci")
	assertEqual(t, "token scopes", len(cfg.Tokens[0].Scopes), 2)
	assertEqual(t, "api key file", cfg.APIKeys[0].File, "/run/secrets/dash")
	assertEqual(t, "require", *cfg.Require, true)
	assertEqual(t, "public_reflection", *cfg.PublicReflection, false)
	assertEqual(t, "reload_interval", cfg.ReloadInterval.String(), "5s")
}

// TestLiteralSecretRefused: a secret written into the file is refused, wherever it is, and the
// error names the field but not the value.
func TestLiteralSecretRefused(t *testing.T) {
	t.Parallel()
	const secret = "sk-literal-9f8e7d6c5b4a39281706"
	const refused = ": a literal secret in the configuration is refused"
	checkRefused(t, secret, []refusal{
		{"token", "tokens:\n  - {name: ci, scopes: [agent], token: " + secret + "}", "tokens[0].token" + refused},
		{"value", "tokens:\n  - {name: ci, scopes: [agent], value: " + secret + "}", "tokens[0].value" + refused},
		{"secret", "api_keys:\n  - {name: k, scopes: [agent], secret: " + secret + "}", "api_keys[0].secret" + refused},
		{"key", "api_keys:\n  - {name: k, scopes: [agent], env: K}\n  - {name: j, scopes: [agent], key: " + secret + "}", "api_keys[1].key" + refused},
		{"password", "tokens:\n  - {name: ci, scopes: [agent], password: " + secret + "}", "tokens[0].password" + refused},
		{"top-level token", "token: " + secret, "token" + refused},
		{"top-level api_key", "api_key: " + secret, "api_key" + refused},
	})
}

// refusal is a configuration ParseConfig refuses, with a part of the error it gives.
type refusal struct{ name, yaml, want string }

// checkRefused runs each case as a parallel subtest: ParseConfig must refuse it with an error
// that contains want and no secret (the test secrets, and secret unless it is "").
func checkRefused(t *testing.T, secret string, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := auth.ParseConfig([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			assertNoSecret(t, "error", err.Error(), secret)
		})
	}
}

// TestEmbeddedConfigIsStrict: the checks hold when Config is part of a larger file decoded by
// someone else, strict or not.
func TestEmbeddedConfigIsStrict(t *testing.T) {
	t.Parallel()
	var file struct {
		Listen string      `yaml:"listen"`
		Auth   auth.Config `yaml:"auth"`
	}
	err := yaml.Unmarshal([]byte("listen: 127.0.0.1:8080\nauth:\n  tokens:\n    - {name: a, scopes: [agent], token: "+agentToken+"}\n"), &file)
	if err == nil || !strings.Contains(err.Error(), "tokens[0].token") {
		t.Fatalf("err = %v, want the literal token refused", err)
	}
	assertNoSecret(t, "error", err.Error())
}

func TestConfigErrorsNeverQuoteValues(t *testing.T) {
	t.Parallel()
	const secret = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	checkRefused(t, secret, []refusal{
		{"unknown field", "tokens:\n  - {name: a, scopes: [agent], evn: " + secret + "}", "tokens[0].evn: unknown field"},
		{"secret in env", "tokens:\n  - {name: a, scopes: [agent], env: \"" + secret + "-x\"}", "env: not an environment variable name"},
		{"secret as name", "tokens:\n  - {name: \"" + secret + " x\", scopes: [agent], env: A}", "tokens[0].name: required"},
		{"secret as scope", "tokens:\n  - {name: a, scopes: [" + secret + "], env: A}", "scopes[0]: must be agent, watch, admin or approve"},
		{"secret as bool", "require: " + secret, "require: must be true or false"},
		{"secret as duration", "reload_interval: " + secret, "reload_interval: must be a duration"},
		{"tokens not a list", "tokens: " + secret, "tokens: must be a list"},
	})
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	checkRefused(t, "", []refusal{
		{"no source", "tokens:\n  - {name: a, scopes: [agent]}", "env or file is required"},
		{"both sources", "tokens:\n  - {name: a, scopes: [agent], env: A, file: /f}", "set env or file, not both"},
		{"no scopes", "tokens:\n  - {name: a, env: A}", "at least one of agent, watch, admin, approve"},
		{"duplicate name", "tokens:\n  - {name: a, scopes: [agent], env: A}\napi_keys:\n  - {name: a, scopes: [agent], env: B}", `api_keys[0] ("a"): name already used by tokens[0] ("a")`},
		{"require without credentials", "require: true", "require is true but no tokens"},
		{"require false with credentials", "require: false\ntokens:\n  - {name: a, scopes: [agent], env: A}", "require is false but credentials are configured"},
	})
	// A hand-built Config gets the same checks from New.
	_, err := auth.New(auth.Config{Tokens: []auth.CredentialConfig{{Name: "a", Scopes: []auth.Scope{"root"}, Env: "A"}}}, auth.Options{})
	if err == nil || errors.Is(err, auth.ErrInvalid) {
		t.Fatalf("New accepted an unknown scope: %v", err)
	}
}
