package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// Kind is how a secret is presented: as a bearer token or as an API key. A configured token is
// accepted only where bearer tokens are presented and an API key only where API keys are, which is
// how Harness clients are configured (AuthMethod::Bearer or AuthMethod::ApiKey).
type Kind uint8

const (
	// KindBearer is presented as "Authorization: Bearer <token>" or, on a WebSocket upgrade, as
	// the "token" query parameter.
	KindBearer Kind = iota + 1
	// KindAPIKey is presented as "X-API-Key: <key>" or, on a WebSocket upgrade, as the "api_key"
	// query parameter.
	KindAPIKey
)

// String returns "bearer" or "api_key".
func (k Kind) String() string {
	switch k {
	case KindBearer:
		return "bearer"
	case KindAPIKey:
		return "api_key"
	}
	return "unknown"
}

// Header and query parameter names; canonical header forms so lookups need no canonicalisation.
const (
	headerAuthorization = "Authorization"
	headerAPIKey        = "X-Api-Key"
	queryToken          = "token"
	queryAPIKey         = "api_key"
)

// Credential is a secret as a client presents it. Formatting it with fmt or slog never shows the
// secret; only code that reads Secret explicitly can.
type Credential struct {
	// Kind is how the secret is presented.
	Kind Kind
	// Secret is the token or key.
	Secret string
}

// Format prints the kind and a redaction marker for every verb, so %v, %+v, %#v and %s are safe.
func (c Credential) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "%s:[REDACTED]", c.Kind)
}

// LogValue keeps the secret out of structured logs.
func (c Credential) LogValue() slog.Value {
	return slog.StringValue(c.Kind.String() + ":[REDACTED]")
}

// SetHeader puts the credential on an outgoing request's headers, the way FromHeader reads it.
func (c Credential) SetHeader(h http.Header) {
	switch c.Kind {
	case KindBearer:
		h.Set(headerAuthorization, "Bearer "+c.Secret)
	case KindAPIKey:
		h.Set(headerAPIKey, c.Secret)
	}
}

// FromHeader extracts the credential from request headers. It returns ErrMissing when there is
// none and ErrMalformed when the Authorization header has another scheme, a value is empty, a
// header is repeated, or both forms are present: an ambiguous request is refused rather than
// guessed at.
func FromHeader(h http.Header) (Credential, error) {
	var found []Credential
	if vs := h[headerAuthorization]; len(vs) > 0 {
		if len(vs) > 1 {
			return Credential{}, ErrMalformed
		}
		token, ok := bearerToken(vs[0])
		if !ok {
			return Credential{}, ErrMalformed
		}
		found = append(found, Credential{Kind: KindBearer, Secret: token})
	}
	if vs := h[headerAPIKey]; len(vs) > 0 {
		if len(vs) > 1 {
			return Credential{}, ErrMalformed
		}
		key := strings.TrimSpace(vs[0])
		if key == "" {
			return Credential{}, ErrMalformed
		}
		found = append(found, Credential{Kind: KindAPIKey, Secret: key})
	}
	return one(found)
}

// FromRequest extracts the credential of r from its headers. When webSocket is true — the caller
// serves a WebSocket endpoint — and r is in fact a WebSocket upgrade, the "token" and "api_key"
// query parameters are accepted too, because WebSocket clients (browsers, Harness clients) cannot
// always set headers. Query credentials on any other request are ignored: URLs end up in access
// logs, so they are tolerated only where there is no alternative.
func FromRequest(r *http.Request, webSocket bool) (Credential, error) {
	c, err := FromHeader(r.Header)
	if !webSocket || !IsWebSocketUpgrade(r) {
		return c, err
	}
	if err != nil && !errors.Is(err, ErrMissing) {
		return Credential{}, err
	}
	var found []Credential
	if err == nil {
		found = append(found, c)
	}
	q := r.URL.Query()
	for _, p := range []struct {
		name string
		kind Kind
	}{{queryToken, KindBearer}, {queryAPIKey, KindAPIKey}} {
		vs, ok := q[p.name]
		if !ok {
			continue
		}
		if len(vs) != 1 || strings.TrimSpace(vs[0]) == "" {
			return Credential{}, ErrMalformed
		}
		found = append(found, Credential{Kind: p.kind, Secret: strings.TrimSpace(vs[0])})
	}
	return one(found)
}

func one(found []Credential) (Credential, error) {
	switch len(found) {
	case 0:
		return Credential{}, ErrMissing
	case 1:
		return found[0], nil
	}
	return Credential{}, ErrMalformed
}

// bearerToken parses an Authorization value of the Bearer scheme (RFC 6750; the scheme name is
// case-insensitive).
func bearerToken(v string) (string, bool) {
	const scheme = "bearer"
	v = strings.TrimSpace(v)
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) || (v[len(scheme)] != ' ' && v[len(scheme)] != '\t') {
		return "", false
	}
	token := strings.TrimSpace(v[len(scheme):])
	return token, token != ""
}

// IsWebSocketUpgrade reports whether r asks to upgrade to the WebSocket protocol (RFC 6455: a GET
// with "Connection: upgrade" and "Upgrade: websocket").
func IsWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// stripCredentials removes every credential form from headers (and, for a URL, the query), so
// handlers behind authentication never see — or forward, or log — the caller's secret.
func stripCredentials(h http.Header, u *url.URL) {
	h.Del(headerAuthorization)
	h.Del(headerAPIKey)
	if u == nil || u.RawQuery == "" {
		return
	}
	q := u.Query()
	if q.Has(queryToken) || q.Has(queryAPIKey) {
		q.Del(queryToken)
		q.Del(queryAPIKey)
		u.RawQuery = q.Encode()
	}
}
