// Package auth authenticates and authorises callers of ahp-server and of the JSON-RPC bridge.
//
// Callers present a secret: a bearer token (Authorization: Bearer …) or an API key (X-API-Key: …),
// or on a WebSocket upgrade the token / api_key query parameters that Harness clients send. Each
// configured credential has a name and scopes (agent, watch, admin, approve); every procedure needs one
// scope (see DefaultRules). Secrets come only from environment variables or files named in the
// configuration — a literal secret in the configuration is refused — and are kept only as SHA-256
// digests, compared in constant time against every configured credential.
//
// Authenticator is the one entry point: Gate and Interceptor for Connect (Connect, gRPC and
// gRPC-Web alike: Unauthenticated or PermissionDenied), Require and RequireWebSocket for plain
// net/http (401 or 403), and PrincipalFrom to learn who called. With no credentials configured it
// is Disabled and admits everything; CheckListenAddress then says whether the listen address makes
// that dangerous.
//
// Secrets never appear in errors, logs or formatted values: errors name the configuration entry,
// never its value, and Credential prints as [REDACTED].
package auth
