package jsonwire

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// This file writes the generic JSON trees this package builds (map[string]any, []any, string,
// json.Number, bool, nil, f32) without reflection, in exactly the bytes marshalStd (encoding/json
// with HTML escaping off) gives them: keys sorted bytewise, the same string escapes, json.Number
// as written. It also writes *structpb.Struct and *structpb.Value leaves directly, in the bytes
// fromStruct and fromValue would turn into, so an encoder can hand them over without copying them
// into maps first. A value of any other type makes Append report false, and Marshal then
// leaves the whole value to encoding/json, which is the reference either way
// (hooks.TestAppendJSONMatchesStd, hooks.FuzzAppendJSONString).

// Append appends v to b. ok is false when v holds a value this writer does not handle; b is
// then to be dropped.
func Append(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return AppendString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case json.Number:
		s := string(x)
		if s == "" {
			s = "0" // encoding/json writes the zero Number as 0
		}
		if numberEnd(s, 0) != len(s) {
			return b, false // invalid: encoding/json reports the error
		}
		return append(b, s...), true
	case F32:
		num, _ := x.MarshalJSON() // always a plain number or null, which encoding/json copies as is
		return append(b, num...), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		return appendObject(b, x)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = Append(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case *structpb.Value:
		return appendValue(b, x), true
	case *structpb.Struct:
		return AppendStruct(b, x), true
	}
	return b, false
}

// jsonSortedKeys returns the keys of m sorted, in keys when it has room (the caller's stack array
// in the common small case).
func sortedKeysInto[V any](m map[string]V, keys []string) []string {
	keys = keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func appendObject(b []byte, m map[string]any) ([]byte, bool) {
	return appendMembers(b, m, Append)
}

// appendMembers writes m as a JSON object, members in key order, each value with value.
func appendMembers[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, bool)) (_ []byte, ok bool) {
	var buf [16]string
	b = append(b, '{')
	for i, k := range sortedKeysInto(m, buf[:]) {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		if b, ok = value(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// AppendStruct appends s as a JSON object, in the bytes Marshal(FromStruct(s)) gives: keys
// sorted, nil an empty object.
func AppendStruct(b []byte, s *structpb.Struct) []byte {
	b, _ = appendMembers(b, s.GetFields(), func(b []byte, v *structpb.Value) ([]byte, bool) {
		return appendValue(b, v), true
	})
	return b
}

// appendStructValue writes v as marshalStd(fromValue(v)) would.
func appendValue(b []byte, v *structpb.Value) []byte {
	switch k := v.GetKind().(type) {
	case *structpb.Value_BoolValue:
		return strconv.AppendBool(b, k.BoolValue)
	case *structpb.Value_StringValue:
		return AppendString(b, k.StringValue)
	case *structpb.Value_NumberValue:
		return appendNumber(b, k.NumberValue)
	case *structpb.Value_StructValue:
		return AppendStruct(b, k.StructValue)
	case *structpb.Value_ListValue:
		b = append(b, '[')
		for i, e := range k.ListValue.GetValues() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	}
	return append(b, "null"...) // null, a nil Value and a Value with no kind alike
}

// appendNumber writes a double as jsonNumber renders it.
func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// AppendASCIIEscape appends the JSON escape of the ASCII byte c, one of '"', '\\' or a control
// character: \b \f \n \r \t or \u00XX, as encoding/json and protojson both write them (they
// differ only outside ASCII, so each quoting function keeps its own handling of the rest).
func AppendASCIIEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// AppendString appends s quoted as encoding/json does with HTML escaping off (the audit log's
// encoder uses it too): '"' and '\\' escaped,
// control characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029
// escaped (they end lines in JavaScript).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = AppendASCIIEscape(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonNumberEnd returns the end of the JSON number (RFC 8259) that starts at d[i], or -1 when
// there is none there.
func numberEnd[T string | []byte](d T, i int) int {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return -1
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return -1
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	return i
}

// Marshal writes compact JSON without HTML escaping. Map keys come out sorted, which is the
// order the Harness reference server uses at every depth. The bytes are marshalStd's; the
// reflection-free writer does the work whenever it knows every value in the tree.
func Marshal(v any) ([]byte, error) {
	if out, ok := Append(make([]byte, 0, 512), v); ok {
		return out, nil
	}
	return marshalStd(v)
}

// marshalStd is Marshal done by encoding/json, the reference for Append.
func marshalStd(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
