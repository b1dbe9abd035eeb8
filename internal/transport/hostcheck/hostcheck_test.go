package hostcheck_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/hostcheck"
)

var (
	loopback4 = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	anyAddr   = &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
)

func serve(t *testing.T, addr net.Addr, cfg hostcheck.Config, host string, header map[string]string, method string) (int, http.Header, string) {
	t.Helper()
	cfg.Logger = testkit.Discard()
	h := hostcheck.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }), addr, cfg)
	r := httptest.NewRequest(method, "http://x/ahp.v1.InterceptService/Intercept", strings.NewReader("{}"))
	r.Host = host
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header(), w.Body.String()
}

func TestHost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		addr  net.Addr
		hosts []string
		host  string
		want  int
	}{
		{"loopback: localhost with the port", loopback4, nil, "localhost:8080", 200},
		{"loopback: 127.0.0.1 with the port", loopback4, nil, "127.0.0.1:8080", 200},
		{"loopback: [::1] with the port", loopback4, nil, "[::1]:8080", 200},
		{"loopback: a .localhost name", loopback4, nil, "app.localhost:8080", 200},
		{"loopback: another loopback IP", loopback4, nil, "127.0.0.2:8080", 200},
		{"loopback: a rebinding attacker's name", loopback4, nil, "rebind.attacker.example:8080", 403},
		{"loopback: no Host", loopback4, nil, "", 403},
		{"all interfaces: any name", anyAddr, nil, "ahp.internal:8080", 200},
		{"allow-list: listed", anyAddr, []string{"ahp.internal", "localhost"}, "AHP.internal:9000", 200},
		{"allow-list: listed with a port", anyAddr, []string{"ahp.internal:8080"}, "ahp.internal:8080", 200},
		{"allow-list: not listed", loopback4, []string{"ahp.internal"}, "localhost:8080", 403},
		{"allow-list: *", loopback4, []string{"*"}, "rebind.attacker.example", 200},
		{"not TCP: any", nil, nil, "whatever", 200},
	} {
		code, _, body := serve(t, c.addr, hostcheck.Config{AllowedHosts: c.hosts}, c.host, nil, http.MethodPost)
		if code != c.want {
			t.Errorf("%s: status %d, want %d", c.name, code, c.want)
		}
		if code == 403 && c.host != "" && strings.Contains(body, c.host) {
			t.Errorf("%s: the refusal echoes the Host", c.name)
		}
	}
}

// A refusal is a Connect error that any JSON client (the console's page among them) can parse.
func TestRefusalIsAConnectError(t *testing.T) {
	t.Parallel()
	code, h, body := serve(t, loopback4, hostcheck.Config{}, "rebind.attacker.example:8080", nil, http.MethodPost)
	if code != http.StatusForbidden || h.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q; want 403 and application/json", code, h.Get("Content-Type"))
	}
	var e struct{ Code, Message string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != "permission_denied" || e.Message == "" {
		t.Errorf("body %q is not a Connect permission_denied error (%v)", body, err)
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	allowed := []string{"https://console.example.com"}
	for _, c := range []struct {
		name   string
		header map[string]string
		method string
		want   int
		cors   bool
	}{
		{"no Origin: a non-browser client", nil, http.MethodPost, 200, false},
		{"same origin", map[string]string{"Origin": "http://localhost:8080"}, http.MethodPost, 200, false},
		{"cross-site page", map[string]string{"Origin": "https://evil.example"}, http.MethodPost, 403, false},
		{"null origin", map[string]string{"Origin": "null"}, http.MethodPost, 403, false},
		{"same host, other port", map[string]string{"Origin": "http://localhost:3000"}, http.MethodPost, 403, false},
		{"cross-site without Origin", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.MethodPost, 403, false},
		{"allowed origin", map[string]string{"Origin": "https://console.example.com"}, http.MethodPost, 200, true},
		{"allowed origin, preflight", map[string]string{"Origin": "https://console.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-grpc-web,x-user-agent"}, http.MethodOptions, 204, true},
	} {
		code, h, body := serve(t, loopback4, hostcheck.Config{AllowedOrigins: allowed}, "localhost:8080", c.header, c.method)
		if code != c.want {
			t.Errorf("%s: status %d, want %d", c.name, code, c.want)
		}
		if got := h.Get("Access-Control-Allow-Origin") != ""; got != c.cors {
			t.Errorf("%s: CORS answer %v, want %v", c.name, got, c.cors)
		}
		if code == 403 && strings.Contains(body, "evil") {
			t.Errorf("%s: the refusal echoes the Origin", c.name)
		}
		if c.method == http.MethodOptions && !strings.Contains(h.Get("Access-Control-Allow-Headers"), "x-grpc-web") {
			t.Errorf("%s: preflight allows headers %q", c.name, h.Get("Access-Control-Allow-Headers"))
		}
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	if got := hostcheck.Split(" a.example, ,b.example ,"); len(got) != 2 || got[0] != "a.example" || got[1] != "b.example" {
		t.Fatalf("Split = %q", got)
	}
}
