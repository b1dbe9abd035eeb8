package harness

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// This file is the Agent Harness error -> wire mapping: which JSON-RPC code and message the
// reference server (a3s-ahp 2.4.0) answers for each failed check, with its checks run in its
// order. The bridge answers with these; the error vectors in testdata/errors.jsonl hold them to
// the reference.

// JSON-RPC error codes of the reference server; -32000 only for the handshake version.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeVersion        = -32000
)

// Agent Harness methods.
const (
	MethodHandshake = "ahp/handshake"
	MethodEvent     = "ahp/event"
	MethodQuery     = "ahp/query"
	MethodBatch     = "ahp/batch"
)

// The reference's messages for envelope failures.
const (
	MessageParseError     = "Parse error"
	MessageInvalidMessage = "Invalid JSON-RPC message"
	MessageMethodNotFound = "Method not found"
)

// Error is a JSON-RPC error as the reference server answers it. Err is the codec error behind
// it, if any; jsonwire.AsFieldError gives its JSON path, which the wire does not carry.
type Error struct {
	Code    int
	Message string
	Err     error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the codec error behind e.
func (e *Error) Unwrap() error { return e.Err }

// failed builds the answer to a failed check: the reference's prefix, then ErrMessage(err).
func failed(code int, prefix string, err error) *Error {
	return &Error{Code: code, Message: prefix + ErrMessage(err), Err: err}
}

// ErrMessage is the text the reference puts after its prefixes: a *jsonwire.FieldError's
// Message (its Error adds the JSON path, which the reference does not print).
func ErrMessage(err error) string {
	if fe, ok := jsonwire.AsFieldError(err); ok {
		return fe.Message
	}
	return err.Error()
}

// CheckEvent reads the params of an ahp/event request and runs the reference's checks in its
// order: read (-32602 "Invalid params: "), shape (-32602 "Invalid event: "), delivery (-32602),
// typed payload (-32603 "Handler error: "). requestID is the request's id, for the event id.
func CheckEvent(params any, requestID string, cfg *ahpv1.HarnessConfig) (*EventParams, *Error) {
	p, err := readEventParams("params", params, requestID)
	if err != nil {
		return nil, failed(CodeInvalidParams, "Invalid params: ", err)
	}
	if err := p.ValidateShape(cfg); err != nil {
		return nil, failed(CodeInvalidParams, "Invalid event: ", err)
	}
	if err := p.CheckDelivery(false); err != nil {
		return nil, failed(CodeInvalidParams, "", err)
	}
	if err := p.ParseTypedPayload(); err != nil {
		return nil, failed(CodeInternalError, "Handler error: ", err)
	}
	return p, nil
}

// CheckNotification is CheckEvent for an ahp/event notification: read, shape and delivery, every
// failure an AhpError the reference answers (on HTTP only) as -32603 "Handler error: ", with
// "Serialization error: " in front of a read failure.
func CheckNotification(params any, cfg *ahpv1.HarnessConfig) (*EventParams, *Error) {
	p, err := readEventParams("params", params, "")
	if err != nil {
		return nil, failed(CodeInternalError, "Handler error: Serialization error: ", err)
	}
	if err := p.ValidateShape(cfg); err != nil {
		return nil, failed(CodeInternalError, "Handler error: ", err)
	}
	if err := p.CheckDelivery(true); err != nil {
		return nil, failed(CodeInternalError, "Handler error: ", err)
	}
	return p, nil
}

// CheckBatch reads the params of an ahp/batch request and checks the whole batch before any of it
// is handled: read (-32602 "Invalid params: "), size (-32602), then per entry shape (-32602
// "Invalid event: ") and batchability (-32602).
func CheckBatch(params any, cfg *ahpv1.HarnessConfig) ([]*EventParams, *Error) {
	entries, err := readBatch("params", params)
	if err != nil {
		return nil, failed(CodeInvalidParams, "Invalid params: ", err)
	}
	if err := checkBatchSize(len(entries), cfg); err != nil {
		return nil, failed(CodeInvalidParams, "", err)
	}
	for _, p := range entries {
		if err := p.ValidateShape(cfg); err != nil {
			return nil, failed(CodeInvalidParams, "Invalid event: ", err)
		}
		if err := p.CheckBatchable(); err != nil {
			return nil, failed(CodeInvalidParams, "", err)
		}
	}
	return entries, nil
}

// CheckHandshake reads the params of an ahp/handshake request (-32602 "Invalid params: ").
func CheckHandshake(params any) (*ahpv1.HandshakeRequest, *Error) {
	req, err := decodeHandshakeRequest("params", params)
	if err != nil {
		return nil, failed(CodeInvalidParams, "Invalid params: ", err)
	}
	return req, nil
}

// CheckQuery reads the params of an ahp/query request (-32602 "Invalid params: ").
func CheckQuery(params any) (*ahpv1.QueryRequest, *Error) {
	req, err := decodeQueryRequest("params", params)
	if err != nil {
		return nil, failed(CodeInvalidParams, "Invalid params: ", err)
	}
	return req, nil
}
