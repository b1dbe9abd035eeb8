package hooks

import (
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

// encoder builds the JSON tree of a Hooks message. plainEncoder builds it from plain JSON values,
// as the exported Encode* functions return it to callers who read the maps. directEncoder leaves
// the Struct and Value messages inside it as they are, for EncodeMessage: jsonwire.Append writes
// them in the same bytes, so copying them into maps first would be wasted work.
type encoder struct {
	direct bool
}

var (
	plainEncoder  = encoder{}
	directEncoder = encoder{direct: true}
)

// base starts an encoded object from a level's unknown fields; typed fields written after it take
// precedence.
func (e encoder) base(unknown *structpb.Struct) map[string]any {
	if !e.direct {
		return jsonwire.FromStruct(unknown)
	}
	fields := unknown.GetFields()
	out := make(map[string]any, len(fields)+4) // room for the typed members of a level
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// object writes a Struct-typed field.
func (e encoder) object(s *structpb.Struct) any {
	if e.direct {
		return s
	}
	return jsonwire.FromStruct(s)
}

// value writes a Value-typed field.
func (e encoder) value(v *structpb.Value) any {
	if e.direct {
		return v
	}
	return jsonwire.FromValue(v)
}
