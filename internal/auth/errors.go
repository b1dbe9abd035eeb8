package auth

import (
	"errors"

	"connectrpc.com/connect"
)

// Reason classifies a refused call, for metrics and logs. The set is fixed, so it is safe as a
// metric label.
type Reason string

const (
	// ReasonMissing: no credential was presented.
	ReasonMissing Reason = "missing"
	// ReasonMalformed: a credential was presented in a form that is not accepted (an
	// Authorization scheme other than Bearer, an empty value, or more than one credential).
	ReasonMalformed Reason = "malformed"
	// ReasonInvalid: the credential matches no configured one.
	ReasonInvalid Reason = "invalid"
	// ReasonScope: the credential is valid but lacks the scope the procedure needs.
	ReasonScope Reason = "scope"
	// ReasonNoRule: the procedure has no access rule; it is denied to everyone (a wiring bug to
	// fix in the rules, never a reason to open it up).
	ReasonNoRule Reason = "no_rule"
)

// Reasons lists every Reason, for pre-creating metric series.
func Reasons() []Reason {
	return []Reason{ReasonMissing, ReasonMalformed, ReasonInvalid, ReasonScope, ReasonNoRule}
}

// The errors below are what callers are told. They never say which credential was compared, how
// close a guess came, or anything of the secret; wrap them only with procedure and scope names.
var (
	// ErrMissing is returned when no credential was presented.
	ErrMissing = errors.New("credentials required: send Authorization: Bearer <token> or X-API-Key: <key>")
	// ErrMalformed is returned when the presented credential is not in an accepted form.
	ErrMalformed = errors.New("malformed credentials: send exactly one of Authorization: Bearer <token> or X-API-Key: <key>")
	// ErrInvalid is returned when the credential matches no configured one.
	ErrInvalid = errors.New("invalid credentials")
	// ErrForbidden is returned when the credential lacks the scope the procedure needs.
	ErrForbidden = errors.New("permission denied")
	// ErrNoRule is returned for a procedure without an access rule.
	ErrNoRule = errors.New("permission denied: this procedure has no access rule")
)

// ReasonOf classifies an error from this package; it returns "" for other errors.
func ReasonOf(err error) Reason {
	switch {
	case errors.Is(err, ErrMissing):
		return ReasonMissing
	case errors.Is(err, ErrMalformed):
		return ReasonMalformed
	case errors.Is(err, ErrInvalid):
		return ReasonInvalid
	case errors.Is(err, ErrForbidden):
		return ReasonScope
	case errors.Is(err, ErrNoRule):
		return ReasonNoRule
	}
	return ""
}

// Unauthenticated reports whether err means "who are you?" (HTTP 401, CodeUnauthenticated) as
// opposed to "you may not" (HTTP 403, CodePermissionDenied).
func Unauthenticated(err error) bool {
	switch ReasonOf(err) {
	case ReasonMissing, ReasonMalformed, ReasonInvalid:
		return true
	}
	return false
}

// ConnectError maps an error from this package to a Connect error: Unauthenticated or
// PermissionDenied. For the Connect protocol (protocol is connect.ProtocolConnect), where unary
// errors are plain HTTP responses, an Unauthenticated error also carries an RFC 6750
// WWW-Authenticate challenge; gRPC would have to send it as a trailer, which net/http forbids.
func ConnectError(err error, protocol string) *connect.Error {
	if Unauthenticated(err) {
		cerr := connect.NewError(connect.CodeUnauthenticated, err)
		if protocol == connect.ProtocolConnect {
			cerr.Meta().Set("WWW-Authenticate", challenge(err))
		}
		return cerr
	}
	return connect.NewError(connect.CodePermissionDenied, err)
}

// challenge is the RFC 6750 WWW-Authenticate value for a 401.
func challenge(err error) string {
	if errors.Is(err, ErrInvalid) {
		return `Bearer realm="ahp", error="invalid_token"`
	}
	if errors.Is(err, ErrMalformed) {
		return `Bearer realm="ahp", error="invalid_request"`
	}
	return `Bearer realm="ahp"`
}
