package auth

import (
	"fmt"
	"net"
	"strings"
)

// CheckListenAddress returns a warning to log when the server would listen on addr without
// authentication somewhere other than loopback, and "" when that is not a concern: auth is
// enabled, addr is a loopback address or "localhost", or addr is a Unix socket path (which its
// file permissions protect). A host name other than localhost gets a warning too, since it may
// resolve to a routable address.
func CheckListenAddress(addr string, authEnabled bool) (warning string) {
	if authEnabled || strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "unix:") || strings.HasPrefix(addr, "@") {
		return ""
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	const risk = "without authentication: anyone who can reach it can ask for decisions and watch every event; configure auth tokens, or listen on 127.0.0.1"
	host = strings.Trim(host, "[]")
	switch {
	case host == "" || host == "0.0.0.0" || host == "::":
		return fmt.Sprintf("listening on every network interface (%s) %s", addr, risk)
	case strings.EqualFold(host, "localhost"):
		return ""
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return ""
		}
		return fmt.Sprintf("listening on the non-loopback address %s %s", addr, risk)
	}
	return fmt.Sprintf("listening on %s, which may not be a loopback address, %s", addr, risk)
}
