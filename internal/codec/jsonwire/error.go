package jsonwire

import (
	"errors"
	"fmt"
)

// FieldError reports a field that failed to convert. Path is a dotted JSON path from the message
// root ("params.event.tool.kind", "params.payload.tasks[0].status"); Message says why, in the
// dialect's own wording where the dialect defines one (for Harness, the serde text a reference
// server would print, e.g. "missing field `payload`").
type FieldError struct {
	Path    string
	Message string
	// Err is an optional sentinel the error also matches with errors.Is (e.g. ErrUnsupportedEvent).
	Err error
}

// Unwrap returns the sentinel, if any.
func (e *FieldError) Unwrap() error { return e.Err }

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// fieldErr builds a *FieldError with a formatted message.
func Errorf(path, format string, args ...any) *FieldError {
	return &FieldError{Path: path, Message: fmt.Sprintf(format, args...)}
}

// AsFieldError returns the *FieldError inside err, if any.
func AsFieldError(err error) (*FieldError, bool) {
	var fe *FieldError
	ok := errors.As(err, &fe)
	return fe, ok
}

// joinPath appends a key or index segment to a JSON path.
func JoinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}

// indexPath appends an array index to a JSON path.
func IndexPath(base string, i int) string {
	return fmt.Sprintf("%s[%d]", base, i)
}
