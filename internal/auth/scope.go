package auth

import "strings"

// Scope names a group of procedures a credential may call.
type Scope string

const (
	// ScopeAgent is for agents and harnesses: intercept, typed decisions, observe, handshake,
	// query and capabilities.
	ScopeAgent Scope = "agent"
	// ScopeWatch is for live tails of decisions and events (Watch), which show what every agent
	// does; it is separate from agent so a compromised agent cannot watch the others.
	ScopeWatch Scope = "watch"
	// ScopeAdmin is for operating the server (policy reload and the HTTP admin endpoints).
	ScopeAdmin Scope = "admin"
	// ScopeApprove is for people who decide approvals (ApprovalService): list, watch and decide.
	// It is separate from agent so an agent cannot approve its own calls, and from admin so
	// approvers need not operate the server.
	ScopeApprove Scope = "approve"
)

// scopes lists every scope in bit order.
var scopes = [...]Scope{ScopeAgent, ScopeWatch, ScopeAdmin, ScopeApprove}

// scopeSet is a bit set of scopes, so checking one is a mask and not a slice walk.
type scopeSet uint8

func (s Scope) bit() scopeSet {
	for i, v := range scopes {
		if v == s {
			return 1 << i
		}
	}
	return 0
}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s.bit() != 0 }

func (set scopeSet) has(s Scope) bool {
	b := s.bit()
	return b != 0 && set&b == b
}

func (set scopeSet) list() []Scope {
	var out []Scope
	for i, s := range scopes {
		if set&(1<<i) != 0 {
			out = append(out, s)
		}
	}
	return out
}

func (set scopeSet) String() string {
	names := make([]string, 0, len(scopes))
	for _, s := range set.list() {
		names = append(names, string(s))
	}
	return strings.Join(names, ",")
}
