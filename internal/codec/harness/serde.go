package harness

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
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/limits"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// numKind is how serde_json's parser classifies a JSON number.
type numKind uint8

const (
	numPos   numKind = iota + 1 // integer in [0, 2^64)
	numNeg                      // integer in [-2^63, 0)
	numFloat                    // anything else, including "-0" and out-of-range integers
)

// serdeNumber is a JSON number as serde_json holds it.
type serdeNumber struct {
	kind numKind
	u    uint64
	i    int64
	f    float64
}

// numberOf classifies v if it is a number. json.Number keeps the text, so "1.0" is a float
// and "1" an integer, as in serde_json; a float64 (from a decoder without UseNumber) is treated as
// an integer when it is integral, since its text is gone.
func numberOf(v any) (serdeNumber, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseNumber(string(x)), true
	case float64:
		return numberFromFloat(x), true
	case float32:
		return numberFromFloat(float64(x)), true
	case int:
		return numberFromInt(int64(x)), true
	case int32:
		return numberFromInt(int64(x)), true
	case int64:
		return numberFromInt(x), true
	case uint32:
		return serdeNumber{kind: numPos, u: uint64(x)}, true
	case uint64:
		return serdeNumber{kind: numPos, u: x}, true
	}
	return serdeNumber{}, false
}

// parseNumber mirrors serde_json's parser: integers that fit u64 (or i64 when negative)
// stay integers; "-0", fractions, exponents and larger integers become f64.
func parseNumber(s string) serdeNumber {
	if !strings.ContainsAny(s, ".eE") {
		if strings.HasPrefix(s, "-") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil && i < 0 {
				return serdeNumber{kind: numNeg, i: i}
			}
		} else if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return serdeNumber{kind: numPos, u: u}
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return serdeNumber{kind: numFloat, f: f}
}

func numberFromInt(i int64) serdeNumber {
	if i < 0 {
		return serdeNumber{kind: numNeg, i: i}
	}
	return serdeNumber{kind: numPos, u: uint64(i)}
}

func numberFromFloat(f float64) serdeNumber {
	switch {
	case f != math.Trunc(f) || math.IsInf(f, 0) || (f == 0 && math.Signbit(f)):
		return serdeNumber{kind: numFloat, f: f}
	case f >= 0 && f < 1<<64:
		return serdeNumber{kind: numPos, u: uint64(f)}
	case f < 0 && f >= -(1<<63):
		return serdeNumber{kind: numNeg, i: int64(f)}
	}
	return serdeNumber{kind: numFloat, f: f}
}

// float64 returns the number's value as a float64.
func (n serdeNumber) float64() float64 {
	switch n.kind {
	case numPos:
		return float64(n.u)
	case numNeg:
		return float64(n.i)
	}
	return n.f
}

// unexpected describes v the way serde_json's error messages do ("null", "boolean `true`",
// "integer `5`", "floating point `1.5`", "string \"x\"", "sequence", "map").
func unexpected(v any) string {
	if n, ok := numberOf(v); ok {
		switch n.kind {
		case numPos:
			return "integer `" + strconv.FormatUint(n.u, 10) + "`"
		case numNeg:
			return "integer `" + strconv.FormatInt(n.i, 10) + "`"
		default:
			return "floating point `" + formatF64(n.f) + "`"
		}
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean `" + strconv.FormatBool(x) + "`"
	case string:
		return "string " + rustQuote(echoable(x))
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}

// rustQuote quotes s the way Rust's Debug for str does: \" \\ \n \r \t \0 escaped,
// non-printable and grapheme-extending characters as \u{hex}, everything else verbatim.
func rustQuote(s string) string {
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

// formatF64 prints a float64 the way serde_json 1.0.149 (zmij) does in messages: shortest
// digits, fixed notation for decimal exponents -5..15 with at least one fractional digit, otherwise
// "1.5e+20" / "1e-7".
func formatF64(f float64) string {
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

func invalidType(path string, v any, expected string) *jsonwire.FieldError {
	return &jsonwire.FieldError{Path: path, Message: "invalid type: " + unexpected(v) + ", expected " + expected}
}

func missingField(path, field string) *jsonwire.FieldError {
	return &jsonwire.FieldError{Path: jsonwire.JoinPath(path, field), Message: "missing field `" + field + "`"}
}

func unknownVariant(path, variant string, expected []string) *jsonwire.FieldError {
	var want string
	switch len(expected) {
	case 1:
		want = "`" + expected[0] + "`"
	case 2:
		want = "`" + expected[0] + "` or `" + expected[1] + "`"
	default:
		want = "one of `" + strings.Join(expected, "`, `") + "`"
	}
	return &jsonwire.FieldError{Path: path, Message: "unknown variant `" + echoable(variant) + "`, expected " + want}
}

// echoable is s when it may appear in an error text, else "<redacted>". The texts are the
// reference's serde messages, which quote the offending value; an error travels to the harness,
// its logs and ours, so only a short plain word is quoted back (the misspelt variant or the
// number-as-string the reference's own vectors show) — never something that may be a credential
// or an assignment put in the wrong field (`password=…`, a token, a URL, a path).
func echoable(s string) string {
	if len(s) > 24 {
		return redactedValue
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == ' ', c == '"', c == '.':
		default:
			return redactedValue
		}
	}
	return s
}

// redactedValue stands for a value an error text does not repeat.
const redactedValue = "<redacted>"

// ---- primitives ----

// intType names a Rust integer type and its range.
type intType struct {
	name string
	min  int64
	max  uint64
}

var (
	u32Type   = intType{"u32", 0, math.MaxUint32}
	u64Type   = intType{"u64", 0, math.MaxUint64}
	usizeType = intType{"usize", 0, math.MaxUint64} // the reference runs on 64-bit targets
	i32Type   = intType{"i32", math.MinInt32, math.MaxInt32}
	i64Type   = intType{"i64", math.MinInt64, math.MaxInt64}
)

// readInt reads an integer of type t. Out-of-range integers are "invalid value", anything else
// (floats included) is "invalid type", as serde's primitive visitors report them.
func readInt(path string, v any, t intType) (int64, uint64, error) {
	n, ok := numberOf(v)
	if !ok || n.kind == numFloat {
		return 0, 0, invalidType(path, v, t.name)
	}
	if n.kind == numPos {
		if n.u > t.max {
			return 0, 0, &jsonwire.FieldError{Path: path, Message: "invalid value: " + unexpected(v) + ", expected " + t.name}
		}
		return int64(n.u), n.u, nil // callers read the half that fits t
	}
	if n.i < t.min {
		return 0, 0, &jsonwire.FieldError{Path: path, Message: "invalid value: " + unexpected(v) + ", expected " + t.name}
	}
	return n.i, 0, nil
}

func readUint(path string, v any, t intType) (uint64, error) {
	_, u, err := readInt(path, v, t)
	return u, err
}

func readSigned(path string, v any, t intType) (int64, error) {
	i, _, err := readInt(path, v, t)
	return i, err
}

// readF32 reads an f32: any JSON number, rounded to float32 (Rust's `as f32`).
func readF32(path string, v any) (float32, error) {
	n, ok := numberOf(v)
	if !ok {
		return 0, invalidType(path, v, "f32")
	}
	switch n.kind {
	case numPos:
		return float32(n.u), nil
	case numNeg:
		return float32(n.i), nil
	}
	return float32(n.f), nil
}

func readString(path string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", invalidType(path, v, "a string")
	}
	return s, nil
}

func readBool(path string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, invalidType(path, v, "a boolean")
	}
	return b, nil
}

// readSeq reads a Vec<T>, calling elem for each element in order.
func readSeq(path string, v any, elem func(path string, v any) error) error {
	list, ok := v.([]any)
	if !ok {
		return invalidType(path, v, "a sequence")
	}
	for i, e := range list {
		if err := elem(jsonwire.IndexPath(path, i), e); err != nil {
			return err
		}
	}
	return nil
}

// readSeqInto reads a Vec<T>, appending what elem reads of each element to *dst (the element
// that failed included).
func readSeqInto[T any](path string, v any, dst *[]T, elem func(path string, v any) (T, error)) error {
	return readSeq(path, v, func(p string, v any) error {
		x, err := elem(p, v)
		*dst = append(*dst, x)
		return err
	})
}

func readStrings(path string, v any) ([]string, error) {
	out := []string{}
	if err := readSeqInto(path, v, &out, readString); err != nil {
		return nil, err
	}
	return out, nil
}

func readI64(path string, v any) (int64, error) { return readSigned(path, v, i64Type) }

// readStringList reads a Vec<String> into a StringList.
func readStringList(path string, v any) (*ahpv1.StringList, error) {
	s, err := readStrings(path, v)
	if err != nil {
		return nil, err
	}
	return &ahpv1.StringList{Values: s}, nil
}

// readMap reads a HashMap<String, serde_json::Value> into a Struct.
func readMap(path string, v any) (*structpb.Struct, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidType(path, v, "a map")
	}
	s, err := jsonwire.ToStruct(m)
	if err != nil {
		return nil, &jsonwire.FieldError{Path: path, Message: err.Error()}
	}
	return s, nil
}

// readValue reads a serde_json::Value: anything goes.
func readValue(path string, v any) (*structpb.Value, error) {
	pv, err := jsonwire.ToValue(v)
	if err != nil {
		return nil, &jsonwire.FieldError{Path: path, Message: err.Error()}
	}
	return pv, nil
}

// ---- structs ----

// structField is one field of a derived struct.
type structField struct {
	name string
	// optional fields (Option<T>, #[serde(default)]) may be absent from an object.
	optional bool
	// defaulted fields (#[serde(default)]) may also be absent from the end of a sequence; a plain
	// Option<T> may not, as in serde derive.
	defaulted bool
	decode    func(path string, v any) error
}

// reqEnum is a required closed-enum field, read by its wire name (readEnum).
func reqEnum[E interface {
	~int32
	Descriptor() protoreflect.EnumDescriptor
}](name string, dst *E) structField {
	return structField{name: name, decode: func(p string, v any) error {
		n, err := readEnum(p, v, (*dst).Descriptor())
		*dst = E(n)
		return err
	}}
}

// readStruct reads a derived struct named name from an object (fields in sorted key order,
// then missing fields in declaration order) or from a sequence (fields by position).
func readStruct(path string, v any, name string, fields []structField) error {
	switch x := v.(type) {
	case map[string]any:
		seen := make([]bool, len(fields))
		for _, k := range jsonwire.SortedKeys(x) {
			i := slices.IndexFunc(fields, func(f structField) bool { return f.name == k })
			if i < 0 {
				continue // serde ignores unknown fields
			}
			seen[i] = true
			if err := fields[i].decode(jsonwire.JoinPath(path, k), x[k]); err != nil {
				return err
			}
		}
		for i, f := range fields {
			if !seen[i] && !f.optional {
				return missingField(path, f.name)
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
				return &jsonwire.FieldError{Path: path, Message: fmt.Sprintf("invalid length %d, expected %s", i, expecting)}
			}
			if err := f.decode(jsonwire.IndexPath(path, i), x[i]); err != nil {
				return err
			}
		}
		if len(x) > len(fields) {
			return &jsonwire.FieldError{Path: path, Message: fmt.Sprintf("invalid length %d, expected fewer elements in array", len(x))}
		}
		return nil
	default:
		return invalidType(path, v, "struct "+name)
	}
}

// readInto reads a derived struct into m (see readStruct) and returns m, or nil and the error.
func readInto[T any](m *T, path string, v any, name string, fields []structField) (*T, error) {
	if err := readStruct(path, v, name, fields); err != nil {
		return nil, err
	}
	return m, nil
}

// readParams is readInto for the params or result of a method: numbers out of range anywhere in
// v are rejected first, as serde_json refuses to parse such a message at all.
func readParams[T any](m *T, path string, v any, name string, fields []structField) (*T, error) {
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	return readInto(m, path, v, name, fields)
}

// Field constructors for the common shapes.

// req is a required field read by read.
func req[T any](name string, dst *T, read func(path string, v any) (T, error)) structField {
	return structField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = read(p, v)
		return err
	}}
}

// opt is an Option<T>: absent or null leaves *dst as it is, anything else is stored as read
// returns it.
func opt[T any](name string, dst *T, read func(path string, v any) (T, error)) structField {
	return structField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		x, err := read(p, v)
		if err == nil {
			*dst = x
		}
		return err
	}}
}

func reqString(name string, dst *string) structField { return req(name, dst, readString) }

// reqBounded is a required string of at most max characters (package limits).
func reqBounded(name string, max int, dst *string) structField {
	return req(name, dst, func(p string, v any) (string, error) {
		s, err := readString(p, v)
		if err == nil {
			err = checkLength(p, s, max)
		}
		return s, err
	})
}

// checkLength refuses s when it is longer than max characters; the message names the field as
// serde's do ("field `session_id` must be at most 256 characters").
func checkLength(path, s string, max int) error {
	if limits.Exceeds(s, max) {
		name := path[strings.LastIndexByte(path, '.')+1:]
		return &jsonwire.FieldError{Path: path, Message: fmt.Sprintf("field `%s` must be at most %d characters", name, max)}
	}
	return nil
}

// optString is an Option<String>: absent or null leaves *dst nil.
func optString(name string, dst **string) structField { return opt(name, dst, readStringPtr) }

func reqUint(name string, t intType, dst *uint64) structField {
	return structField{name: name, decode: func(p string, v any) (err error) {
		*dst, err = readUint(p, v, t)
		return err
	}}
}

func optUint(name string, t intType, dst **uint64) structField {
	return structField{name: name, optional: true, decode: func(p string, v any) error {
		if v == nil {
			return nil
		}
		u, err := readUint(p, v, t)
		if err == nil {
			*dst = &u
		}
		return err
	}}
}

func optInt64(name string, dst **int64) structField { return opt(name, dst, readI64Ptr) }

func reqF32(name string, dst *float32) structField { return req(name, dst, readF32) }

func reqBool(name string, dst *bool) structField { return req(name, dst, readBool) }

func reqStrings(name string, dst *[]string) structField { return req(name, dst, readStrings) }

// defaultStrings is a Vec<String> with #[serde(default)].
func defaultStrings(name string, dst *[]string) structField {
	f := reqStrings(name, dst)
	f.optional, f.defaulted = true, true
	return f
}

// optStrings is an Option<Vec<String>> kept as a StringList (nil when absent or null).
func optStrings(name string, dst **ahpv1.StringList) structField {
	return opt(name, dst, readStringList)
}

// optMap is an Option<HashMap<String, Value>>.
func optMap(name string, dst **structpb.Struct) structField { return opt(name, dst, readMap) }

// optValue is an Option<serde_json::Value>: null is None.
func optValue(name string, dst **structpb.Value) structField { return opt(name, dst, readValue) }

// reqValue is a required serde_json::Value: null is a value.
func reqValue(name string, dst **structpb.Value) structField { return req(name, dst, readValue) }

// ---- enums ----

// readUnitEnum reads an externally tagged enum of unit variants: "name", or {"name": null}.
func readUnitEnum(path string, v any, variants []string) (string, error) {
	switch x := v.(type) {
	case string:
		if !slices.Contains(variants, x) {
			return "", unknownVariant(path, x, variants)
		}
		return x, nil
	case map[string]any:
		name, inner, err := singleKey(path, x)
		if err != nil {
			return "", err
		}
		if !slices.Contains(variants, name) {
			return "", unknownVariant(path, name, variants)
		}
		if inner != nil {
			return "", invalidType(jsonwire.JoinPath(path, name), inner, "unit")
		}
		return name, nil
	default:
		return "", invalidType(path, v, "string or map")
	}
}

// pointerTo turns a reader of T into a reader of *T, for the Option<T> fields kept as *T.
func pointerTo[T any](read func(path string, v any) (T, error)) func(path string, v any) (*T, error) {
	return func(p string, v any) (*T, error) {
		x, err := read(p, v)
		return &x, err
	}
}

var (
	readStringPtr = pointerTo(readString)
	readI64Ptr    = pointerTo(readI64)
)

// readNewtypeEnum reads an enum of unit variants plus one newtype variant carrying a string
// (PlanningStrategy::Custom, ReasoningType::Other, ...). It returns either the unit variant name or
// the newtype's string with isNewtype set.
func readNewtypeEnum(path string, v any, units []string, newtype string) (name string, isNewtype bool, err error) {
	all := append(slices.Clone(units), newtype)
	switch x := v.(type) {
	case string:
		switch {
		case x == newtype:
			return "", false, &jsonwire.FieldError{Path: path, Message: "invalid type: unit variant, expected newtype variant"}
		case !slices.Contains(units, x):
			return "", false, unknownVariant(path, x, all)
		}
		return x, false, nil
	case map[string]any:
		key, inner, err := singleKey(path, x)
		if err != nil {
			return "", false, err
		}
		switch {
		case key == newtype:
			s, err := readString(jsonwire.JoinPath(path, key), inner)
			return s, true, err
		case !slices.Contains(units, key):
			return "", false, unknownVariant(path, key, all)
		case inner != nil:
			return "", false, invalidType(jsonwire.JoinPath(path, key), inner, "unit")
		}
		return key, false, nil
	default:
		return "", false, invalidType(path, v, "string or map")
	}
}

// readStructEnum reads an externally tagged enum of struct variants: {"name": {...}}.
func readStructEnum(path string, v any, variants []string) (string, map[string]any, error) {
	switch x := v.(type) {
	case string:
		if !slices.Contains(variants, x) {
			return "", nil, unknownVariant(path, x, variants)
		}
		return "", nil, &jsonwire.FieldError{Path: path, Message: "invalid type: unit variant, expected struct variant"}
	case map[string]any:
		name, inner, err := singleKey(path, x)
		if err != nil {
			return "", nil, err
		}
		if !slices.Contains(variants, name) {
			return "", nil, unknownVariant(path, name, variants)
		}
		obj, ok := inner.(map[string]any)
		if !ok {
			return "", nil, invalidType(jsonwire.JoinPath(path, name), inner, "struct variant")
		}
		return name, obj, nil
	default:
		return "", nil, invalidType(path, v, "string or map")
	}
}

func singleKey(path string, m map[string]any) (string, any, error) {
	if len(m) != 1 {
		return "", nil, &jsonwire.FieldError{Path: path, Message: "invalid value: map, expected map with a single key"}
	}
	for k, v := range m {
		return k, v, nil
	}
	return "", nil, nil
}

// readTagged reads the tag of an internally tagged enum (#[serde(tag = "decision")]) and returns
// the variant name and the object to read the variant's fields from. The tag is checked before any
// other field, as serde buffers the content first.
func readTagged(path string, v any, enumName string, variants []string) (string, map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", nil, invalidType(path, v, "internally tagged enum "+enumName)
	}
	tag, ok := obj["decision"]
	if !ok {
		return "", nil, missingField(path, "decision")
	}
	name, ok := tag.(string)
	if !ok {
		return "", nil, invalidType(jsonwire.JoinPath(path, "decision"), tag, "variant identifier")
	}
	if !slices.Contains(variants, name) {
		return "", nil, unknownVariant(jsonwire.JoinPath(path, "decision"), name, variants)
	}
	return name, obj, nil
}

// ---- numbers out of range ----

// checkNumbers rejects numbers beyond float64 range anywhere in v. serde_json refuses to
// parse such a message at all ("number out of range"), so nothing else is checked first.
func checkNumbers(path string, v any) error {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); errors.Is(err, strconv.ErrRange) {
			return &jsonwire.FieldError{Path: path, Message: "number out of range"}
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return &jsonwire.FieldError{Path: path, Message: "number out of range"}
		}
	case []any:
		for i, e := range x {
			if err := checkNumbers(jsonwire.IndexPath(path, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range jsonwire.SortedKeys(x) {
			if err := checkNumbers(jsonwire.JoinPath(path, k), x[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
