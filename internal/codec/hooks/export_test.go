package hooks

import (
	"encoding/json"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Test-only entry points: parts of the codec no production code calls, for the black-box tests.

var (
	ErrorCode          = errorCode
	RPCError           = errorObject
	EncodeCapabilities = encodeCapabilities
	DecodeRPCError     = decodeRPCError
)

// DecodeCapabilities converts a decoded v0.1 capabilities object ({"effects": ["deny",
// "com.example.effect"]}) into canonical capabilities: "deny" becomes EFFECT_KIND_DENY and
// reverse-DNS names become extension effects. effects must be a non-empty array of unique names,
// each "deny" or reverse-DNS. Other members are ignored here (InterceptParams keeps them).
func DecodeCapabilities(path string, v any) (*ahpv1.Capabilities, error) {
	caps, _, err := decodeCapabilities(path, v)
	return caps, err
}

// EncodeEvent writes a canonical event as an Agent Hooks Protocol v0.1 event object. Unknown
// fields are written back first and typed fields over them, so an event from DecodeEvent
// gives its original JSON. Fields without a Hooks form (origin, harness, payload, typed bodies)
// are not written, and nothing is validated: EncodeMessage checks what it sends.
func EncodeEvent(ev *ahpv1.Event) map[string]any {
	return plainEncoder.event(ev)
}

// EncodeRPCError writes an RpcError as a JSON-RPC error object; data only when set.
func EncodeRPCError(e *ahpv1.RpcError) map[string]any {
	return plainEncoder.rpcError(e)
}

// EncodeInterceptResult writes a hooks/intercept result object. effects is always present
// (an empty array when there are none). Nothing is validated: EncodeMessage checks what it
// sends.
func EncodeInterceptResult(r *ahpv1.HooksInterceptResult) map[string]any {
	return plainEncoder.result(r)
}

// CheckStdioFraming checks one stdio message as read from the stream, terminator included: it
// must end with a LF, and what comes before must pass CheckStdioLine. (The bridge's NDJSON
// reader also takes a last line without LF; this rule is the specification's.)
func CheckStdioFraming(frame []byte) error {
	if len(frame) == 0 || frame[len(frame)-1] != '\n' {
		return unparsable("", "stdio message must end with a line feed")
	}
	return CheckStdioLine(frame[:len(frame)-1])
}

// WrapDraftDocument wraps a bare draft params or result document in its JSON-RPC envelope (as
// hooks/intercept when it has capabilities, hooks/observe when it has only an event, a response
// when it has effects or a manifest); full messages come back unchanged.
func WrapDraftDocument(data []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc["jsonrpc"] != nil {
		return data
	}
	var env map[string]any
	ev, _ := doc["event"].(map[string]any)
	switch {
	case doc["capabilities"] != nil:
		env = map[string]any{"jsonrpc": "2.0", "id": ev["id"], "method": MethodIntercept, "params": doc}
	case doc["event"] != nil:
		env = map[string]any{"jsonrpc": "2.0", "method": MethodObserve, "params": doc}
	default:
		env = map[string]any{"jsonrpc": "2.0", "id": "fixture", "result": doc}
	}
	out, _ := json.Marshal(env)
	return out
}
