package auth_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ahp-gateway/ahp/internal/auth"
)

func TestFromHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header http.Header
		want   auth.Credential
		err    error
	}{
		{"none", http.Header{}, auth.Credential{}, auth.ErrMissing},
		{"bearer", http.Header{"Authorization": {"Bearer " + agentToken}}, auth.Credential{Kind: auth.KindBearer, Secret: agentToken}, nil},
		{"bearer scheme is case-insensitive", http.Header{"Authorization": {"bEaReR  " + agentToken + " "}}, auth.Credential{Kind: auth.KindBearer, Secret: agentToken}, nil},
		{"api key", http.Header{"X-Api-Key": {agentKey}}, auth.Credential{Kind: auth.KindAPIKey, Secret: agentKey}, nil},
		{"basic is not accepted", http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}, auth.Credential{}, auth.ErrMalformed},
		{"bearer without token", http.Header{"Authorization": {"Bearer "}}, auth.Credential{}, auth.ErrMalformed},
		{"bearer glued to token", http.Header{"Authorization": {"Bearer" + agentToken}}, auth.Credential{}, auth.ErrMalformed},
		{"empty api key", http.Header{"X-Api-Key": {" "}}, auth.Credential{}, auth.ErrMalformed},
		{"two authorization headers", http.Header{"Authorization": {"Bearer " + agentToken, "Bearer " + watchToken}}, auth.Credential{}, auth.ErrMalformed},
		{"both forms", http.Header{"Authorization": {"Bearer " + agentToken}, "X-Api-Key": {agentKey}}, auth.Credential{}, auth.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := auth.FromHeader(tc.header)
			if !errors.Is(err, tc.err) {
				t.Errorf("FromHeader error = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("FromHeader = %v (%q), want %v (%q)", got, got.Secret, tc.want, tc.want.Secret)
			}
		})
	}
}

func wsRequest(target string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("Connection", "keep-alive, Upgrade")
	r.Header.Set("Upgrade", "websocket")
	return r
}

func TestFromRequestWebSocketQuery(t *testing.T) {
	t.Parallel()
	post := httptest.NewRequest(http.MethodPost, "/ahp?token="+agentToken, nil)
	for _, tc := range []struct {
		name      string
		r         *http.Request
		webSocket bool
		want      auth.Credential
		err       error
	}{
		{"token on an upgrade", wsRequest("/ahp?existing=1&token=" + agentToken), true, auth.Credential{Kind: auth.KindBearer, Secret: agentToken}, nil},
		{"api_key on an upgrade", wsRequest("/ahp?api_key=" + agentKey), true, auth.Credential{Kind: auth.KindAPIKey, Secret: agentKey}, nil},
		{"form-encoded token", wsRequest("/ahp?token=token+with+space%26symbols"), true, auth.Credential{Kind: auth.KindBearer, Secret: "token with space&symbols"}, nil},
		{"query ignored unless the caller serves WebSocket", wsRequest("/ahp?token=" + agentToken), false, auth.Credential{}, auth.ErrMissing},
		{"query ignored on a non-upgrade request", post, true, auth.Credential{}, auth.ErrMissing},
		{"token and api_key", wsRequest("/ahp?token=" + agentToken + "&api_key=" + agentKey), true, auth.Credential{}, auth.ErrMalformed},
		{"repeated token", wsRequest("/ahp?token=" + agentToken + "&token=" + watchToken), true, auth.Credential{}, auth.ErrMalformed},
		{"empty token", wsRequest("/ahp?token="), true, auth.Credential{}, auth.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := auth.FromRequest(tc.r, tc.webSocket)
			if !errors.Is(err, tc.err) {
				t.Errorf("FromRequest error = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("FromRequest = %v (%q), want %v (%q)", got, got.Secret, tc.want, tc.want.Secret)
			}
		})
	}
	// A header and a query credential together are ambiguous.
	r := wsRequest("/ahp?token=" + agentToken)
	r.Header.Set("X-API-Key", agentKey)
	if _, err := auth.FromRequest(r, true); !errors.Is(err, auth.ErrMalformed) {
		t.Errorf("header + query: %v, want ErrMalformed", err)
	}
}

// TestCredentialNeverPrintsSecret: no formatting path shows the secret.
func TestCredentialNeverPrintsSecret(t *testing.T) {
	t.Parallel()
	c := auth.Credential{Kind: auth.KindBearer, Secret: agentToken}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("presented", "credential", c)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("presented", "credential", c, "wrapped", struct{ C auth.Credential }{c})
	for _, text := range []string{
		fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s %q %x", c, c, c, c, c, c), fmt.Sprintf("%+v", []auth.Credential{c}),
		logs.String(),
	} {
		assertNoSecret(t, "formatted credential", text)
	}
	assertEqual(t, "String", fmt.Sprint(c), "bearer:[REDACTED]")
}
