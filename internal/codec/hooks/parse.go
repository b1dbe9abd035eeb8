package hooks

import (
	"errors"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// parseJSON parses one UTF-8 JSON document with jsonwire.Parse and gives its errors their
// JSON-RPC codes: a repeated key is a broken envelope (-32600), anything else unparsable
// (-32700). The value is still returned with a duplicate-key error so the caller can address a
// reply.
func parseJSON(data []byte) (any, error) {
	v, err := jsonwire.Parse(data)
	if err == nil {
		return v, nil
	}
	fe, _ := jsonwire.AsFieldError(err)
	if errors.Is(err, jsonwire.ErrDuplicateKey) {
		return v, &codedError{field: fe, code: CodeInvalidRequest}
	}
	return nil, &codedError{field: fe, code: CodeParseError}
}
