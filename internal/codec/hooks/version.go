package hooks

import (
	"errors"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// Version is an Agent Hooks Protocol wire version this package serves, exactly as
// params.protocolVersion writes it.
type Version string

// The versions this package serves. Matching is exact: "0.1.0", "Draft" or "0.2" are neither.
const (
	// V01 is the frozen v0.1 revision: five events, tool.before interceptable, deny only.
	V01 Version = ProtocolVersion
	// Draft is the working-draft snapshot every official SDK sends: 32 events, eight effects.
	Draft Version = "draft"
)

// Versions lists the served versions in the order -32001's data.supported names them.
var Versions = []Version{V01, Draft}

// supportedList is Versions as the JSON array of data.supported.
func supportedList() []any {
	out := make([]any, len(Versions))
	for i, v := range Versions {
		out[i] = string(v)
	}
	return out
}

// Decode reads one message of either served version: params.protocolVersion "draft" routes to the
// draft decoder (DecodeDraft's rules), anything else to the v0.1 decoder (DecodeParsed's). doc and
// parseErr are what jsonwire.Parse returned. A protocolVersion that is neither is -32001 with
// data.supported ["0.1","draft"]; an answer to a message of one version never mentions the other.
func Decode(doc any, parseErr error) (*Message, error) {
	if parseErr == nil && requestedVersion(doc) == string(Draft) {
		return DecodeDraft(doc)
	}
	m, err := DecodeParsed(doc, parseErr)
	if err != nil && errors.Is(err, ErrUnsupportedProtocolVersion) {
		var ce *codedError
		if errors.As(err, &ce) {
			ce.supported = supportedList()
			ce.field.Message = "unsupported protocol version; supported: 0.1, draft"
		}
	}
	return m, err
}

// DecodeBytes is Decode for raw bytes.
func DecodeBytes(data []byte) (*Message, error) { return Decode(jsonwire.Parse(data)) }

// requestedVersion peeks at params.protocolVersion (or result.protocolVersion) without
// validating anything else; "" when there is none.
func requestedVersion(doc any) string {
	env, ok := doc.(map[string]any)
	if !ok {
		return ""
	}
	for _, key := range []string{"params", "result"} {
		if p, ok := env[key].(map[string]any); ok {
			if v, ok := p["protocolVersion"].(string); ok {
				return v
			}
		}
	}
	return ""
}

// VersionOf reports the protocol version of a decoded message ("" for an error response, which
// carries none).
func VersionOf(m *Message) Version {
	switch {
	case m.Intercept != nil:
		return Version(m.Intercept.ProtocolVersion)
	case m.Observe != nil:
		return Version(m.Observe.ProtocolVersion)
	case m.Capabilities != nil:
		return Version(m.Capabilities.ProtocolVersion)
	case m.Result != nil:
		return Version(m.Result.GetProtocolVersion())
	case m.Discovery != nil:
		return Version(m.Discovery.ProtocolVersion)
	}
	return ""
}
