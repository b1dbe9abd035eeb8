package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// JSON-RPC 2.0 framing shared by the two dialects: reading the envelope of an Agent Harness
// message (Agent Hooks messages are read whole by internal/codec/hooks), and writing responses in
// the reference's member order (jsonrpc, id, result|error; code, message).

// maxSafeInteger bounds integer ids, as the Agent Hooks Protocol bounds them: every JSON
// implementation represents integers up to 2^53-1 exactly.
const maxSafeInteger = 1<<53 - 1

// envelope is one JSON-RPC object as the Agent Harness side reads it. Members other than these
// are ignored, as serde ignores them.
type envelope struct {
	hasJSONRPC bool
	jsonrpc    any

	hasID bool
	// idJSON is the id as it goes back on the wire; nil when the id member is not a valid id
	// (null, a fraction, an object, ...).
	idJSON []byte
	// idText is the id as an event id: the string, or the integer's digits.
	idText string

	hasMethod bool
	method    string // "" unless the method member is a string
	methodOK  bool   // the method member is a string

	hasParams bool
	params    any // decoded with json.Number

	hasResult, hasError bool
	duplicate           bool // some top-level member appears twice
	duplicateID         bool // the id member appears twice: no id can be trusted
}

// envelopeError says why a message has no readable envelope.
type envelopeError int

const (
	envelopeOK        envelopeError = iota
	envelopeParse                   // not UTF-8 JSON text (-32700)
	envelopeNotObject               // valid JSON, but an array (a batch) or a scalar (-32600)
)

// isNotification reports whether the message is a notification: a string method and no id
// member (JSON-RPC 2.0 §4.1). Such a message is never answered, however else it is broken.
func (e *envelope) isNotification() bool { return e.methodOK && !e.hasID }

// isResponse reports whether the message looks like a response (result or error, no method).
func (e *envelope) isResponse() bool { return !e.hasMethod && (e.hasResult || e.hasError) }

// isNotification reports whether msg is a JSON object with a string method and no id member.
func isNotification(msg []byte) bool {
	env, problem := readEnvelope(msg)
	return problem == envelopeOK && env.isNotification()
}

// readEnvelope parses msg's top level. Values are decoded with UseNumber, so integers keep their
// exact text for the typed readers in internal/codec/harness.
func readEnvelope(msg []byte) (*envelope, envelopeError) {
	if !utf8.Valid(msg) || !json.Valid(msg) {
		return nil, envelopeParse
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, envelopeParse
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, envelopeNotObject
	}
	env := &envelope{}
	seen := make(map[string]bool, 4)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, envelopeParse
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, envelopeParse
		}
		if seen[key] {
			env.duplicate = true
			env.duplicateID = env.duplicateID || key == "id"
		}
		seen[key] = true
		switch key {
		case "jsonrpc":
			env.hasJSONRPC, env.jsonrpc = true, v
		case "id":
			env.hasID = true
			env.idJSON, env.idText = readID(v)
		case "method":
			env.hasMethod = true
			env.method, env.methodOK = v.(string)
		case "params":
			env.hasParams, env.params = true, v
		case "result":
			env.hasResult = true
		case "error":
			env.hasError = true
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, envelopeParse
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, envelopeParse
	}
	return env, envelopeOK
}

// readID accepts a string (any, "" included, as the reference does) or an integer within
// ±(2^53-1), which JSON-RPC 2.0 allows and the reference does not. Everything else, null
// included, is not a usable id.
func readID(v any) (idJSON []byte, text string) {
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

var nullID = []byte("null")

// errorBody writes {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}.
func errorBody(idJSON []byte, code int, message string) []byte {
	var b bytes.Buffer
	b.Grow(64 + len(message))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idJSON)
	b.WriteString(`,"error":{"code":`)
	b.WriteString(strconv.Itoa(code))
	b.WriteString(`,"message":`)
	b.Write(jsonwire.AppendString(nil, message))
	b.WriteString(`}}`)
	return b.Bytes()
}

// resultBody writes {"jsonrpc":"2.0","id":<id>,"result":<result>}.
func resultBody(idJSON, result []byte) []byte {
	var b bytes.Buffer
	b.Grow(40 + len(idJSON) + len(result))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idJSON)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString(`}`)
	return b.Bytes()
}
