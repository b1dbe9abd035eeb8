package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrSyntax is matched (errors.Is) by Parse's errors for input that is not one UTF-8 JSON
// document; ErrDuplicateKey by its errors for a document with a repeated object key. The two
// are kept apart because JSON-RPC answers them with different codes.
var (
	ErrSyntax       = errors.New("not one JSON document")
	ErrDuplicateKey = errors.New("duplicate object key")
)

const duplicateKeyMessage = "duplicate object key"

// Parse parses one UTF-8 JSON document into generic values (map[string]any, []any, string,
// json.Number, bool, nil). Duplicate object keys are rejected, because two readers could pick
// different values for the same key; the parsed value is still returned with that error so the
// caller can address a reply. Errors are *FieldError values matching ErrSyntax (no path) or
// ErrDuplicateKey (Path names the repeated key).
func Parse(data []byte) (any, error) {
	// The one-pass parser handles every document it accepts, the common case; whatever it does not
	// accept goes the slow way, which finds the exact error to report.
	if v, dupPath, dup, ok := parseFast(data); ok {
		if dup {
			return v, duplicateKey(dupPath)
		}
		return v, nil
	}
	return parseStd(data)
}

func syntaxError(format string, args ...any) error {
	e := Errorf("", format, args...)
	e.Err = ErrSyntax
	return e
}

func duplicateKey(path string) error {
	return &FieldError{Path: path, Message: duplicateKeyMessage, Err: ErrDuplicateKey}
}

// parseStd is Parse built from encoding/json: the reference for parseFast
// and the source of every parse error.
func parseStd(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, syntaxError("not valid UTF-8")
	}
	// json.Valid first: decode lets trailing bytes through when they do not form a whole token
	// ({} x), and the duplicate-key walk relies on the document being valid throughout.
	if !json.Valid(data) {
		var syn *json.SyntaxError
		if err := json.Unmarshal(data, new(json.RawMessage)); errors.As(err, &syn) {
			return nil, syntaxError("not valid JSON (syntax error at byte offset %d)", syn.Offset)
		}
		return nil, syntaxError("not a single valid JSON value")
	}
	v, err := decode(data)
	if err != nil {
		return nil, syntaxError("not a single valid JSON value")
	}
	if err := checkDuplicateKeys(data); err != nil {
		return v, err
	}
	return v, nil
}

// checkDuplicateKeys reports the path of the first key that repeats within its object. It
// runs on a document json.Valid has accepted, so a structural walk over the bytes is enough: only
// strings, brackets and commas matter. Keys are compared after unescaping ("a" and "\u0061" are
// the same key).
func checkDuplicateKeys(data []byte) error {
	type frame struct {
		object bool
		path   string
		keys   map[string]struct{}
		key    string // objects: the key whose value comes next
		index  int    // arrays: index of the current element
	}
	var stack []*frame
	wantKey := false
	childPath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return JoinPath(top.path, top.key)
		}
		return IndexPath(top.path, top.index)
	}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, &frame{object: true, path: childPath()})
			wantKey = true
		case '[':
			stack = append(stack, &frame{path: childPath()})
		case '}', ']':
			stack = stack[:len(stack)-1]
			wantKey = false
		case ',':
			top := stack[len(stack)-1]
			if top.object {
				wantKey = true
			} else {
				top.index++
			}
		case '"':
			end := i + 1
			escaped := false
			for data[end] != '"' {
				if data[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			if wantKey {
				top := stack[len(stack)-1]
				key := string(data[i+1 : end])
				if escaped {
					_ = json.Unmarshal(data[i:end+1], &key) // valid: decode accepted it
				}
				if _, dup := top.keys[key]; dup {
					return duplicateKey(JoinPath(top.path, key))
				}
				if top.keys == nil {
					top.keys = map[string]struct{}{}
				}
				top.keys[key] = struct{}{}
				top.key, wantKey = key, false
			}
			i = end
		}
	}
	return nil
}

// decode parses one JSON document into generic Go values, keeping numbers as json.Number so
// integers keep their exact text until a typed field reads them. Trailing data is an error.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}
