package core

import (
	"errors"
	"fmt"
)

// Code classifies a core error; the service layer maps it to a Connect code and the bridge to a
// JSON-RPC code.
type Code int

const (
	// CodeInvalidArgument: the request is malformed; Field names what is wrong.
	CodeInvalidArgument Code = iota + 1
	// CodeFailedPrecondition: the request is well-formed but cannot be served (e.g. an unsupported
	// protocol version).
	CodeFailedPrecondition
	// CodeInternal: the server failed while deciding (a panic, an engine failure).
	CodeInternal
	// CodeUnavailable: the server cannot accept the request right now (e.g. a required audit log
	// cannot be written); retrying later may succeed.
	CodeUnavailable
)

// Error is a classified error from the decision core. Its message names the field and says why; it
// never contains field values, which may be secrets.
type Error struct {
	// Code classifies the error.
	Code Code
	// Field is the offending field path ("event.type", "events[3].harness.depth"), if any.
	Field string
	// Reason says what is wrong.
	Reason string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
