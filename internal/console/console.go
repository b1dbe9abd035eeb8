// Package console is ahp-server's web console: a live view of decisions and observations, a
// decision's detail, the approvals waiting for a person, the policy in force with its rule
// counts, and recent sessions, served at /ui/ from assets embedded in the binary (nothing is
// fetched from the network at run time).
//
// The page is plain JavaScript modules and CSS (web/), with no build step. It reads the live tail
// from the existing ObservationService.Watch over the Connect protocol (JSON, enveloped server
// stream over fetch) and the rest from small read-only JSON endpoints under /ui/api/, which need
// the same credential with the watch scope as Watch itself. Those endpoints read what the server
// already keeps — the policy, its metrics, its reload results — and what a Tracker, one more Watch
// subscriber inside the server while consoles are in use, remembers of recent items and sessions.
// Approvals it reads through a read-only ApprovalService (Deps.Approvals) mounted under
// /ui/api/approvals/ for the same watch scope; deciding goes to the API's ApprovalService.Decide,
// which needs the approve scope and takes the decider from authentication.
//
// Security: every console request, and every API request a browser makes (one that carries
// Origin or Sec-Fetch-Site), must name an allowed Host and come from the console's own origin,
// which defeats DNS rebinding and cross-site requests; console responses carry a strict
// Content-Security-Policy (no inline script or style), frame denial and nosniff, and data
// responses are never cached. With authentication disabled the console is served only to
// loopback clients on a loopback listener. The page keeps its token in sessionStorage.
package console

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
)

// Prefix is the path the console is served under.
const Prefix = "/ui/"

// approvalsPrefix is where the read-only ApprovalService is mounted: the page calls
// /ui/api/approvals/ahp.v1.ApprovalService/Watch and friends there.
const approvalsPrefix = "/ui/api/approvals/"

//go:embed web
var webFiles embed.FS

// Options are the console's settings, as a server configuration holds them.
type Options struct {
	// Enabled serves the console (ahp-server's -ui, on by default there; off in a zero Config).
	Enabled bool
	// AllowedHosts are host names (without port) the console and browser API requests may be
	// addressed to, besides IP literals and localhost, which are always allowed: the names the
	// server is reached by behind a proxy or DNS (ahp.example.com). A leading "." allows every
	// subdomain (".example.com").
	AllowedHosts []string
}

// ReloadResult is the outcome of one policy reload attempt.
type ReloadResult struct {
	// Time is when the reload was tried.
	Time time.Time `json:"time"`
	// OK is true when the reload left a valid policy in force (replaced, or restored).
	OK bool `json:"ok"`
	// Error is why it failed (empty when OK).
	Error string `json:"error,omitempty"`
	// Digest is the digest of the policy in force after the attempt.
	Digest string `json:"digest"`
}

// ReloadStatus sums up policy reloads since the server started.
type ReloadStatus struct {
	// FromFile is true when the policy comes from a file that is reloaded when it changes.
	FromFile bool
	// Reloads and Failures count reloads that replaced the policy and that failed.
	Reloads, Failures uint64
	// Last is the last attempt's result (nil before the first).
	Last *ReloadResult
}

// Deps are what the console reads from the server it runs in.
type Deps struct {
	// Auth checks credentials (nil or disabled: no authentication, loopback only).
	Auth *auth.Authenticator
	// Hub is the Watch fan-out the Tracker subscribes to.
	Hub *hub.Hub
	// Policy returns the policy in force.
	Policy func() *policy.Policy
	// Reloads reports policy reload results (nil: no reloads, the policy is fixed).
	Reloads func() ReloadStatus
	// Metrics supplies rule match counts (nil: none are shown).
	Metrics *metrics.Metrics
	// Redactor masks secrets in the policy text shown (the hub redacts items already).
	Redactor *redact.Redactor
	// Version is the server's version.
	Version string
	// Approvals serves ahp.v1.ApprovalService's List, Get and Watch, read-only (Decide refused),
	// at its usual paths; the console mounts it under /ui/api/approvals/ for credentials with the
	// watch scope, so that a viewer sees approvals without being able to decide them. Deciding
	// goes to the API's own ApprovalService/Decide, which needs the approve scope. Nil: the server
	// holds no approvals and the Approvals page says so.
	Approvals http.Handler
	// Logger receives the console's logs (default slog.Default()).
	Logger *slog.Logger
}

// Console serves the console and guards browser requests to the API.
type Console struct {
	opts    Options
	deps    Deps
	authOn  bool
	tracker *Tracker
	hosts   hostRules
	assets  http.Handler
	api     http.Handler
}

// New builds the console. Its Tracker subscribes to the hub while consoles are in use.
func New(opts Options, deps Deps) *Console {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	c := &Console{
		opts:   opts,
		deps:   deps,
		authOn: deps.Auth != nil && deps.Auth.Enabled(),
		hosts:  newHostRules(opts.AllowedHosts),
	}
	c.tracker = NewTracker(TrackerOptions{Policy: deps.Policy, Hub: deps.Hub})
	if deps.Policy != nil {
		c.tracker.PolicyRevision(deps.Policy()) // the policy in force at start is revision 1
	}
	sub, _ := fs.Sub(webFiles, "web")
	c.assets = http.StripPrefix("/ui", http.FileServerFS(sub))
	api := http.NewServeMux()
	api.HandleFunc("GET /ui/api/info", c.info)
	api.HandleFunc("GET /ui/api/policy", c.policy)
	api.HandleFunc("GET /ui/api/sessions", c.sessions)
	api.HandleFunc("GET /ui/api/recent", c.recent)
	api.HandleFunc("GET /ui/api/decisions/{id}", c.decision)
	if deps.Approvals != nil {
		api.Handle(approvalsPrefix, http.StripPrefix(strings.TrimSuffix(approvalsPrefix, "/"), deps.Approvals))
	}
	api.HandleFunc("/ui/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such console endpoint")
	})
	// Every authenticated console request keeps the tracker watching.
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.tracker.Touch()
		api.ServeHTTP(w, r)
	})
	if c.authOn {
		h = deps.Auth.Require(auth.ScopeWatch, h)
	}
	c.api = h
	return c
}

// Tracker is the console's memory of recent items and sessions.
func (c *Console) Tracker() *Tracker { return c.tracker }

// Wrap returns a handler that serves the console under /ui/ and passes every other request to
// next, refusing those a browser makes from a foreign origin or to a host that is not allowed.
func (c *Console) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, Prefix) {
			c.serveConsole(w, r)
			return
		}
		if fromBrowser(r) {
			if msg := c.checkBrowserAPI(r); msg != "" {
				c.refuse(w, r, http.StatusForbidden, msg)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// serveConsole serves the page, its assets and its data endpoints.
func (c *Console) serveConsole(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if msg := c.checkConsole(r); msg != "" {
		c.refuse(w, r, http.StatusForbidden, msg)
		return
	}
	switch {
	case r.URL.Path == "/ui":
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
	case strings.HasPrefix(r.URL.Path, "/ui/api/"):
		w.Header().Set("Cache-Control", "no-store")
		c.api.ServeHTTP(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		// The assets are code, not data: revalidated on every load, never stored stale.
		w.Header().Set("Cache-Control", "no-cache")
		c.assets.ServeHTTP(w, r)
	}
}

// refuse answers a request the guard refused, and logs it (without the request's headers).
func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.deps.Logger.Info("console refused a request", "path", r.URL.Path, "reason", msg, "peer", r.RemoteAddr)
	w.Header().Set("Cache-Control", "no-store")
	if strings.HasPrefix(r.URL.Path, "/ui/api/") || !strings.HasPrefix(r.URL.Path, "/ui") {
		writeError(w, status, msg)
		return
	}
	http.Error(w, msg, status)
}
