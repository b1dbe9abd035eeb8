package convert

import (
	"errors"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// JSON-RPC error codes used by the Agent Hooks Protocol: the standard JSON-RPC 2.0 codes plus the
// four the Hooks specification reserves (base/errors.md).
const (
	HooksCodeParseError                 = -32700 // not UTF-8 JSON, or not one stdio line
	HooksCodeInvalidRequest             = -32600 // not a valid JSON-RPC 2.0 envelope
	HooksCodeMethodNotFound             = -32601 // unknown method
	HooksCodeInvalidParams              = -32602 // params (or a result) fail the v0.1 schema
	HooksCodeInternalError              = -32603 // anything this package did not classify
	HooksCodeUnsupportedProtocolVersion = -32001 // params.protocolVersion is not "0.1"
	HooksCodeUnsupportedEvent           = -32002 // event type not supported by the method
	HooksCodeBackendUnavailable         = -32003 // backend cannot evaluate right now
	HooksCodeBackendInternalError       = -32004 // backend failed while evaluating
)

// ErrUnsupportedProtocolVersion is matched (errors.Is) by errors for a protocolVersion other than
// the one this codec implements; the bridge answers them with -32001.
var ErrUnsupportedProtocolVersion = errors.New("unsupported protocol version")

// ErrUnsupportedEvent is matched (errors.Is) by errors for an event type the method does not
// support; the bridge answers them with -32002.
var ErrUnsupportedEvent = errors.New("unsupported event type")

// hooksError is a *FieldError with the JSON-RPC code it maps to and, for the two protocol-level
// failures, a sentinel for errors.Is. FieldError itself has no room for either.
type hooksError struct {
	field *FieldError
	code  int
	kind  error
}

func (e *hooksError) Error() string { return e.field.Error() }

func (e *hooksError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.field}
	}
	return []error{e.field, e.kind}
}

func hooksErrorf(code int, kind error, path, format string, args ...any) error {
	return &hooksError{field: fieldErr(path, format, args...), code: code, kind: kind}
}

// hooksInvalid reports a field that breaks the v0.1 schema (-32602).
func hooksInvalid(path, format string, args ...any) error {
	return hooksErrorf(HooksCodeInvalidParams, nil, path, format, args...)
}

// hooksBadEnvelope reports a broken JSON-RPC envelope (-32600).
func hooksBadEnvelope(path, format string, args ...any) error {
	return hooksErrorf(HooksCodeInvalidRequest, nil, path, format, args...)
}

// hooksUnparsable reports input that is not one JSON document (-32700).
func hooksUnparsable(path, format string, args ...any) error {
	return hooksErrorf(HooksCodeParseError, nil, path, format, args...)
}

// hooksBadVersion reports a protocolVersion this codec does not implement (-32001).
func hooksBadVersion(path string) error {
	return hooksErrorf(HooksCodeUnsupportedProtocolVersion, ErrUnsupportedProtocolVersion, path,
		"unsupported protocol version; supported: %s", HooksProtocolVersion)
}

// hooksCheckVersion reads a required protocolVersion member. A missing or non-string value is an
// invalid field; a string naming another version is ErrUnsupportedProtocolVersion.
func hooksCheckVersion(o *hooksObject) (string, error) {
	v, err := o.requiredString("protocolVersion", false)
	if err != nil {
		return "", err
	}
	if v != HooksProtocolVersion {
		return "", hooksBadVersion(joinPath(o.path, "protocolVersion"))
	}
	return v, nil
}

// hooksRejection records how to answer a message DecodeHooksMessage rejected.
type hooksRejection struct {
	err   error
	id    HooksID // id to answer with; null when it could not be read
	reply bool    // false for notifications and responses, which are never answered
}

func (r *hooksRejection) Error() string { return r.err.Error() }
func (r *hooksRejection) Unwrap() error { return r.err }

// HooksErrorCode maps an error from this package's Hooks decoders to the JSON-RPC error code the
// Agent Hooks Protocol uses for it: -32700 unparsable JSON or bad stdio framing, -32600 a broken
// envelope, -32601 an unknown method, -32602 invalid params, -32001 an unsupported protocol version,
// -32002 an unsupported event. Errors it does not recognise map to -32603; nil maps to 0.
func HooksErrorCode(err error) int {
	if err == nil {
		return 0
	}
	var he *hooksError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.Is(err, ErrUnsupportedProtocolVersion):
		return HooksCodeUnsupportedProtocolVersion
	case errors.Is(err, ErrUnsupportedEvent):
		return HooksCodeUnsupportedEvent
	}
	if _, ok := AsFieldError(err); ok {
		return HooksCodeInvalidParams
	}
	return HooksCodeInternalError
}

// hooksCodeMessages are the short messages of JSON-RPC error objects, by code.
var hooksCodeMessages = map[int]string{
	HooksCodeParseError:                 "Parse error",
	HooksCodeInvalidRequest:             "Invalid Request",
	HooksCodeMethodNotFound:             "Method not found",
	HooksCodeInvalidParams:              "Invalid params",
	HooksCodeInternalError:              "Internal error",
	HooksCodeUnsupportedProtocolVersion: "Unsupported protocol version",
	HooksCodeUnsupportedEvent:           "Unsupported event",
	HooksCodeBackendUnavailable:         "Backend unavailable",
	HooksCodeBackendInternalError:       "Backend internal error",
}

// HooksRPCError builds the JSON-RPC error object for err: the code from HooksErrorCode, the
// standard short message, and data {"path", "reason"} taken from the *FieldError inside err
// ({"supported": ["0.1"]} is added for -32001). Field values are never part of the messages this
// package builds, so the object is safe to send; the text of errors from elsewhere is not sent.
func HooksRPCError(err error) *ahpv1.RpcError {
	code := HooksErrorCode(err)
	out := &ahpv1.RpcError{Code: int32(code), Message: hooksCodeMessages[code]}
	data := map[string]any{}
	var he *hooksError
	if errors.As(err, &he) {
		if he.field.Path != "" {
			data["path"] = he.field.Path
		}
		data["reason"] = he.field.Message
	}
	if code == HooksCodeUnsupportedProtocolVersion {
		data["supported"] = []any{HooksProtocolVersion}
	}
	if len(data) > 0 {
		v, convErr := toValue(data)
		if convErr == nil {
			out.Data = v
		}
	}
	return out
}

// HooksErrorResponse builds the JSON-RPC error response for a message DecodeHooksMessage rejected,
// addressed to the rejected request's id (null when the id could not be read). ok is false when no
// response is due because the rejected message was a notification or a response. Errors that did
// not come from DecodeHooksMessage are answered with a null id.
func HooksErrorResponse(err error) (resp *HooksMessage, ok bool) {
	if err == nil {
		return nil, false
	}
	id := HooksNullID()
	var rej *hooksRejection
	if errors.As(err, &rej) {
		if !rej.reply {
			return nil, false
		}
		id = rej.id
	}
	return &HooksMessage{ID: id, Error: HooksRPCError(err)}, true
}

// hooksValue converts a decoded JSON value for a proto field, naming path when a number does not
// fit a double (the only way toValue fails on decoded JSON). The number itself is not repeated.
func hooksValue(path string, v any) (*structpb.Value, error) {
	pv, err := toValue(v)
	if err != nil {
		return nil, hooksNumberRangeError(path)
	}
	return pv, nil
}

// hooksNumberRangeError reports a JSON number that does not fit a double.
func hooksNumberRangeError(path string) error {
	return hooksInvalid(path, "contains a number outside the range of a double")
}

// hooksEncodeError wraps a validation failure found while encoding.
func hooksEncodeError(what string, err error) error {
	return fmt.Errorf("convert: refusing to encode an invalid Agent Hooks %s: %w", what, err)
}
