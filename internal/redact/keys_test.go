package redact_test

import (
	"testing"

	"github.com/ahp-gateway/ahp/internal/redact"
)

// A key whose last part is "key" or "pat" names a secret (GITHUB_PAT, stripe_key, sendgridKey),
// unless it is a well-known name of a non-secret key (sort_key, publicKey).
func TestKeyWithASecretSuffixIsMasked(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, redact.Config{})
	secret := []string{"GITHUB_PAT", "AZURE-DEVOPS-PAT", "githubPat", "STRIPE_KEY", "sendgridKey", "deploy.key", "SENTRY_AUTH_TOKEN", "JWT_SECRET", "POSTGRES_PASSWORD"}
	plain := []string{"sort_key", "publicKey", "primary_key", "cache_key", "idempotency_key", "key", "pat", "monkey", "keyboard", "pattern"}
	input := map[string]any{}
	for _, k := range append(append([]string(nil), secret...), plain...) {
		input[k] = "value of " + k
	}
	ev := toolBefore()
	ev.Tool.Input = mustStruct(input)
	out, _ := r.Event(ev)
	got := out.GetTool().GetInput().AsMap()
	for _, k := range secret {
		if got[k] != redact.Placeholder(redact.KindSecretKey) {
			t.Errorf("%s = %v, want the placeholder", k, got[k])
		}
	}
	for _, k := range plain {
		if got[k] != "value of "+k {
			t.Errorf("%s = %v, want it kept", k, got[k])
		}
	}
}
