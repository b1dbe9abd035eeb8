package jsonwire

import (
	"errors"
	"fmt"
	"strings"
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

// JoinPath appends a key segment (or dotted segments) to a JSON path. Paths travel in error
// replies, and a key of free-form data (tool input, a payload, extensions) is the sender's data,
// possibly a secret (`{"password=…": 1}`): a key with a segment that is not a plain identifier —
// up to 32 letters, digits and underscores, at most 4 of them digits — is written as "*". Schema
// field names always are.
func JoinPath(base, key string) string {
	if !plainKey(key) {
		key = "*"
	}
	if base == "" {
		return key
	}
	return base + "." + key
}

// plainKey reports whether every dot-separated segment of key is a plain identifier (callers pass
// "session.id" for two segments at once).
func plainKey(key string) bool {
	for seg := range strings.SplitSeq(key, ".") {
		if !plainSegment(seg) {
			return false
		}
	}
	return true
}

func plainSegment(key string) bool {
	if key == "" || len(key) > 32 {
		return false
	}
	digits := 0
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		default:
			return false
		}
	}
	return digits <= 4
}

// indexPath appends an array index to a JSON path.
func IndexPath(base string, i int) string {
	return fmt.Sprintf("%s[%d]", base, i)
}
