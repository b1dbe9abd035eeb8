package auth

import (
	"errors"
	"net/http"
	"time"
)

// Require returns net/http middleware for the bridge's HTTP transport and for admin endpoints: a
// request needs a credential (Authorization: Bearer or X-API-Key) holding scope. Missing or invalid
// credentials get 401 with a WWW-Authenticate: Bearer challenge, a missing scope gets 403. On
// success the principal is in the request context and the credential headers are removed. In
// Disabled mode every request passes.
func (a *Authenticator) Require(scope Scope, next http.Handler) http.Handler {
	return a.middleware(scope, false, next)
}

// RequireWebSocket is Require for a WebSocket endpoint: on a WebSocket upgrade request it also
// accepts the "token" and "api_key" query parameters (how Harness clients authenticate) and removes
// them from the URL. Other requests to the same handler are treated exactly as by Require.
func (a *Authenticator) RequireWebSocket(scope Scope, next http.Handler) http.Handler {
	return a.middleware(scope, true, next)
}

func (a *Authenticator) middleware(scope Scope, webSocket bool, next http.Handler) http.Handler {
	if a.mode == Disabled {
		return next
	}
	rule := Rule{Scope: scope}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, credErr := FromRequest(r, webSocket)
		p, err := a.decide(r.URL.Path, rule, c, credErr)
		if err != nil {
			a.report(r.URL.Path, r.RemoteAddr, p, err)
			DropBody(w, r)
			writeHTTPError(w, err, scope)
			return
		}
		r = r.Clone(ContextWithPrincipal(r.Context(), *p))
		stripCredentials(r.Header, r.URL)
		next.ServeHTTP(w, r)
	})
}

func writeHTTPError(w http.ResponseWriter, err error, scope Scope) {
	if Unauthenticated(err) {
		w.Header().Set("WWW-Authenticate", challenge(err))
		http.Error(w, "unauthenticated: "+err.Error(), http.StatusUnauthorized)
		return
	}
	if errors.Is(err, ErrForbidden) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ahp", error="insufficient_scope", scope="`+string(scope)+`"`)
	}
	http.Error(w, err.Error(), http.StatusForbidden)
}

// DropBody prepares w to answer r without reading r's body, for a refusal: over HTTP/1 the
// connection closes after the answer and every read of the body, net/http's own drain included,
// fails at once, so that the answer goes out before the body and a client sending its body slowly
// holds nothing. Over HTTP/2 an unread body costs nothing (the stream is reset).
func DropBody(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 || r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}
