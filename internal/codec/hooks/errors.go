package hooks

import (
	"errors"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

// JSON-RPC error codes used by the Agent Hooks Protocol: the standard JSON-RPC 2.0 codes plus the
// four the Hooks specification reserves (base/errors.md).
const (
	CodeParseError                 = -32700 // not UTF-8 JSON, or not one stdio line
	CodeInvalidRequest             = -32600 // not a valid JSON-RPC 2.0 envelope
	CodeMethodNotFound             = -32601 // unknown method
	CodeInvalidParams              = -32602 // params (or a result) fail the v0.1 schema
	CodeInternalError              = -32603 // anything this package did not classify
	CodeUnsupportedProtocolVersion = -32001 // params.protocolVersion is not "0.1"
	CodeUnsupportedEvent           = -32002 // event type not supported by the method
	CodeBackendUnavailable         = -32003 // backend cannot evaluate right now
	CodeBackendInternalError       = -32004 // backend failed while evaluating
)

// ErrUnsupportedProtocolVersion is matched (errors.Is) by errors for a protocolVersion other than
// the one this codec implements; the bridge answers them with -32001.
var ErrUnsupportedProtocolVersion = errors.New("unsupported protocol version")

// ErrUnsupportedEvent is matched (errors.Is) by errors for an event type the method does not
// support; the bridge answers them with -32002.
var ErrUnsupportedEvent = errors.New("unsupported event type")

// codedError is a *FieldError with the JSON-RPC code it maps to and, for the two protocol-level
// failures, a sentinel for errors.Is. FieldError itself has no room for either.
type codedError struct {
	field *jsonwire.FieldError
	code  int
	kind  error
	// supported overrides data.supported of a -32001 (Decode serves more than v0.1).
	supported []any
}

func (e *codedError) Error() string { return e.field.Error() }

func (e *codedError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.field}
	}
	return []error{e.field, e.kind}
}

func errorf(code int, kind error, path, format string, args ...any) error {
	return &codedError{field: jsonwire.Errorf(path, format, args...), code: code, kind: kind}
}

// invalid reports a field that breaks the v0.1 schema (-32602).
func invalid(path, format string, args ...any) error {
	return errorf(CodeInvalidParams, nil, path, format, args...)
}

// badEnvelope reports a broken JSON-RPC envelope (-32600).
func badEnvelope(path, format string, args ...any) error {
	return errorf(CodeInvalidRequest, nil, path, format, args...)
}

// unparsable reports input that is not one JSON document (-32700).
func unparsable(path, format string, args ...any) error {
	return errorf(CodeParseError, nil, path, format, args...)
}

// badVersion reports a protocolVersion this codec does not implement (-32001).
func badVersion(path string) error {
	return errorf(CodeUnsupportedProtocolVersion, ErrUnsupportedProtocolVersion, path,
		"unsupported protocol version; supported: %s", ProtocolVersion)
}

// checkVersion reads a required protocolVersion member. A missing or non-string value is an
// invalid field; a string naming another version is ErrUnsupportedProtocolVersion.
func checkVersion(o *object) (string, error) {
	v, err := o.requiredString("protocolVersion", false)
	if err != nil {
		return "", err
	}
	if v != ProtocolVersion {
		return "", badVersion(jsonwire.JoinPath(o.path(), "protocolVersion"))
	}
	return v, nil
}

// rejection records how to answer a message DecodeMessage rejected.
type rejection struct {
	err   error
	id    ID   // id to answer with; null when it could not be read
	reply bool // false for notifications and responses, which are never answered
}

func (r *rejection) Error() string { return r.err.Error() }
func (r *rejection) Unwrap() error { return r.err }

// errorCode maps an error from this package's Hooks decoders to the JSON-RPC error code the
// Agent Hooks Protocol uses for it: -32700 unparsable JSON or bad stdio framing, -32600 a broken
// envelope, -32601 an unknown method, -32602 invalid params, -32001 an unsupported protocol version,
// -32002 an unsupported event. Errors it does not recognise map to -32603; nil maps to 0.
func errorCode(err error) int {
	if err == nil {
		return 0
	}
	var he *codedError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.Is(err, ErrUnsupportedProtocolVersion):
		return CodeUnsupportedProtocolVersion
	case errors.Is(err, ErrUnsupportedEvent):
		return CodeUnsupportedEvent
	}
	if _, ok := jsonwire.AsFieldError(err); ok {
		return CodeInvalidParams
	}
	return CodeInternalError
}

// codeMessages are the short messages of JSON-RPC error objects, by code.
var codeMessages = map[int]string{
	CodeParseError:                 "Parse error",
	CodeInvalidRequest:             "Invalid Request",
	CodeMethodNotFound:             "Method not found",
	CodeInvalidParams:              "Invalid params",
	CodeInternalError:              "Internal error",
	CodeUnsupportedProtocolVersion: "Unsupported protocol version",
	CodeUnsupportedEvent:           "Unsupported event",
	CodeBackendUnavailable:         "Backend unavailable",
	CodeBackendInternalError:       "Backend internal error",
}

// errorObject builds the JSON-RPC error object for err: the code from errorCode, the
// standard short message, and data {"path", "reason"} taken from the *FieldError inside err
// ({"supported": ["0.1"]} is added for -32001). Field values are never part of the messages this
// package builds, so the object is safe to send; the text of errors from elsewhere is not sent.
func errorObject(err error) *ahpv1.RpcError {
	code := errorCode(err)
	out := &ahpv1.RpcError{Code: int32(code), Message: codeMessages[code]}
	data := map[string]any{}
	var he *codedError
	if errors.As(err, &he) {
		if he.field.Path != "" {
			data["path"] = he.field.Path
		}
		data["reason"] = he.field.Message
	}
	if code == CodeUnsupportedProtocolVersion {
		data["supported"] = []any{ProtocolVersion}
		if he != nil && he.supported != nil {
			data["supported"] = he.supported
		}
	}
	if len(data) > 0 {
		v, convErr := jsonwire.ToValue(data)
		if convErr == nil {
			out.Data = v
		}
	}
	return out
}

// ErrorResponse builds the JSON-RPC error response for a message DecodeMessage rejected,
// addressed to the rejected request's id (null when the id could not be read). ok is false when no
// response is due because the rejected message was a notification or a response. Errors that did
// not come from DecodeMessage are answered with a null id.
func ErrorResponse(err error) (resp *Message, ok bool) {
	if err == nil {
		return nil, false
	}
	id := NullID()
	var rej *rejection
	if errors.As(err, &rej) {
		if !rej.reply {
			return nil, false
		}
		id = rej.id
	}
	return &Message{ID: id, Error: errorObject(err)}, true
}

// fieldValue converts a decoded JSON value for a proto field, naming path when a number does not
// fit a double (the only way toValue fails on decoded JSON). The number itself is not repeated.
func fieldValue(path string, v any) (*structpb.Value, error) {
	pv, err := jsonwire.ToValue(v)
	if err != nil {
		return nil, numberRangeError(path)
	}
	return pv, nil
}

// numberRangeError reports a JSON number that does not fit a double.
func numberRangeError(path string) error {
	return invalid(path, "contains a number outside the range of a double")
}

// encodeError wraps a validation failure found while encoding.
func encodeError(what string, err error) error {
	return fmt.Errorf("convert: refusing to encode an invalid Agent Hooks %s: %w", what, err)
}
