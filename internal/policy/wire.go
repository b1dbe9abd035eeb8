package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// This file holds the one mapping between ahp.v1 messages and the plain, Harness-shaped values
// that policies see in CEL (payload.*, event.harness.context) and that test files write
// (event.payload, event.tool, ...). Keeping both directions here keeps them in step:
//
//   - field names are the proto names, which are the Harness snake_case wire names;
//   - closed enums are their wire names ("llm_token_limit"; "" for unspecified);
//   - built-in-or-custom choices (PlanningStrategy, ReasoningType, RateLimitType,
//     ConfirmationType) are one string: the known wire name or the custom text;
//   - optional-list wrappers (StringList, FactList, ...) are plain lists;
//   - google.protobuf.Struct/Value/ListValue are JSON;
//   - fields with presence that are unset are absent, so `has(payload.x)` tells.

// shape classifies a message descriptor for the mapping.
type shape int

const (
	shapeObject shape = iota
	shapeStruct
	shapeValue
	shapeListValue
	shapeListWrapper // a message whose only field is `repeated values`
	shapeChoice      // oneof {Enum known; string custom|other}, nothing else
)

var shapes sync.Map // protoreflect.FullName -> shape

func shapeOf(md protoreflect.MessageDescriptor) shape {
	if s, ok := shapes.Load(md.FullName()); ok {
		return s.(shape)
	}
	s := classify(md)
	shapes.Store(md.FullName(), s)
	return s
}

func classify(md protoreflect.MessageDescriptor) shape {
	switch md.FullName() {
	case "google.protobuf.Struct":
		return shapeStruct
	case "google.protobuf.Value":
		return shapeValue
	case "google.protobuf.ListValue":
		return shapeListValue
	}
	fields := md.Fields()
	if fields.Len() == 1 && fields.Get(0).Name() == "values" && fields.Get(0).IsList() {
		return shapeListWrapper
	}
	if fields.Len() == 2 && md.Oneofs().Len() == 1 {
		known, custom := fields.ByName("known"), choiceCustomField(md)
		if known != nil && known.Kind() == protoreflect.EnumKind && custom != nil &&
			custom.Kind() == protoreflect.StringKind {
			return shapeChoice
		}
	}
	return shapeObject
}

// choiceCustomField is the free-text arm of a choice ("custom", or "other" for ReasoningType).
func choiceCustomField(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByName("custom"); fd != nil {
		return fd
	}
	return md.Fields().ByName("other")
}

// ---- proto -> CEL ----

// messageVal converts a message to its CEL value.
func messageVal(adapter types.Adapter, m protoreflect.Message) ref.Val {
	switch shapeOf(m.Descriptor()) {
	case shapeStruct:
		return types.NewJSONStruct(adapter, m.Interface().(*structpb.Struct))
	case shapeValue:
		return jsonVal(adapter, m.Interface().(*structpb.Value))
	case shapeListValue:
		return types.NewJSONList(adapter, m.Interface().(*structpb.ListValue))
	case shapeListWrapper:
		fd := m.Descriptor().Fields().Get(0)
		return listVal(adapter, fd, m.Get(fd).List())
	case shapeChoice:
		return types.String(choiceString(m))
	}
	return types.NewMap(adapter, messageFields(adapter, m))
}

// messageFields converts a message to a map of its fields; unset fields with presence are absent.
func messageFields(adapter types.Adapter, m protoreflect.Message) map[string]ref.Val {
	fields := m.Descriptor().Fields()
	out := make(map[string]ref.Val, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			out[string(fd.Name())] = listVal(adapter, fd, v.List())
		case fd.IsMap():
			out[string(fd.Name())] = mapVal(adapter, fd, v.Map())
		default:
			out[string(fd.Name())] = scalarVal(adapter, fd, v)
		}
	}
	return out
}

func listVal(adapter types.Adapter, fd protoreflect.FieldDescriptor, l protoreflect.List) ref.Val {
	elems := make([]ref.Val, l.Len())
	for i := range l.Len() {
		elems[i] = scalarVal(adapter, fd, l.Get(i))
	}
	return types.NewRefValList(adapter, elems)
}

func mapVal(adapter types.Adapter, fd protoreflect.FieldDescriptor, m protoreflect.Map) ref.Val {
	out := make(map[string]ref.Val, m.Len())
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		out[k.String()] = scalarVal(adapter, fd.MapValue(), v)
		return true
	})
	return types.NewMap(adapter, out)
}

func scalarVal(adapter types.Adapter, fd protoreflect.FieldDescriptor, v protoreflect.Value) ref.Val {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return types.Bool(v.Bool())
	case protoreflect.EnumKind:
		vd := fd.Enum().Values().ByNumber(v.Enum())
		if vd == nil || vd.Number() == 0 {
			return types.String("")
		}
		return types.String(names.EnumValueWireName(vd))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return types.Int(v.Int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return uintVal(v.Uint())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return types.Double(v.Float())
	case protoreflect.StringKind:
		return types.String(v.String())
	case protoreflect.BytesKind:
		return types.Bytes(v.Bytes())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageVal(adapter, v.Message())
	}
	return types.NullValue
}

// choiceString gives the known wire name or the custom text of a choice message.
func choiceString(m protoreflect.Message) string {
	fd := m.WhichOneof(m.Descriptor().Oneofs().Get(0))
	switch {
	case fd == nil:
		return ""
	case fd.Kind() == protoreflect.EnumKind:
		vd := fd.Enum().Values().ByNumber(m.Get(fd).Enum())
		if vd == nil || vd.Number() == 0 {
			return ""
		}
		return names.EnumValueWireName(vd)
	default:
		return m.Get(fd).String()
	}
}

// ---- YAML -> proto ----

// decodeMessage fills m from a YAML-decoded value following the same conventions; at names the
// position for errors ("event.tool.kind"). Unknown fields are errors.
func decodeMessage(m protoreflect.Message, v any, at string) error {
	md := m.Descriptor()
	switch shapeOf(md) {
	case shapeStruct, shapeValue, shapeListValue:
		jv, err := jsonValue(v, at)
		if err != nil {
			return err
		}
		var src proto.Message = jv
		switch shapeOf(md) {
		case shapeStruct:
			if jv.GetStructValue() == nil {
				return fmt.Errorf("%s: want an object, got %s", at, describe(v))
			}
			src = jv.GetStructValue()
		case shapeListValue:
			if jv.GetListValue() == nil {
				return fmt.Errorf("%s: want a list, got %s", at, describe(v))
			}
			src = jv.GetListValue()
		}
		proto.Merge(m.Interface(), src)
		return nil
	case shapeListWrapper:
		fd := md.Fields().Get(0)
		return decodeField(m, fd, v, at)
	case shapeChoice:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %s", at, describe(v))
		}
		known := md.Fields().ByName("known")
		if n, ok := names.ParseEnumWire(known.Enum(), s); ok {
			m.Set(known, protoreflect.ValueOfEnum(n))
		} else {
			m.Set(choiceCustomField(md), protoreflect.ValueOfString(s))
		}
		return nil
	}
	if v == nil {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want an object, got %s", at, describe(v))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic errors
	for _, k := range keys {
		fd := md.Fields().ByName(protoreflect.Name(k))
		if fd == nil {
			return fmt.Errorf("%s: unknown field %q (known: %s)", at, k, fieldNames(md))
		}
		if oo := fd.ContainingOneof(); oo != nil && !oo.IsSynthetic() {
			if other := m.WhichOneof(oo); other != nil {
				return fmt.Errorf("%s: %q and %q are alternatives; give one", at, other.Name(), k)
			}
		}
		if err := decodeField(m, fd, obj[k], at+"."+k); err != nil {
			return err
		}
	}
	return nil
}

func fieldNames(md protoreflect.MessageDescriptor) string {
	var names []string
	for i := range md.Fields().Len() {
		names = append(names, string(md.Fields().Get(i).Name()))
	}
	return strings.Join(names, ", ")
}

func decodeField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any, at string) error {
	switch {
	case fd.IsList():
		if v == nil {
			return nil
		}
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list, got %s", at, describe(v))
		}
		l := m.Mutable(fd).List()
		for i, item := range items {
			pv, err := decodeValue(l.NewElement, fd, item, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return err
			}
			l.Append(pv)
		}
		return nil
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", at, describe(v))
		}
		mp := m.Mutable(fd).Map()
		for k, item := range obj {
			pv, err := decodeValue(mp.NewValue, fd.MapValue(), item, at+"."+k)
			if err != nil {
				return err
			}
			mp.Set(protoreflect.ValueOfString(k).MapKey(), pv)
		}
		return nil
	}
	pv, err := decodeValue(func() protoreflect.Value { return m.NewField(fd) }, fd, v, at)
	if err != nil {
		return err
	}
	m.Set(fd, pv)
	return nil
}

// decodeValue converts one scalar or message; newMsg makes an empty message of the field's type.
func decodeValue(newMsg func() protoreflect.Value, fd protoreflect.FieldDescriptor, v any, at string) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		mv := newMsg()
		if err := decodeMessage(mv.Message(), v, at); err != nil {
			return protoreflect.Value{}, err
		}
		return mv, nil
	case protoreflect.BoolKind:
		b, ok := v.(bool)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want true or false, got %s", at, describe(v))
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.StringKind:
		s, ok := v.(string)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want a string, got %s", at, describe(v))
		}
		return protoreflect.ValueOfString(s), nil
	case protoreflect.BytesKind:
		s, ok := v.(string)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want a string, got %s", at, describe(v))
		}
		return protoreflect.ValueOfBytes([]byte(s)), nil
	case protoreflect.EnumKind:
		s, ok := v.(string)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want a string, got %s", at, describe(v))
		}
		n, ok := names.ParseEnumWire(fd.Enum(), s)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: unknown value %q (known: %s)", at, s,
				strings.Join(names.EnumWireNames(fd.Enum()), ", "))
		}
		return protoreflect.ValueOfEnum(n), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f, ok := toFloat(v)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want a number, got %s", at, describe(v))
		}
		if fd.Kind() == protoreflect.FloatKind {
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		i, ok := toInt(v)
		if !ok || i < math.MinInt32 || i > math.MaxInt32 {
			return protoreflect.Value{}, fmt.Errorf("%s: want a 32-bit integer, got %s", at, describe(v))
		}
		return protoreflect.ValueOfInt32(int32(i)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		i, ok := toInt(v)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want an integer, got %s", at, describe(v))
		}
		return protoreflect.ValueOfInt64(i), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		u, ok := toUint(v)
		if !ok || u > math.MaxUint32 {
			return protoreflect.Value{}, fmt.Errorf("%s: want a 32-bit unsigned integer, got %s", at, describe(v))
		}
		return protoreflect.ValueOfUint32(uint32(u)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		u, ok := toUint(v)
		if !ok {
			return protoreflect.Value{}, fmt.Errorf("%s: want an unsigned integer, got %s", at, describe(v))
		}
		return protoreflect.ValueOfUint64(u), nil
	}
	return protoreflect.Value{}, fmt.Errorf("%s: unsupported field kind %s", at, fd.Kind())
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

func toUint(v any) (uint64, bool) {
	switch n := v.(type) {
	case int:
		if n >= 0 {
			return uint64(n), true
		}
	case int64:
		if n >= 0 {
			return uint64(n), true
		}
	case uint64:
		return n, true
	case float64:
		if n == math.Trunc(n) && n >= 0 && n < math.MaxUint64 {
			return uint64(n), true
		}
	}
	return 0, false
}

// jsonValue converts a YAML-decoded value to a JSON value; YAML maps must have string keys.
func jsonValue(v any, at string) (*structpb.Value, error) {
	switch x := v.(type) {
	case nil:
		return structpb.NewNullValue(), nil
	case bool:
		return structpb.NewBoolValue(x), nil
	case string:
		return structpb.NewStringValue(x), nil
	case int, int64, uint64, float64:
		f, _ := toFloat(x)
		return structpb.NewNumberValue(f), nil
	case []any:
		l := &structpb.ListValue{Values: make([]*structpb.Value, len(x))}
		for i, item := range x {
			jv, err := jsonValue(item, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			l.Values[i] = jv
		}
		return structpb.NewListValue(l), nil
	case map[string]any:
		s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(x))}
		for k, item := range x {
			jv, err := jsonValue(item, at+"."+k)
			if err != nil {
				return nil, err
			}
			s.Fields[k] = jv
		}
		return structpb.NewStructValue(s), nil
	case map[any]any:
		return nil, fmt.Errorf("%s: object keys must be strings", at)
	}
	return nil, fmt.Errorf("%s: %s is not a JSON value", at, describe(v))
}

// jsonObject converts a YAML mapping to a JSON object.
func jsonObject(m map[string]any, at string) (*structpb.Struct, error) {
	jv, err := jsonValue(m, at)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return &structpb.Struct{}, nil
	}
	return jv.GetStructValue(), nil
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, map[any]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprintf("%v", v)
}
