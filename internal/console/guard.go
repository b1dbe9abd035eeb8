package console

import (
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// contentSecurityPolicy allows the page its own scripts, styles and API and nothing else: no
// inline script or style, no framing, no plugins, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// setSecurityHeaders sets what every console response carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}

// hostRules decides which Host headers are acceptable. An IP literal is always acceptable: a
// DNS-rebinding page runs under its own host name, which is what reaches the server as Host, and
// no page can claim an IP literal's origin without being served from it.
type hostRules struct {
	exact    map[string]bool
	suffixes []string
}

func newHostRules(allowed []string) hostRules {
	r := hostRules{exact: map[string]bool{"localhost": true}}
	for _, h := range allowed {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "":
		case strings.HasPrefix(h, "."):
			r.suffixes = append(r.suffixes, h)
		default:
			r.exact[h] = true
		}
	}
	return r
}

// allows reports whether host (a Host header: name or IP, optional port) is acceptable.
func (r hostRules) allows(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	if name == "" {
		return false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if r.exact[name] || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, s := range r.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// fromBrowser reports whether a browser made r: browsers send Origin on cross-origin requests and
// on every POST, and Sec-Fetch-Site on every request; other clients send neither.
func fromBrowser(r *http.Request) bool {
	return r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != ""
}

// sameOrigin reports what is wrong with r's origin, or "" when it comes from the page's own
// origin (or states none, as a navigation or a non-browser client does).
func sameOrigin(r *http.Request) string {
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || origin == "null" || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return "cross-origin request refused: the Origin header does not match the Host"
		}
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return ""
	default:
		return "cross-site request refused (Sec-Fetch-Site)"
	}
}

// checkBrowserAPI reports what is wrong with a browser's request to the API, or "".
func (c *Console) checkBrowserAPI(r *http.Request) string {
	if !c.hosts.allows(r.Host) {
		return "host not allowed: add it to -ui-allowed-hosts to reach the server by this name from a browser"
	}
	return sameOrigin(r)
}

// checkConsole reports what is wrong with a request to the console, or "".
func (c *Console) checkConsole(r *http.Request) string {
	if !c.hosts.allows(r.Host) {
		return "host not allowed: add it to -ui-allowed-hosts to reach the console by this name"
	}
	if msg := sameOrigin(r); msg != "" {
		// A link from another site to the page itself is harmless (it cannot frame or read it);
		// anything else cross-site is refused.
		if !isNavigation(r) {
			return msg
		}
	}
	if !c.authOn && !loopbackOnly(r) {
		return "the console without credentials is served only to loopback clients on a loopback address: configure auth tokens with the watch scope to serve it elsewhere"
	}
	return ""
}

// isNavigation reports whether r is a top-level navigation to a page (GET of a document).
func isNavigation(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate" &&
		r.Header.Get("Sec-Fetch-Dest") == "document" && !strings.HasPrefix(r.URL.Path, "/ui/api/")
}

// loopbackOnly reports whether both ends of r's connection are loopback addresses.
func loopbackOnly(r *http.Request) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || !isLoopback(local.String()) {
		return false
	}
	return isLoopback(r.RemoteAddr)
}

func isLoopback(hostport string) bool {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return false
	}
	return ap.Addr().Unmap().IsLoopback()
}

// writeError writes a JSON error in the Connect error shape, so the page reads every refusal the
// same way.
func writeError(w http.ResponseWriter, status int, msg string) {
	code := map[int]string{
		http.StatusUnauthorized: "unauthenticated", http.StatusForbidden: "permission_denied",
		http.StatusNotFound: "not_found", http.StatusMethodNotAllowed: "unimplemented",
	}[status]
	if code == "" {
		code = "internal"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}
