package auth_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/coder/websocket"
)

// echo reports who called and what of the credential reached it.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.PrincipalFrom(r.Context())
	w.Header().Set("X-Principal", p.Name)
	w.Header().Set("X-Saw", r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")+r.URL.Query().Get("token")+r.URL.Query().Get("api_key"))
	w.Header().Set("X-Query", r.URL.RawQuery)
})

func TestRequire(t *testing.T) {
	t.Parallel()
	var denials []auth.Denial
	a := newAuth(t, testConfig, auth.Options{OnDeny: func(d auth.Denial) { denials = append(denials, d) }})
	h := a.Require(auth.ScopeAgent, echo)
	for _, tc := range []struct {
		name      string
		header    http.Header
		target    string
		status    int
		challenge string
		principal string
	}{
		{"missing", nil, "/ahp", 401, `Bearer realm="ahp"`, ""},
		{"invalid", http.Header{"Authorization": {"Bearer " + wrongToken}}, "/ahp", 401, `Bearer realm="ahp", error="invalid_token"`, ""},
		{"malformed", http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}, "/ahp", 401, `Bearer realm="ahp", error="invalid_request"`, ""},
		{"query is not a credential over plain HTTP", nil, "/ahp?token=" + agentToken, 401, `Bearer realm="ahp"`, ""},
		{"wrong scope", http.Header{"Authorization": {"Bearer " + watchToken}}, "/ahp", 403, `Bearer realm="ahp", error="insufficient_scope", scope="agent"`, ""},
		{"valid bearer", http.Header{"Authorization": {"Bearer " + agentToken}}, "/ahp", 200, "", "agent-bearer"},
		{"valid api key", http.Header{"X-Api-Key": {agentKey}}, "/ahp", 200, "", "agent-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tc.target, strings.NewReader("{}"))
			for k, v := range tc.header {
				r.Header[k] = v
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			assertEqual(t, "status", w.Code, tc.status)
			assertEqual(t, "WWW-Authenticate", w.Header().Get("WWW-Authenticate"), tc.challenge)
			assertEqual(t, "principal", w.Header().Get("X-Principal"), tc.principal)
			assertEqual(t, "credential seen by the handler", w.Header().Get("X-Saw"), "")
			assertNoSecret(t, "response body", w.Body.String())
		})
	}
	assertEqual(t, "denials", len(denials), 5)
	last := denials[len(denials)-1]
	assertEqual(t, "scope denial reason", last.Reason, auth.ReasonScope)
	assertEqual(t, "scope denial principal", last.Principal, "watch-bearer")
	assertEqual(t, "scope denial path", last.Procedure, "/ahp")
}

func TestRequireWebSocketQuery(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SPACED": "token with space&symbols"}
	for k, v := range testEnv {
		env[k] = v
	}
	a := newAuth(t, "tokens:\n  - {name: spaced, scopes: [agent], env: SPACED}\n"+strings.TrimPrefix(testConfig, "\ntokens:\n"), auth.Options{LookupEnv: lookup(env)})
	h := a.RequireWebSocket(auth.ScopeAgent, echo)
	for _, tc := range []struct {
		name      string
		r         *http.Request
		status    int
		principal string
		query     string
	}{
		{"token", wsRequest("/ahp?existing=1&token=" + agentToken), 200, "agent-bearer", "existing=1"},
		{"api_key", wsRequest("/ahp?api_key=" + agentKey), 200, "agent-key", ""},
		{"Harness-encoded token", wsRequest("/ahp?token=token+with+space%26symbols"), 200, "spaced", ""},
		{"wrong scope", wsRequest("/ahp?api_key=" + watchKey), 403, "", ""},
		{"invalid", wsRequest("/ahp?token=" + wrongToken), 401, "", ""},
		{"query on a plain POST", httptest.NewRequest(http.MethodPost, "/ahp?token="+agentToken, nil), 401, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tc.r)
			assertEqual(t, "status", w.Code, tc.status)
			assertEqual(t, "principal", w.Header().Get("X-Principal"), tc.principal)
			assertEqual(t, "credential seen by the handler", w.Header().Get("X-Saw"), "")
			if tc.status == 200 {
				assertEqual(t, "query left for the handler", w.Header().Get("X-Query"), tc.query)
			}
		})
	}
}

// TestRequireWebSocketRealHandshake dials a real WebSocket with the credential in the query, the
// way a Harness client does.
func TestRequireWebSocketRealHandshake(t *testing.T) {
	t.Parallel()
	a := newAuth(t, testConfig, auth.Options{})
	srv := httptest.NewServer(a.RequireWebSocket(auth.ScopeAgent, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		p, _ := auth.PrincipalFrom(r.Context())
		_ = c.Write(r.Context(), websocket.MessageText, []byte(p.Name))
		_ = c.Close(websocket.StatusNormalClosure, "")
	})))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ahp"

	c, _, err := websocket.Dial(ctx, url+"?api_key="+agentKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "principal", string(msg), "agent-key")

	_, resp, err := websocket.Dial(ctx, url+"?token="+wrongToken, nil)
	if err == nil {
		t.Fatal("dial with an invalid token succeeded")
	}
	body, _ := io.ReadAll(resp.Body)
	assertEqual(t, "status", resp.StatusCode, http.StatusUnauthorized)
	assertNoSecret(t, "error", err.Error()+string(body))
}

func TestRequireDisabled(t *testing.T) {
	t.Parallel()
	a := newAuth(t, "", auth.Options{})
	w := httptest.NewRecorder()
	a.Require(auth.ScopeAdmin, echo).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/admin/reload", nil))
	assertEqual(t, "status", w.Code, http.StatusOK)
}

// TestDenialLogsNeverCarrySecrets logs every refusal the way a server would and searches the log
// for the secrets that were presented.
func TestDenialLogsNeverCarrySecrets(t *testing.T) {
	t.Parallel()
	logs := &testkit.LogBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	a := newAuth(t, testConfig, auth.Options{Logger: log, OnDeny: func(d auth.Denial) { log.Warn("refused", "denial", d) }})
	h := a.RequireWebSocket(auth.ScopeWatch, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.PrincipalFrom(r.Context())
		log.Info("admitted", "principal", p, "header", r.Header, "url", r.URL.String())
	}))
	for _, r := range []*http.Request{
		wsRequest("/watch?token=" + wrongToken),
		wsRequest("/watch?token=" + agentToken), // wrong scope
		wsRequest("/watch?token=" + watchToken + "&api_key=" + watchKey),
		wsRequest("/watch?api_key=" + watchKey), // admitted: the handler logs headers and URL
	} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	for _, hdr := range []string{"Bearer " + adminToken, "Basic " + agentKey} {
		r := httptest.NewRequest(http.MethodPost, "/watch", nil)
		r.Header.Set("Authorization", hdr)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	out := logs.String()
	if n := strings.Count(out, `"msg":"refused"`); n != 5 {
		t.Fatalf("%d refusals logged, want 5: %s", n, out)
	}
	if !strings.Contains(out, `"msg":"admitted"`) {
		t.Fatalf("no admission logged: %s", out)
	}
	assertNoSecret(t, "logs", out)
}

// A refused request is answered before its body arrives, and its HTTP/1 connection closed: a
// client trickling its body holds nothing.
func TestRequireRefusesWithoutWaitingForTheBody(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newAuth(t, testConfig, auth.Options{}).Require(auth.ScopeAgent, echo))
	t.Cleanup(srv.Close)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The guard only turns a hang into a failure.
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "POST /ahp HTTP/1.1\r\nHost: ahp\r\nContent-Length: 100000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the connection stayed open: %v (read %q)", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 401 ") {
		t.Fatalf("answer = %q, want 401", got)
	}
}
