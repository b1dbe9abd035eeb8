package hooks

import (
	"errors"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// parseJSON parses one UTF-8 JSON document with jsonwire.Parse; see parsed for its errors.
func parseJSON(data []byte) (any, error) {
	return parsed(jsonwire.Parse(data))
}

// parsed gives the errors of jsonwire.Parse their JSON-RPC codes: a repeated key is a broken
// envelope (-32600), anything else unparsable (-32700). The value is still returned with a
// duplicate-key error so the caller can address a reply.
func parsed(v any, err error) (any, error) {
	if err == nil {
		return v, nil
	}
	fe, _ := jsonwire.AsFieldError(err)
	if errors.Is(err, jsonwire.ErrDuplicateKey) {
		return v, &codedError{field: fe, code: CodeInvalidRequest}
	}
	return nil, &codedError{field: fe, code: CodeParseError}
}
