package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// encoder selects how typed messages are written back to JSON.
//
// The default is the reference's own serialization (serde_json::to_value): defaults filled in,
// the Options serde writes as null written as null, f32 values widened to f64.
//
// lossless writes exactly what a decoded message holds, so an event converts back to the JSON it
// came from: absent defaults stay absent, unset Options are omitted, and f32 values use their
// shortest float32 text ("0.9", not "0.8999999761581421").
type encoder struct {
	lossless bool
}

var (
	serde    = encoder{}
	lossless = encoder{lossless: true}
)

// f32 writes an f32 field.
func (e encoder) f32(x float32) any {
	if !e.lossless {
		return jsonwire.F32(x)
	}
	if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
		return nil // serde_json writes non-finite floats as null
	}
	return json.Number(strconv.FormatFloat(float64(x), 'g', -1, 32))
}

// nullable sets out[key] for an Option field that serde writes as null when None: the value when
// set, null when unset, and nothing at all in lossless mode.
func (e encoder) nullable(out map[string]any, key string, set bool, v func() any) {
	switch {
	case set:
		out[key] = v()
	case !e.lossless:
		out[key] = nil
	}
}

func u64JSON(u uint64) json.Number { return json.Number(strconv.FormatUint(u, 10)) }

func i64JSON(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

// stringsJSON writes a Vec<String>; nil is an empty list.
func stringsJSON(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// nonNil returns m, or an empty message when m is nil, so that optional fields of an absent
// message read as unset.
func nonNil[T any](m *T) *T {
	if m == nil {
		return new(T)
	}
	return m
}

// listJSON writes each element of list with elem, which gets the element's path below name.
func listJSON[T, J any](name string, list []T, elem func(path string, x T) (J, error)) ([]any, error) {
	out := make([]any, len(list))
	for i, x := range list {
		j, err := elem(jsonwire.IndexPath(name, i), x)
		if err != nil {
			return nil, err
		}
		out[i] = j
	}
	return out, nil
}

// putString sets out[key] when s is set (an Option<String> with skip_serializing_if).
func putString(out map[string]any, key string, s *string) {
	if s != nil {
		out[key] = *s
	}
}

// putStrings sets out[key] when l is set (an Option<Vec<String>> with skip_serializing_if).
func putStrings(out map[string]any, key string, l *ahpv1.StringList) {
	if l != nil {
		out[key] = stringsJSON(l.GetValues())
	}
}

// putMap sets out[key] when s is set (an Option<HashMap<String, Value>>).
func putMap(out map[string]any, key string, s *structpb.Struct) {
	if s != nil {
		out[key] = jsonwire.FromStruct(s)
	}
}

// valueJSON writes a required serde_json::Value; unset is null.
func valueJSON(v *structpb.Value) any {
	return jsonwire.FromValue(v)
}

// requiredErr is the error for a message that lacks something its wire form requires.
func requiredErr(path, what string) error {
	return &jsonwire.FieldError{Path: path, Message: fmt.Sprintf("%s is required", what)}
}

// enumWire writes a closed enum by its wire name; the zero value has none and cannot be
// written where the wire requires a value.
func enumWire(path string, e protoreflect.Enum) (string, error) {
	name := names.EnumWireName(e)
	if name == "" {
		return "", &jsonwire.FieldError{Path: path, Message: fmt.Sprintf("%s is unspecified", e.Descriptor().Name())}
	}
	return name, nil
}

// readEnum reads a closed enum of unit variants by wire name.
func readEnum(path string, v any, d protoreflect.EnumDescriptor) (protoreflect.EnumNumber, error) {
	name, err := readUnitEnum(path, v, names.EnumWireNames(d))
	if err != nil {
		return 0, err
	}
	n, _ := names.ParseEnumWire(d, name) // name is one of d's wire names, so this finds it
	return n, nil
}
