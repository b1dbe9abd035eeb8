// Package hostcheck guards an HTTP listener against DNS rebinding and cross-site browser
// requests. A web page can make a browser send requests to a server on the user's loopback
// interface, either under the attacker's own host name (DNS rebinding: the name resolves to
// 127.0.0.1 after the page loaded) or cross-site with a simple POST. The first is refused by
// checking the Host header, the second by checking Origin (and Sec-Fetch-Site).
//
// Rules:
//   - Host: with AllowedHosts, the request's host (without its port) must be one of them ("*"
//     accepts any). Without, a listener bound to a loopback address accepts only loopback names
//     (localhost, *.localhost, loopback IP literals); one bound elsewhere accepts any, since
//     clients reach it under names the server cannot know (DNS, a load balancer).
//   - Origin: a request without Origin is not a browser's (connect-go, grpc-go, curl and the
//     Python and TypeScript clients send none) and passes; a request whose Origin is the
//     server's own (same host and port as Host) passes; otherwise the origin must be one of
//     AllowedOrigins ("*" accepts any). A request a browser marks `Sec-Fetch-Site: cross-site`
//     without an Origin is refused too. An allowed origin gets CORS answers (preflight and
//     Access-Control-Allow-Origin), so gRPC-Web and Connect from that origin work.
//
// A refusal is 403 with a fixed text; the Host or Origin is never echoed.
package hostcheck

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config says which hosts and origins are accepted; the zero value is the default described in
// the package documentation.
type Config struct {
	// AllowedHosts are accepted Host names (no port; "*" any). Empty: decided by the bound address.
	AllowedHosts []string
	// AllowedOrigins are accepted browser origins ("https://console.example.com"; "*" any).
	AllowedOrigins []string
	// Logger receives one line per refusal (default slog.Default()).
	Logger *slog.Logger
}

// Split parses a comma-separated list (a flag or environment value), dropping empty items.
func Split(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Wrap returns next behind the checks, for a listener bound to addr (nil: not a TCP listener,
// for which Host is not checked unless AllowedHosts says so).
func Wrap(next http.Handler, addr net.Addr, cfg Config) http.Handler {
	g := &guard{next: next, log: cfg.Logger, origins: map[string]bool{}}
	if g.log == nil {
		g.log = slog.Default()
	}
	switch {
	case len(cfg.AllowedHosts) > 0:
		g.hosts = map[string]bool{}
		for _, h := range cfg.AllowedHosts {
			if h == "*" {
				g.hosts = nil
				break
			}
			g.hosts[hostOnly(h)] = true
		}
	case isLoopback(addr):
		g.loopbackOnly = true
	}
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			g.anyOrigin = true
			continue
		}
		g.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

type guard struct {
	next         http.Handler
	log          *slog.Logger
	hosts        map[string]bool // nil: any (unless loopbackOnly)
	loopbackOnly bool
	origins      map[string]bool
	anyOrigin    bool
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		g.refuse(w, r, "host", "request refused: the Host header names no address this server answers for")
		return
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			g.refuse(w, r, "cross_site", "request refused: cross-site browser requests are not allowed")
			return
		}
		g.next.ServeHTTP(w, r)
		return
	}
	same := sameOrigin(origin, r.Host)
	if !same && !g.anyOrigin && !g.origins[strings.ToLower(origin)] {
		g.refuse(w, r, "origin", "request refused: this browser origin is not allowed")
		return
	}
	if !same {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", exposed)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", "7200")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// exposed are the response headers Connect, gRPC-Web and the bridge's clients read.
const exposed = "Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin, Connect-Content-Encoding, Connect-Accept-Encoding, Content-Encoding, Grpc-Encoding, Grpc-Accept-Encoding"

// refuse answers 403 without reading the body: over HTTP/1 the connection closes after the answer
// and every read of the body fails at once, so a client sending a body slowly holds nothing. The
// body is a Connect error ({"code":"permission_denied","message":…}), which Connect and gRPC-Web
// clients read as such and which any JSON client can parse; text is a constant, never a value
// of the request.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, reason, text string) {
	g.log.Info("request refused", "reason", reason, "peer", r.RemoteAddr)
	if r.ProtoMajor == 1 && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`{"code":"permission_denied","message":"` + text + `"}` + "\n"))
}

func (g *guard) hostAllowed(hostport string) bool {
	host := hostOnly(hostport)
	switch {
	case g.loopbackOnly:
		return isLoopbackName(host)
	case g.hosts == nil:
		return true
	}
	return g.hosts[host]
}

// hostOnly is the lower-cased host of a Host header value, without port or brackets.
func hostOnly(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether origin is the server's own: its host and port are the request's
// Host (with the scheme's default port when Host has none).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(withPort(u.Host, u.Scheme), withPort(host, u.Scheme))
}

func withPort(hostport, scheme string) string {
	if _, _, err := net.SplitHostPort(hostport); err == nil {
		return hostport
	}
	if scheme == "https" {
		return hostport + ":443"
	}
	return hostport + ":80"
}
