package jsonwire

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/types/known/structpb"
)

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
