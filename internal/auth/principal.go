package auth

import (
	"context"
	"log/slog"
)

// Principal is an authenticated caller: the name and scopes of the configured credential it
// presented — never the secret itself.
type Principal struct {
	// Name is the configured credential's name.
	Name string
	// Kind says whether it was configured (and presented) as a bearer token or an API key.
	Kind Kind
	// Groups are the credential's configured groups (approver lists name them as group:<g>).
	Groups []string

	scopes scopeSet
}

// Scopes lists the principal's scopes in a fixed order (agent, watch, admin, approve).
func (p Principal) Scopes() []Scope { return p.scopes.list() }

// Has reports whether the principal holds scope s.
func (p Principal) Has(s Scope) bool { return p.scopes.has(s) }

// LogValue lets a Principal be logged as a group of name, kind and scopes.
func (p Principal) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", p.Name),
		slog.String("kind", p.Kind.String()),
		slog.String("scopes", p.scopes.String()),
	)
}

type principalKey struct{}

// ContextWithPrincipal returns ctx carrying p. Authentication does this; tests and embedders may
// too.
func ContextWithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal that made the call ctx belongs to. It reports false when
// the call was not authenticated: auth is Disabled, or the procedure is public.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
