package console_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/console"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

const (
	watchSecret = "watch-secret-0123456789abcdef"
	agentSecret = "agent-secret-0123456789abcdef"
)

// newAuth returns an authenticator with a watch token and an agent token, read from files.
func newAuth(t *testing.T) *auth.Authenticator {
	t.Helper()
	dir := t.TempDir()
	for name, secret := range map[string]string{"watch": watchSecret, "agent": agentSecret} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := auth.ParseConfig([]byte("tokens:\n" +
		"  - {name: dashboard, scopes: [watch], file: " + filepath.Join(dir, "watch") + "}\n" +
		"  - {name: ci-agent, scopes: [agent], file: " + filepath.Join(dir, "agent") + "}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(cfg, auth.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// apiSentinel stands for the Connect API behind the console's guard.
var apiSentinel = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Reached", "api")
	w.WriteHeader(http.StatusOK)
})

func newConsole(t *testing.T, a *auth.Authenticator, opts console.Options) (http.Handler, *hub.Hub) {
	h, hb, _ := newConsoleWithTracker(t, a, opts)
	return h, hb
}

func newConsoleWithTracker(t *testing.T, a *auth.Authenticator, opts console.Options) (http.Handler, *hub.Hub, *console.Tracker) {
	t.Helper()
	h := hub.New(64)
	t.Cleanup(h.Close)
	p := policy.Default()
	m := metrics.New(metrics.Options{NoRuntimeMetrics: true})
	ids := []string{}
	for _, r := range p.Rules() {
		ids = append(ids, r.ID)
	}
	m.SetPolicy(p.Name(), p.Digest(), ids) // as the server does
	opts.Enabled = true
	c := console.New(opts, console.Deps{
		Auth: a, Hub: h, Policy: func() *policy.Policy { return p }, Metrics: m, Version: "test", Logger: testkit.Discard(),
	})
	return c.Wrap(apiSentinel), h, c.Tracker()
}

// request builds a request as it reaches the handler from a client at remote on a listener at local.
func request(method, target, local, remote string, header map[string]string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = remote
	addr, _ := net.ResolveTCPAddr("tcp", local)
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	for k, v := range header {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const loop = "127.0.0.1:8080"

func TestConsolePageCarriesSecurityHeaders(t *testing.T) {
	t.Parallel()
	h, _ := newConsole(t, nil, console.Options{})
	for _, path := range []string{"/ui/", "/ui/assets/app.js", "/ui/api/info"} {
		w := serve(h, request("GET", "http://127.0.0.1:8080"+path, loop, "127.0.0.1:5000", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", path, w.Code, w.Body)
		}
		hd := w.Header()
		csp := hd.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("GET %s: CSP %q allows inline code", path, csp)
		}
		if hd.Get("X-Frame-Options") != "DENY" || hd.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: frame/nosniff headers %v", path, hd)
		}
		wantCache := "no-cache"
		if strings.HasPrefix(path, "/ui/api/") {
			wantCache = "no-store"
		}
		if got := hd.Get("Cache-Control"); got != wantCache {
			t.Errorf("GET %s: Cache-Control %q, want %q", path, got, wantCache)
		}
	}
}

func TestIndexHasNoInlineScriptOrStyle(t *testing.T) {
	t.Parallel()
	h, _ := newConsole(t, nil, console.Options{})
	body := serve(h, request("GET", "http://127.0.0.1:8080/ui/", loop, "127.0.0.1:5000", nil)).Body.String()
	for _, bad := range []string{"<script>", "<style", "style=", "onclick", "onload", "http://", "https://"} {
		if strings.Contains(body, bad) {
			t.Errorf("index.html contains %q: inline code or a remote resource", bad)
		}
	}
}

func TestGuardRefusesForeignOriginsAndHosts(t *testing.T) {
	t.Parallel()
	h, _ := newConsole(t, nil, console.Options{AllowedHosts: []string{"ahp.example.com", ".corp.example"}})
	cases := []struct {
		name, method, target string
		header               map[string]string
		want                 int
	}{
		{"console, own origin", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Sec-Fetch-Site": "same-origin"}, 200},
		{"console, foreign Origin", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Origin": "http://evil.example"}, 403},
		{"console, cross-site fetch", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"console, rebinding host", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Host": "evil.example:8080"}, 403},
		{"console, rebinding host without port", "GET", "http://127.0.0.1:8080/ui/", map[string]string{"Host": "attacker.test"}, 403},
		{"console, configured host", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Host": "ahp.example.com:8080"}, 200},
		{"console, configured subdomain", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Host": "a.corp.example"}, 200},
		{"console, localhost", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Host": "localhost:8080"}, 200},
		{"console, cross-site link to the page", "GET", "http://127.0.0.1:8080/ui/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 200},
		{"console, cross-site navigation to data", "GET", "http://127.0.0.1:8080/ui/api/info", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 403},
		{"API, non-browser client", "POST", "http://127.0.0.1:8080/ahp.v1.InterceptService/Intercept", map[string]string{"Host": "anything.example"}, 200},
		{"API, browser from the console", "POST", "http://127.0.0.1:8080/ahp.v1.ObservationService/Watch", map[string]string{"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-origin"}, 200},
		{"API, browser from a foreign origin", "POST", "http://127.0.0.1:8080/ahp.v1.ObservationService/Watch", map[string]string{"Origin": "http://evil.example"}, 403},
		{"API, browser with a null origin", "POST", "http://127.0.0.1:8080/ahp.v1.InterceptService/Intercept", map[string]string{"Origin": "null"}, 403},
		{"API, browser to a rebinding host", "POST", "http://127.0.0.1:8080/ahp.v1.ObservationService/Watch", map[string]string{"Host": "evil.example:8080", "Origin": "http://evil.example:8080"}, 403},
		{"API, same-site but other origin", "POST", "http://127.0.0.1:8080/ahp.v1.InterceptService/Intercept", map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
	}
	for _, c := range cases {
		w := serve(h, request(c.method, c.target, loop, "127.0.0.1:5000", c.header))
		if w.Code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, w.Code, c.want, strings.TrimSpace(w.Body.String()))
		}
		reached := w.Header().Get("X-Reached") == "api"
		if api := strings.Contains(c.target, "/ahp.v1."); reached != (api && c.want == 200) {
			t.Errorf("%s: reached the API: %v", c.name, reached)
		}
	}
}

func TestWithoutCredentialsOnlyLoopbackIsServed(t *testing.T) {
	t.Parallel()
	h, _ := newConsole(t, nil, console.Options{})
	cases := []struct {
		local, remote string
		want          int
	}{
		{"127.0.0.1:8080", "127.0.0.1:4000", 200},
		{"[::1]:8080", "[::1]:4000", 200},
		{"0.0.0.0:8080", "127.0.0.1:4000", 403}, // a wildcard listener: others could reach it too
		{"10.1.2.3:8080", "10.1.2.4:4000", 403},
		{"127.0.0.1:8080", "10.1.2.4:4000", 403},
	}
	for _, c := range cases {
		w := serve(h, request("GET", "http://127.0.0.1:8080/ui/", c.local, c.remote, nil))
		if w.Code != c.want {
			t.Errorf("listener %s, client %s: status %d, want %d", c.local, c.remote, w.Code, c.want)
		}
	}
}

func TestDataNeedsTheWatchScope(t *testing.T) {
	t.Parallel()
	h, hb := newConsole(t, newAuth(t), console.Options{})
	cases := []struct {
		name, secret string
		want         int
	}{
		{"no token", "", 401},
		{"wrong token", "not-a-configured-secret-at-all", 401},
		{"agent token", agentSecret, 403},
		{"watch token", watchSecret, 200},
	}
	subscribed := false
	for _, path := range []string{"/ui/api/info", "/ui/api/policy", "/ui/api/sessions", "/ui/api/recent", "/ui/api/decisions/x"} {
		for _, c := range cases {
			hd := map[string]string{}
			if c.secret != "" {
				hd["Authorization"] = "Bearer " + c.secret
			}
			// A server with credentials serves the console on any listener.
			w := serve(h, request("GET", "http://10.0.0.1:8080"+path, "10.0.0.1:8080", "10.0.0.2:4000", hd))
			want := c.want
			if want == 200 && path == "/ui/api/decisions/x" {
				want = 404
			}
			if w.Code != want {
				t.Errorf("%s %s: status %d, want %d", path, c.name, w.Code, want)
			}
			// Only an authorised request starts the console's subscription.
			if c.want != 200 && !subscribed && hb.Stats().Subscribers > 0 {
				t.Errorf("%s %s: the tracker subscribed", path, c.name)
			}
			subscribed = subscribed || c.want == 200
			if strings.Contains(w.Body.String(), watchSecret) || strings.Contains(w.Body.String(), agentSecret) {
				t.Errorf("%s %s: the answer contains a secret", path, c.name)
			}
		}
	}
	// The page itself is code, not data: it loads without a token and then asks for one.
	if w := serve(h, request("GET", "http://10.0.0.1:8080/ui/", "10.0.0.1:8080", "10.0.0.2:4000", nil)); w.Code != 200 {
		t.Errorf("GET /ui/ without a token: status %d, want the page", w.Code)
	}
	w := serve(h, request("GET", "http://10.0.0.1:8080/ui/api/info", "10.0.0.1:8080", "10.0.0.2:4000", map[string]string{"Authorization": "Bearer " + watchSecret}))
	var info struct {
		Auth      bool     `json:"auth"`
		Principal string   `json:"principal"`
		Scopes    []string `json:"scopes"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &info); err != nil {
		t.Fatal(err)
	}
	if !info.Auth || info.Principal != "dashboard" || strings.Join(info.Scopes, ",") != "watch" {
		t.Errorf("info %+v, want auth on, principal dashboard with the watch scope", info)
	}
}

func TestRecentDecisionsAndSessionsAreServed(t *testing.T) {
	t.Parallel()
	h, hb, tr := newConsoleWithTracker(t, nil, console.Options{})
	get := func(path string, v any) int {
		w := serve(h, request("GET", "http://127.0.0.1:8080"+path, loop, "127.0.0.1:5000", nil))
		if v != nil && w.Code == 200 {
			if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		return w.Code
	}
	// A console request subscribes the tracker; until then the hub drops items (nobody watches).
	if code := get("/ui/api/info", nil); code != 200 || hb.Stats().Subscribers != 1 {
		t.Fatalf("info: status %d, %d subscribers", code, hb.Stats().Subscribers)
	}
	publishDecision(hb, "e1", "s1", "d-1")
	var recent struct {
		Items []struct {
			Item struct {
				Decision struct {
					DecisionID string `json:"decisionId"`
				} `json:"decision"`
			} `json:"item"`
			Policy console.PolicyRevision `json:"policy"`
		} `json:"items"`
	}
	waitRecorded(t, tr, func() bool { return tr.Stats().Seen == 1 })
	get("/ui/api/recent", &recent)
	if len(recent.Items) != 1 {
		t.Fatalf("%d recent items, want 1", len(recent.Items))
	}
	if got := recent.Items[0].Item.Decision.DecisionID; got != "d-1" {
		t.Fatalf("recent decision id %q", got)
	}
	if p := recent.Items[0].Policy; p.Revision != 1 || p.Digest != policy.Default().Digest() {
		t.Errorf("policy of the item %+v, want revision 1 of the default policy", p)
	}
	if code := get("/ui/api/decisions/d-1", nil); code != 200 {
		t.Errorf("decision d-1: status %d", code)
	}
	if code := get("/ui/api/decisions/d-2", nil); code != 404 {
		t.Errorf("unknown decision: status %d, want 404", code)
	}
	if code := get("/ui/api/recent?limit=0", nil); code != 400 {
		t.Errorf("limit=0: status %d, want 400", code)
	}
	var sessions struct {
		Sessions []console.SessionSummary `json:"sessions"`
	}
	get("/ui/api/sessions", &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != "s1" || sessions.Sessions[0].Decisions != 1 || sessions.Sessions[0].Denies != 1 {
		t.Errorf("sessions %+v, want s1 with one denied decision", sessions.Sessions)
	}
	var pol struct {
		Digest string `json:"digest"`
		Text   string `json:"text"`
		Rules  []struct {
			ID   string  `json:"id"`
			Hits *uint64 `json:"hits"`
		} `json:"rules"`
	}
	get("/ui/api/policy", &pol)
	if pol.Digest != policy.Default().Digest() || !strings.Contains(pol.Text, "deny-rm-rf-root") || len(pol.Rules) == 0 || pol.Rules[0].Hits == nil {
		t.Errorf("policy page data: digest %q, %d rules, text %d bytes", pol.Digest, len(pol.Rules), len(pol.Text))
	}
}

func TestUnknownConsoleEndpointIsNotFound(t *testing.T) {
	t.Parallel()
	h, _ := newConsole(t, nil, console.Options{})
	if w := serve(h, request("GET", "http://127.0.0.1:8080/ui/api/nope", loop, "127.0.0.1:5000", nil)); w.Code != 404 {
		t.Errorf("status %d, want 404", w.Code)
	}
	if w := serve(h, request("POST", "http://127.0.0.1:8080/ui/", loop, "127.0.0.1:5000", nil)); w.Code != 405 {
		t.Errorf("POST /ui/: status %d, want 405", w.Code)
	}
	w := serve(h, request("GET", "http://127.0.0.1:8080/ui", loop, "127.0.0.1:5000", nil))
	if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/ui/" {
		t.Errorf("GET /ui: status %d, Location %q", w.Code, w.Header().Get("Location"))
	}
}

// The approvals view is mounted under /ui/api/approvals/ behind the watch scope and the guard,
// with the prefix stripped, and turns the Approvals feature on; without it the feature is off and
// the path is an unknown endpoint.
func TestApprovalsViewIsMountedBehindTheWatchScope(t *testing.T) {
	t.Parallel()
	a := newAuth(t)
	h := hub.New(8)
	t.Cleanup(h.Close)
	var gotPath string
	view := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		w.WriteHeader(http.StatusOK)
	})
	p := policy.Default()
	newC := func(v http.Handler) http.Handler {
		return console.New(console.Options{Enabled: true}, console.Deps{
			Auth: a, Hub: h, Policy: func() *policy.Policy { return p }, Approvals: v, Logger: testkit.Discard(),
		}).Wrap(apiSentinel)
	}
	const target = "http://10.0.0.1:8080/ui/api/approvals/ahp.v1.ApprovalService/List"
	post := func(h http.Handler, secret string, extra map[string]string) int {
		hd := map[string]string{"Authorization": "Bearer " + secret}
		for k, v := range extra {
			hd[k] = v
		}
		return serve(h, request("POST", target, "10.0.0.1:8080", "10.0.0.2:4000", hd)).Code
	}
	withView := newC(view)
	if code := post(withView, agentSecret, nil); code != http.StatusForbidden || gotPath != "" {
		t.Errorf("agent token: status %d (view reached at %q), want 403", code, gotPath)
	}
	if code := post(withView, watchSecret, map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden || gotPath != "" {
		t.Errorf("foreign Origin: status %d (view reached at %q), want 403", code, gotPath)
	}
	if code := post(withView, watchSecret, nil); code != http.StatusOK || gotPath != "/ahp.v1.ApprovalService/List" {
		t.Errorf("watch token: status %d, view reached at %q; want 200 at /ahp.v1.ApprovalService/List", code, gotPath)
	}
	features := func(h http.Handler) bool {
		w := serve(h, request("GET", "http://10.0.0.1:8080/ui/api/info", "10.0.0.1:8080", "10.0.0.2:4000", map[string]string{"Authorization": "Bearer " + watchSecret}))
		var info struct {
			Features struct {
				Approvals bool `json:"approvals"`
			} `json:"features"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &info); err != nil {
			t.Fatal(err)
		}
		return info.Features.Approvals
	}
	without := newC(nil)
	if !features(withView) || features(without) {
		t.Errorf("features.approvals: %v with the view, %v without; want true, false", features(withView), features(without))
	}
	if code := post(without, watchSecret, nil); code != http.StatusNotFound {
		t.Errorf("no view: status %d, want 404", code)
	}
}
