package jsonrpc

import (
	"bytes"
	"strconv"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// NullID is the id of an answer to a request whose id could not be read.
var NullID = []byte("null")

// ErrorResponse writes {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}.
func ErrorResponse(idJSON []byte, code int, message string) []byte {
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

// ResultResponse writes {"jsonrpc":"2.0","id":<id>,"result":<result>}.
func ResultResponse(idJSON, result []byte) []byte {
	var b bytes.Buffer
	b.Grow(40 + len(idJSON) + len(result))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(idJSON)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString(`}`)
	return b.Bytes()
}
