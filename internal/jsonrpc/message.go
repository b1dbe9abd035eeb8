package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// Message is one JSON-RPC message as Read found it. Members other than the ones named here are
// only in Object.
type Message struct {
	// Doc and Err are what jsonwire.Parse made of the whole message: Err is nil, or matches
	// jsonwire.ErrSyntax (Doc is then nil) or jsonwire.ErrDuplicateKey (Doc is still the
	// document, each repeated key holding its last value).
	Doc any
	Err error
	// Object is Doc when it is a JSON object; nil otherwise (an array, a scalar, or no JSON).
	Object map[string]any

	HasJSONRPC bool
	JSONRPC    any // the jsonrpc member as parsed

	HasID bool
	ID    any // the id member as parsed

	HasMethod bool
	Method    string // "" unless the method member is a string
	MethodOK  bool   // the method member is a string

	HasParams bool
	Params    any // the params member as parsed

	HasResult, HasError bool

	// Duplicate says some top-level member appears twice; DuplicateID that the id member does,
	// so no id can be trusted.
	Duplicate, DuplicateID bool
}

// Read parses msg once (jsonwire.Parse) and reads its top level.
func Read(msg []byte) *Message {
	m := &Message{}
	m.Doc, m.Err = jsonwire.Parse(msg)
	obj, ok := m.Doc.(map[string]any)
	if !ok {
		return m
	}
	m.Object = obj
	m.JSONRPC, m.HasJSONRPC = obj["jsonrpc"]
	m.ID, m.HasID = obj["id"]
	var method any
	if method, m.HasMethod = obj["method"]; m.HasMethod {
		m.Method, m.MethodOK = method.(string)
	}
	m.Params, m.HasParams = obj["params"]
	_, m.HasResult = obj["result"]
	_, m.HasError = obj["error"]
	if errors.Is(m.Err, jsonwire.ErrDuplicateKey) {
		// Parse names only the first repeated key of the document, at any depth; which
		// top-level members repeat needs a look at the top level alone. Rare, so it may cost.
		m.Duplicate, m.DuplicateID = topLevelDuplicates(msg)
	}
	return m
}

// Syntax reports whether the message is not one UTF-8 JSON document.
func (m *Message) Syntax() bool { return errors.Is(m.Err, jsonwire.ErrSyntax) }

// IsNotification reports whether the message is a notification: an object with a string method
// and no id member (JSON-RPC 2.0 §4.1). Such a message is never answered, however else it is
// broken.
func (m *Message) IsNotification() bool { return m.Object != nil && m.MethodOK && !m.HasID }

// IsResponse reports whether the message looks like a response: result or error, no method.
func (m *Message) IsResponse() bool {
	return m.Object != nil && !m.HasMethod && (m.HasResult || m.HasError)
}

// topLevelDuplicates walks the members of a JSON object document (which Parse has accepted) and
// reports whether any top-level key repeats, and whether "id" does.
func topLevelDuplicates(msg []byte) (dup, dupID bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if _, err := dec.Token(); err != nil { // '{'
		return false, false
	}
	seen := make(map[string]bool, 8)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return dup, dupID
		}
		key, _ := tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return dup, dupID
		}
		if seen[key] {
			dup = true
			dupID = dupID || key == "id"
		}
		seen[key] = true
	}
	return dup, dupID
}

// maxSafeInteger bounds integer ids: every JSON implementation represents integers up to 2^53-1
// exactly.
const maxSafeInteger = 1<<53 - 1

// RequestID reads an id member the way JSON-RPC 2.0 allows it: a string (any, "" included) or an
// integer within ±(2^53-1). idJSON is the id as it goes back on the wire and text the id as an
// event id (the string, or the integer's digits); idJSON is nil for anything else, null
// included, which is not a usable id.
func RequestID(v any) (idJSON []byte, text string) {
	switch x := v.(type) {
	case string:
		return jsonwire.AppendString(nil, x), x
	case json.Number:
		s := x.String()
		if strings.ContainsAny(s, ".eE") {
			return nil, ""
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > maxSafeInteger || n < -maxSafeInteger {
			return nil, ""
		}
		return []byte(s), s
	}
	return nil, ""
}
