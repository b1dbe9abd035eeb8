package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
)

// Decode parses one JSON document into generic Go values, keeping numbers as json.Number so
// integers keep their exact text until a typed field reads them. Trailing data is an error.
func Decode(data []byte) (any, error) {
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

// Marshal writes compact JSON without HTML escaping. Map keys come out sorted, which is the
// order the Harness reference server uses at every depth. The bytes are MarshalStd's; the
// reflection-free writer does the work whenever it knows every value in the tree.
func Marshal(v any) ([]byte, error) {
	if out, ok := Append(make([]byte, 0, 512), v); ok {
		return out, nil
	}
	return MarshalStd(v)
}

// MarshalStd is Marshal done by encoding/json, the reference for Append.
func MarshalStd(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// f32 is a float carried as an f32 on the Harness wire. It marshals the way serde_json prints an
// f32 widened to f64: the shortest float64 text, always with a fraction ("1.0", "0.949999988079071").
type F32 float32

func (f F32) MarshalJSON() ([]byte, error) {
	return FormatFloat(float64(float32(f)))
}

// formatFloat prints a float64 the way serde_json (ryu) does.
func FormatFloat(v float64) ([]byte, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil // serde_json writes non-finite floats as null
	}
	abs := math.Abs(v)
	if abs != 0 && (abs < 1e-5 || abs >= 1e16) {
		s := strconv.FormatFloat(v, 'e', -1, 64)
		s = trimExponent(s)
		return []byte(s), nil
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".e") {
		s += ".0"
	}
	return []byte(s), nil
}

func trimExponent(s string) string {
	// Go writes "1e-07" and "1.5e+20"; serde_json writes "1e-7" and "1.5e+20": keep the sign,
	// drop leading zeros of the exponent.
	mant, exp, ok := strings.Cut(s, "e")
	if !ok || exp == "" {
		return s
	}
	sign := exp[:1]
	digits := strings.TrimLeft(exp[1:], "0")
	if digits == "" {
		digits = "0"
	}
	return mant + "e" + sign + digits
}

// toValue converts a decoded JSON value into a structpb.Value. Numbers become doubles, as
// google.protobuf.Value requires; integers beyond 2^53 lose precision there.
func ToValue(v any) (*structpb.Value, error) {
	switch x := v.(type) {
	case nil:
		return structpb.NewNullValue(), nil
	case bool:
		return structpb.NewBoolValue(x), nil
	case string:
		return structpb.NewStringValue(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s out of range", x)
		}
		return structpb.NewNumberValue(f), nil
	case float64:
		return structpb.NewNumberValue(x), nil
	case map[string]any:
		s, err := ToStruct(x)
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	case []any:
		l := &structpb.ListValue{Values: make([]*structpb.Value, 0, len(x))}
		for _, e := range x {
			ev, err := ToValue(e)
			if err != nil {
				return nil, err
			}
			l.Values = append(l.Values, ev)
		}
		return structpb.NewListValue(l), nil
	default:
		return nil, fmt.Errorf("unsupported JSON value of type %T", v)
	}
}

// toStruct converts a decoded JSON object into a structpb.Struct.
func ToStruct(m map[string]any) (*structpb.Struct, error) {
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
	for k, v := range m {
		pv, err := ToValue(v)
		if err != nil {
			return nil, err
		}
		s.Fields[k] = pv
	}
	return s, nil
}

// fromValue converts a structpb.Value back into generic JSON values. Integral doubles are written
// as integers so that {"n": 3} round-trips as 3, not 3.0. A nil Value is JSON null.
func FromValue(v *structpb.Value) any {
	if v == nil {
		return nil
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return nil
	case *structpb.Value_BoolValue:
		return k.BoolValue
	case *structpb.Value_StringValue:
		return k.StringValue
	case *structpb.Value_NumberValue:
		return FromNumber(k.NumberValue)
	case *structpb.Value_StructValue:
		return FromStruct(k.StructValue)
	case *structpb.Value_ListValue:
		out := make([]any, 0, len(k.ListValue.GetValues()))
		for _, e := range k.ListValue.GetValues() {
			out = append(out, FromValue(e))
		}
		return out
	default:
		return nil
	}
}

// fromStruct converts a structpb.Struct back into a JSON object; nil gives an empty object.
func FromStruct(s *structpb.Struct) map[string]any {
	out := make(map[string]any, len(s.GetFields()))
	for k, v := range s.GetFields() {
		out[k] = FromValue(v)
	}
	return out
}

// jsonNumber renders a double as the shortest JSON number, integral values without a fraction.
func FromNumber(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return json.Number(strconv.FormatInt(int64(f), 10))
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}
