package convert

// This file reads decoded JSON values the way serde (serde 1.0.228, serde_json 1.0.149, as locked by
// a3s-ahp 2.4.0) deserializes a serde_json::Value into a derived Rust type, so that a Go bridge
// accepts exactly what the reference accepts and fails with the same text.
//
// The reference first parses params into a serde_json::Value, whose objects are BTreeMaps, and only
// then into the typed struct. Object fields are therefore visited in sorted key order (not document
// order), each value is checked as it is visited, and required fields are reported missing
// afterwards in declaration order. Unknown fields are ignored. Structs also accept the sequence
// form (fields by position), as serde derive does.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// harnessNumKind is how serde_json's parser classifies a JSON number.
type harnessNumKind uint8

const (
	harnessNumPos   harnessNumKind = iota + 1 // integer in [0, 2^64)
	harnessNumNeg                             // integer in [-2^63, 0)
	harnessNumFloat                           // anything else, including "-0" and out-of-range integers
)

// harnessNumber is a JSON number as serde_json holds it.
type harnessNumber struct {
	kind harnessNumKind
	u    uint64
	i    int64
	f    float64
}

// harnessNumberOf classifies v if it is a number. json.Number keeps the text, so "1.0" is a float
// and "1" an integer, as in serde_json; a float64 (from a decoder without UseNumber) is treated as
// an integer when it is integral, since its text is gone.
func harnessNumberOf(v any) (harnessNumber, bool) {
	switch x := v.(type) {
	case json.Number:
		return harnessParseNumber(string(x)), true
	case float64:
		return harnessNumberFromFloat(x), true
	case float32:
		return harnessNumberFromFloat(float64(x)), true
	case int:
		return harnessNumberFromInt(int64(x)), true
	case int32:
		return harnessNumberFromInt(int64(x)), true
	case int64:
		return harnessNumberFromInt(x), true
	case uint32:
		return harnessNumber{kind: harnessNumPos, u: uint64(x)}, true
	case uint64:
		return harnessNumber{kind: harnessNumPos, u: x}, true
	}
	return harnessNumber{}, false
}

// harnessParseNumber mirrors serde_json's parser: integers that fit u64 (or i64 when negative)
// stay integers; "-0", fractions, exponents and larger integers become f64.
func harnessParseNumber(s string) harnessNumber {
	if !strings.ContainsAny(s, ".eE") {
		if strings.HasPrefix(s, "-") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil && i < 0 {
				return harnessNumber{kind: harnessNumNeg, i: i}
			}
		} else if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return harnessNumber{kind: harnessNumPos, u: u}
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return harnessNumber{kind: harnessNumFloat, f: f}
}

func harnessNumberFromInt(i int64) harnessNumber {
	if i < 0 {
		return harnessNumber{kind: harnessNumNeg, i: i}
	}
	return harnessNumber{kind: harnessNumPos, u: uint64(i)}
}

func harnessNumberFromFloat(f float64) harnessNumber {
	switch {
	case f != math.Trunc(f) || math.IsInf(f, 0) || (f == 0 && math.Signbit(f)):
		return harnessNumber{kind: harnessNumFloat, f: f}
	case f >= 0 && f < 1<<64:
		return harnessNumber{kind: harnessNumPos, u: uint64(f)}
	case f < 0 && f >= -(1<<63):
		return harnessNumber{kind: harnessNumNeg, i: int64(f)}
	}
	return harnessNumber{kind: harnessNumFloat, f: f}
}

// float64 returns the number's value as a float64.
func (n harnessNumber) float64() float64 {
	switch n.kind {
	case harnessNumPos:
		return float64(n.u)
	case harnessNumNeg:
		return float64(n.i)
	}
	return n.f
}

// harnessUnexpected describes v the way serde_json's error messages do ("null", "boolean `true`",
// "integer `5`", "floating point `1.5`", "string \"x\"", "sequence", "map").
func harnessUnexpected(v any) string {
	if n, ok := harnessNumberOf(v); ok {
		switch n.kind {
		case harnessNumPos:
			return "integer `" + strconv.FormatUint(n.u, 10) + "`"
		case harnessNumNeg:
			return "integer `" + strconv.FormatInt(n.i, 10) + "`"
		default:
			return "floating point `" + harnessFormatF64(n.f) + "`"
		}
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean `" + strconv.FormatBool(x) + "`"
	case string:
		return "string " + harnessRustQuote(x)
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

// harnessRustQuote quotes s the way Rust's Debug for str does: \" \\ \n \r \t \0 escaped,
// non-printable and grapheme-extending characters as \u{hex}, everything else verbatim.
func harnessRustQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			if unicode.IsPrint(r) && !unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend) {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u{%x}`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// harnessFormatF64 prints a float64 the way serde_json 1.0.149 (zmij) does in messages: shortest
// digits, fixed notation for decimal exponents -5..15 with at least one fractional digit, otherwise
// "1.5e+20" / "1e-7".
func harnessFormatF64(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if exp >= -5 && exp <= 15 {
		switch {
		case exp < 0:
			return sign + "0." + strings.Repeat("0", -exp-1) + digits
		case len(digits) <= exp+1:
			return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
		default:
			return sign + digits[:exp+1] + "." + digits[exp+1:]
		}
	}
	out := sign + digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	if exp >= 0 {
		return out + "e+" + strconv.Itoa(exp)
	}
	return out + "e-" + strconv.Itoa(-exp)
}

// ---- serde error constructors ----

func harnessInvalidType(path string, v any, expected string) *FieldError {
	return &FieldError{Path: path, Message: "invalid type: " + harnessUnexpected(v) + ", expected " + expected}
}

func harnessMissing(path, field string) *FieldError {
	return &FieldError{Path: joinPath(path, field), Message: "missing field `" + field + "`"}
}

func harnessUnknownVariant(path, variant string, expected []string) *FieldError {
	var want string
	switch len(expected) {
	case 1:
		want = "`" + expected[0] + "`"
	case 2:
		want = "`" + expected[0] + "` or `" + expected[1] + "`"
	default:
		want = "one of `" + strings.Join(expected, "`, `") + "`"
	}
	return &FieldError{Path: path, Message: "unknown variant `" + variant + "`, expected " + want}
}

// ---- primitives ----

// harnessIntType names a Rust integer type and its range.
type harnessIntType struct {
	name string
	min  int64
	max  uint64
}

var (
	harnessU32   = harnessIntType{"u32", 0, math.MaxUint32}
	harnessU64   = harnessIntType{"u64", 0, math.MaxUint64}
	harnessUsize = harnessIntType{"usize", 0, math.MaxUint64} // the reference runs on 64-bit targets
	harnessI32   = harnessIntType{"i32", math.MinInt32, math.MaxInt32}
	harnessI64   = harnessIntType{"i64", math.MinInt64, math.MaxInt64}
)

// harnessInt reads an integer of type t. Out-of-range integers are "invalid value", anything else
// (floats included) is "invalid type", as serde's primitive visitors report them.
func harnessInt(path string, v any, t harnessIntType) (int64, uint64, error) {
	n, ok := harnessNumberOf(v)
	if !ok || n.kind == harnessNumFloat {
		return 0, 0, harnessInvalidType(path, v, t.name)
	}
	if n.kind == harnessNumPos {
		if n.u > t.max {
			return 0, 0, &FieldError{Path: path, Message: "invalid value: " + harnessUnexpected(v) + ", expected " + t.name}
		}
		return int64(n.u), n.u, nil // callers read the half that fits t
	}
	if n.i < t.min {
		return 0, 0, &FieldError{Path: path, Message: "invalid value: " + harnessUnexpected(v) + ", expected " + t.name}
	}
	return n.i, 0, nil
}

func harnessUint(path string, v any, t harnessIntType) (uint64, error) {
	_, u, err := harnessInt(path, v, t)
	return u, err
}

func harnessSigned(path string, v any, t harnessIntType) (int64, error) {
	i, _, err := harnessInt(path, v, t)
	return i, err
}

// harnessF32 reads an f32: any JSON number, rounded to float32 (Rust's `as f32`).
func harnessF32(path string, v any) (float32, error) {
	n, ok := harnessNumberOf(v)
	if !ok {
		return 0, harnessInvalidType(path, v, "f32")
	}
	switch n.kind {
	case harnessNumPos:
		return float32(n.u), nil
	case harnessNumNeg:
		return float32(n.i), nil
	}
	return float32(n.f), nil
}

func harnessString(path string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", harnessInvalidType(path, v, "a string")
	}
	return s, nil
}

func harnessBool(path string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, harnessInvalidType(path, v, "a boolean")
	}
	return b, nil
}

// harnessSeq reads a Vec<T>, calling elem for each element in order.
func harnessSeq(path string, v any, elem func(path string, v any) error) error {
	list, ok := v.([]any)
	if !ok {
		return harnessInvalidType(path, v, "a sequence")
	}
	for i, e := range list {
		if err := elem(indexPath(path, i), e); err != nil {
			return err
		}
	}
	return nil
}

func harnessStrings(path string, v any) ([]string, error) {
	out := []string{}
	err := harnessSeq(path, v, func(p string, e any) error {
		s, err := harnessString(p, e)
		out = append(out, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// harnessMap reads a HashMap<String, serde_json::Value> into a Struct.
func harnessMap(path string, v any) (*structpb.Struct, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, harnessInvalidType(path, v, "a map")
	}
	s, err := toStruct(m)
	if err != nil {
		return nil, &FieldError{Path: path, Message: err.Error()}
	}
	return s, nil
}

// harnessValue reads a serde_json::Value: anything goes.
func harnessValue(path string, v any) (*structpb.Value, error) {
	pv, err := toValue(v)
	if err != nil {
		return nil, &FieldError{Path: path, Message: err.Error()}
	}
	return pv, nil
}

// ---- structs ----

// harnessField is one field of a derived struct.
type harnessField struct {
	name string
	// optional fields (Option<T>, #[serde(default)]) may be absent from an object.
	optional bool
	// defaulted fields (#[serde(default)]) may also be absent from the end of a sequence; a plain
	// Option<T> may not, as in serde derive.
	defaulted bool
	decode    func(path string, v any) error
}

// harnessStruct reads a derived struct named name from an object (fields in sorted key order,
// then missing fields in declaration order) or from a sequence (fields by position).
func harnessStruct(path string, v any, name string, fields []harnessField) error {
	switch x := v.(type) {
	case map[string]any:
		seen := make([]bool, len(fields))
		for _, k := range harnessSortedKeys(x) {
			i := slices.IndexFunc(fields, func(f harnessField) bool { return f.name == k })
			if i < 0 {
				continue // serde ignores unknown fields
			}
			seen[i] = true
			if err := fields[i].decode(joinPath(path, k), x[k]); err != nil {
				return err
			}
		}
		for i, f := range fields {
			if !seen[i] && !f.optional {
				return harnessMissing(path, f.name)
			}
		}
		return nil
	case []any:
		expecting := fmt.Sprintf("struct %s with %d elements", name, len(fields))
		if len(fields) == 1 {
			expecting = fmt.Sprintf("struct %s with 1 element", name)
		}
		for i, f := range fields {
			if i >= len(x) {
				if f.defaulted {
					continue
				}
				return &FieldError{Path: path, Message: fmt.Sprintf("invalid length %d, expected %s", i, expecting)}
			}
			if err := f.decode(indexPath(path, i), x[i]); err != nil {
				return err
			}
		}
		if len(x) > len(fields) {
			return &FieldError{Path: path, Message: fmt.Sprintf("invalid length %d, expected fewer elements in array", len(x))}
		}
		return nil
	default:
		return harnessInvalidType(path, v, "struct "+name)
	}
}

func harnessSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Field constructors for the common shapes.

func harnessReqString(name string, dst *string) harnessField {
	return harnessField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = harnessString(p, v)
		return err
	}}
}

// harnessOptString is an Option<String>: absent or null leaves *dst nil.
func harnessOptString(name string, dst **string) harnessField {
	return harnessField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		s, err := harnessString(p, v)
		if err == nil {
			*dst = &s
		}
		return err
	}}
}

func harnessReqUint(name string, t harnessIntType, dst *uint64) harnessField {
	return harnessField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = harnessUint(p, v, t)
		return err
	}}
}

func harnessOptUint(name string, t harnessIntType, dst **uint64) harnessField {
	return harnessField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		u, err := harnessUint(p, v, t)
		if err == nil {
			*dst = &u
		}
		return err
	}}
}

func harnessOptInt64(name string, dst **int64) harnessField {
	return harnessField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		i, err := harnessSigned(p, v, harnessI64)
		if err == nil {
			*dst = &i
		}
		return err
	}}
}

func harnessReqF32(name string, dst *float32) harnessField {
	return harnessField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = harnessF32(p, v)
		return err
	}}
}

func harnessReqBool(name string, dst *bool) harnessField {
	return harnessField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = harnessBool(p, v)
		return err
	}}
}

func harnessReqStrings(name string, dst *[]string) harnessField {
	return harnessField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = harnessStrings(p, v)
		return err
	}}
}

// harnessDefaultStrings is a Vec<String> with #[serde(default)].
func harnessDefaultStrings(name string, dst *[]string) harnessField {
	f := harnessReqStrings(name, dst)
	f.optional, f.defaulted = true, true
	return f
}

// harnessOptStrings is an Option<Vec<String>> kept as a StringList (nil when absent or null).
func harnessOptStrings(name string, dst **ahpv1.StringList) harnessField {
	return harnessField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		s, err := harnessStrings(p, v)
		if err == nil {
			*dst = &ahpv1.StringList{Values: s}
		}
		return err
	}}
}

// harnessOptMap is an Option<HashMap<String, Value>>.
func harnessOptMap(name string, dst **structpb.Struct) harnessField {
	return harnessField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		s, err := harnessMap(p, v)
		if err == nil {
			*dst = s
		}
		return err
	}}
}

// harnessOptValue is an Option<serde_json::Value>: null is None.
func harnessOptValue(name string, dst **structpb.Value) harnessField {
	return harnessField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		pv, err := harnessValue(p, v)
		if err == nil {
			*dst = pv
		}
		return err
	}}
}

// harnessReqValue is a required serde_json::Value: null is a value.
func harnessReqValue(name string, dst **structpb.Value) harnessField {
	return harnessField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = harnessValue(p, v)
		return err
	}}
}

// ---- enums ----

// harnessUnitEnum reads an externally tagged enum of unit variants: "name", or {"name": null}.
func harnessUnitEnum(path string, v any, variants []string) (string, error) {
	switch x := v.(type) {
	case string:
		if !slices.Contains(variants, x) {
			return "", harnessUnknownVariant(path, x, variants)
		}
		return x, nil
	case map[string]any:
		name, inner, err := harnessSingleKey(path, x)
		if err != nil {
			return "", err
		}
		if !slices.Contains(variants, name) {
			return "", harnessUnknownVariant(path, name, variants)
		}
		if inner != nil {
			return "", harnessInvalidType(joinPath(path, name), inner, "unit")
		}
		return name, nil
	default:
		return "", harnessInvalidType(path, v, "string or map")
	}
}

// harnessNewtypeEnum reads an enum of unit variants plus one newtype variant carrying a string
// (PlanningStrategy::Custom, ReasoningType::Other, ...). It returns either the unit variant name or
// the newtype's string with isNewtype set.
func harnessNewtypeEnum(path string, v any, units []string, newtype string) (name string, isNewtype bool, err error) {
	all := append(slices.Clone(units), newtype)
	switch x := v.(type) {
	case string:
		switch {
		case x == newtype:
			return "", false, &FieldError{Path: path, Message: "invalid type: unit variant, expected newtype variant"}
		case !slices.Contains(units, x):
			return "", false, harnessUnknownVariant(path, x, all)
		}
		return x, false, nil
	case map[string]any:
		key, inner, err := harnessSingleKey(path, x)
		if err != nil {
			return "", false, err
		}
		switch {
		case key == newtype:
			s, err := harnessString(joinPath(path, key), inner)
			return s, true, err
		case !slices.Contains(units, key):
			return "", false, harnessUnknownVariant(path, key, all)
		case inner != nil:
			return "", false, harnessInvalidType(joinPath(path, key), inner, "unit")
		}
		return key, false, nil
	default:
		return "", false, harnessInvalidType(path, v, "string or map")
	}
}

// harnessStructEnum reads an externally tagged enum of struct variants: {"name": {...}}.
func harnessStructEnum(path string, v any, variants []string) (string, map[string]any, error) {
	switch x := v.(type) {
	case string:
		if !slices.Contains(variants, x) {
			return "", nil, harnessUnknownVariant(path, x, variants)
		}
		return "", nil, &FieldError{Path: path, Message: "invalid type: unit variant, expected struct variant"}
	case map[string]any:
		name, inner, err := harnessSingleKey(path, x)
		if err != nil {
			return "", nil, err
		}
		if !slices.Contains(variants, name) {
			return "", nil, harnessUnknownVariant(path, name, variants)
		}
		obj, ok := inner.(map[string]any)
		if !ok {
			return "", nil, harnessInvalidType(joinPath(path, name), inner, "struct variant")
		}
		return name, obj, nil
	default:
		return "", nil, harnessInvalidType(path, v, "string or map")
	}
}

func harnessSingleKey(path string, m map[string]any) (string, any, error) {
	if len(m) != 1 {
		return "", nil, &FieldError{Path: path, Message: "invalid value: map, expected map with a single key"}
	}
	for k, v := range m {
		return k, v, nil
	}
	return "", nil, nil
}

// harnessTagged reads the tag of an internally tagged enum (#[serde(tag = "decision")]) and returns
// the variant name and the object to read the variant's fields from. The tag is checked before any
// other field, as serde buffers the content first.
func harnessTagged(path string, v any, enumName string, variants []string) (string, map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", nil, harnessInvalidType(path, v, "internally tagged enum "+enumName)
	}
	tag, ok := obj["decision"]
	if !ok {
		return "", nil, harnessMissing(path, "decision")
	}
	name, ok := tag.(string)
	if !ok {
		return "", nil, harnessInvalidType(joinPath(path, "decision"), tag, "variant identifier")
	}
	if !slices.Contains(variants, name) {
		return "", nil, harnessUnknownVariant(joinPath(path, "decision"), name, variants)
	}
	return name, obj, nil
}

// ---- numbers out of range ----

// harnessCheckNumbers rejects numbers beyond float64 range anywhere in v. serde_json refuses to
// parse such a message at all ("number out of range"), so nothing else is checked first.
func harnessCheckNumbers(path string, v any) error {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); errors.Is(err, strconv.ErrRange) {
			return &FieldError{Path: path, Message: "number out of range"}
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return &FieldError{Path: path, Message: "number out of range"}
		}
	case []any:
		for i, e := range x {
			if err := harnessCheckNumbers(indexPath(path, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range harnessSortedKeys(x) {
			if err := harnessCheckNumbers(joinPath(path, k), x[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
