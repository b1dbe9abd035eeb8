package convert

import (
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// HooksProtocolVersion is the Agent Hooks Protocol version this codec implements, as it appears in
// protocolVersion on the wire. Matching is exact.
const HooksProtocolVersion = "0.1"

// hooksReverseDNSPattern is the reverse-DNS name pattern of the v0.1 schemas
// (extensions.schema.json), used for extension keys, deny codes, extension effects and backend
// ids. hooksIsReverseDNS matches it by hand; a test holds the two together.
const hooksReverseDNSPattern = `^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`

// hooksIsReverseDNS reports whether s matches hooksReverseDNSPattern: two or more dot-separated
// labels, each a letter followed by letters, digits, '_' or '-'. It runs for every extension key
// of every message, where the regexp engine costs more than the rest of the check.
func hooksIsReverseDNS(s string) bool {
	labels, labelStart := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		switch {
		case labelStart:
			if !letter {
				return false
			}
			labels++
			labelStart = false
		case c == '.':
			labelStart = true
		case !letter && !(c >= '0' && c <= '9') && c != '_' && c != '-':
			return false
		}
	}
	return labels >= 2 && !labelStart
}

// hooksMaxSafeInteger bounds integers (ids, timeouts) to what every SDK can represent exactly.
const hooksMaxSafeInteger = 1<<53 - 1

const hooksDuplicateKeyMessage = "duplicate object key"

// hooksParseJSON parses one UTF-8 JSON document. Duplicate object keys are rejected, because two
// readers could pick different values for the same key (the conformance checker rejects them too);
// the parsed value is still returned with that error so the caller can address a reply.
func hooksParseJSON(data []byte) (any, error) {
	// The one-pass parser handles every document it accepts, the common case; whatever it does not
	// accept goes the slow way, which finds the exact error to report.
	if v, dupPath, dup, ok := jsonParseFast(data); ok {
		if dup {
			return v, hooksBadEnvelope(dupPath, hooksDuplicateKeyMessage)
		}
		return v, nil
	}
	return hooksParseJSONSlow(data)
}

// hooksParseJSONSlow is hooksParseJSON built from encoding/json: the reference for jsonParseFast
// and the source of every parse error.
func hooksParseJSONSlow(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, hooksUnparsable("", "not valid UTF-8")
	}
	// json.Valid first: decodeJSON lets trailing bytes through when they do not form a whole token
	// ({} x), and the duplicate-key walk relies on the document being valid throughout.
	if !json.Valid(data) {
		var syn *json.SyntaxError
		if err := json.Unmarshal(data, new(json.RawMessage)); errors.As(err, &syn) {
			return nil, hooksUnparsable("", "not valid JSON (syntax error at byte offset %d)", syn.Offset)
		}
		return nil, hooksUnparsable("", "not a single valid JSON value")
	}
	v, err := decodeJSON(data)
	if err != nil {
		return nil, hooksUnparsable("", "not a single valid JSON value")
	}
	if err := hooksCheckDuplicateKeys(data); err != nil {
		return v, err
	}
	return v, nil
}

// hooksCheckDuplicateKeys reports the path of the first key that repeats within its object. It
// runs on a document json.Valid has accepted, so a structural walk over the bytes is enough: only
// strings, brackets and commas matter. Keys are compared after unescaping ("a" and "\u0061" are
// the same key).
func hooksCheckDuplicateKeys(data []byte) error {
	type frame struct {
		object bool
		path   string
		keys   map[string]struct{}
		key    string // objects: the key whose value comes next
		index  int    // arrays: index of the current element
	}
	var stack []*frame
	wantKey := false
	childPath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return joinPath(top.path, top.key)
		}
		return indexPath(top.path, top.index)
	}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, &frame{object: true, path: childPath()})
			wantKey = true
		case '[':
			stack = append(stack, &frame{path: childPath()})
		case '}', ']':
			stack = stack[:len(stack)-1]
			wantKey = false
		case ',':
			top := stack[len(stack)-1]
			if top.object {
				wantKey = true
			} else {
				top.index++
			}
		case '"':
			end := i + 1
			escaped := false
			for data[end] != '"' {
				if data[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			if wantKey {
				top := stack[len(stack)-1]
				key := string(data[i+1 : end])
				if escaped {
					_ = json.Unmarshal(data[i:end+1], &key) // valid: decodeJSON accepted it
				}
				if _, dup := top.keys[key]; dup {
					return hooksBadEnvelope(joinPath(top.path, key), hooksDuplicateKeyMessage)
				}
				if top.keys == nil {
					top.keys = map[string]struct{}{}
				}
				top.keys[key] = struct{}{}
				top.key, wantKey = key, false
			}
			i = end
		}
	}
	return nil
}

// hooksObject reads the members of one JSON object at a known path. Members a decoder maps onto a
// typed field are claimed; whatever is left over is kept verbatim as unknown fields. A member that
// holds the zero value of its typed field ("" or []) is left unclaimed on purpose: proto3 cannot
// tell that value from an absent field, so keeping it among the unknown fields is what makes the
// JSON round trip lossless.
type hooksObject struct {
	path string
	m    map[string]any
	// claimed lists the claimed keys, each once. Objects have a handful of typed members, so a
	// scan of a short slice beats a map that would be allocated for every object; claimedBuf
	// holds the usual few without another allocation.
	claimed    []string
	claimedBuf [8]string
}

// hooksObjectAt checks that v is a JSON object.
func hooksObjectAt(path string, v any) (*hooksObject, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, hooksInvalid(path, "must be an object")
	}
	return newHooksObject(path, m), nil
}

func newHooksObject(path string, m map[string]any) *hooksObject {
	o := &hooksObject{path: path, m: m}
	o.claimed = o.claimedBuf[:0]
	return o
}

func (o *hooksObject) at(key string) string { return joinPath(o.path, key) }

func (o *hooksObject) has(key string) bool {
	_, ok := o.m[key]
	return ok
}

func (o *hooksObject) claim(key string) {
	if !o.isClaimed(key) {
		o.claimed = append(o.claimed, key)
	}
}

func (o *hooksObject) isClaimed(key string) bool {
	for _, k := range o.claimed {
		if k == key {
			return true
		}
	}
	return false
}

// required returns a member that must be present, claimed.
func (o *hooksObject) required(key string) (any, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, hooksInvalid(o.at(key), "required")
	}
	o.claim(key)
	return v, nil
}

// requiredString reads a required string member.
func (o *hooksObject) requiredString(key string, nonEmpty bool) (string, error) {
	v, err := o.required(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", hooksInvalid(o.at(key), "must be a string")
	}
	if nonEmpty && s == "" {
		return "", hooksInvalid(o.at(key), "must not be empty")
	}
	return s, nil
}

// optionalString reads an optional string member; only a non-empty string is claimed.
func (o *hooksObject) optionalString(key string) (string, error) {
	v, ok := o.m[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", hooksInvalid(o.at(key), "must be a string")
	}
	if s != "" {
		o.claim(key)
	}
	return s, nil
}

// looseString claims a member the schema leaves untyped only when it is a non-empty string, the
// one form the proto field can carry; any other value stays verbatim among the unknown fields.
func (o *hooksObject) looseString(key string) string {
	if s, ok := o.m[key].(string); ok && s != "" {
		o.claim(key)
		return s
	}
	return ""
}

// optionalStrings reads an optional array of strings; only a non-empty array is claimed.
func (o *hooksObject) optionalStrings(key string) ([]string, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, hooksInvalid(o.at(key), "must be an array of strings")
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, hooksInvalid(indexPath(o.at(key), i), "must be a string")
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, nil
	}
	o.claim(key)
	return out, nil
}

// optionalBool reads an optional boolean member.
func (o *hooksObject) optionalBool(key string) (*bool, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	b, ok := v.(bool)
	if !ok {
		return nil, hooksInvalid(o.at(key), "must be a boolean")
	}
	o.claim(key)
	return &b, nil
}

// requiredObject reads a required object member.
func (o *hooksObject) requiredObject(key string) (*hooksObject, error) {
	v, err := o.required(key)
	if err != nil {
		return nil, err
	}
	return hooksObjectAt(o.at(key), v)
}

// optionalObject reads an optional object member; nil when absent.
func (o *hooksObject) optionalObject(key string) (*hooksObject, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	o.claim(key)
	return hooksObjectAt(o.at(key), v)
}

// requiredStruct reads a required member that must be a JSON object, as a Struct.
func (o *hooksObject) requiredStruct(key string) (*structpb.Struct, error) {
	v, err := o.required(key)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, hooksInvalid(o.at(key), "must be an object")
	}
	s, err := toStruct(m)
	if err != nil {
		return nil, hooksNumberRangeError(o.at(key)) // the path is built only when it is needed
	}
	return s, nil
}

// optionalValue reads an optional member of any JSON type; nil when absent, a null Value for null.
func (o *hooksObject) optionalValue(key string) (*structpb.Value, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	o.claim(key)
	pv, err := toValue(v)
	if err != nil {
		return nil, hooksNumberRangeError(o.at(key))
	}
	return pv, nil
}

// forbid rejects a member that must not be present.
func (o *hooksObject) forbid(key, format string, args ...any) error {
	if o.has(key) {
		return hooksInvalid(o.at(key), format, args...)
	}
	return nil
}

// extensions reads an optional reverse-DNS keyed extensions object (extensions.schema.json).
func (o *hooksObject) extensions(key string) (*structpb.Struct, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	o.claim(key)
	return hooksDecodeExtensions(o, key, v)
}

// hooksDecodeExtensions checks that v, member key of o, is an object whose keys are reverse-DNS
// names.
func hooksDecodeExtensions(o *hooksObject, key string, v any) (*structpb.Struct, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, hooksInvalid(o.at(key), "must be an object")
	}
	for k := range m {
		if !hooksIsReverseDNS(k) {
			// Report the first bad key in sorted order, so the error does not depend on map order.
			for _, k := range hooksSortedKeys(m) {
				if !hooksIsReverseDNS(k) {
					return nil, hooksInvalid(joinPath(o.at(key), k), "extension key is not a reverse-DNS name (e.g. com.example.feature)")
				}
			}
		}
	}
	s, err := toStruct(m)
	if err != nil {
		return nil, hooksNumberRangeError(o.at(key))
	}
	return s, nil
}

// rest returns the unclaimed members as a Struct, or nil when there are none.
func (o *hooksObject) rest() (*structpb.Struct, error) {
	if len(o.claimed) == len(o.m) {
		return nil, nil
	}
	fields := make(map[string]*structpb.Value, len(o.m)-len(o.claimed))
	for k, v := range o.m {
		if o.isClaimed(k) {
			continue
		}
		pv, err := toValue(v)
		if err != nil {
			return nil, o.firstBadRest()
		}
		fields[k] = pv
	}
	return &structpb.Struct{Fields: fields}, nil
}

// firstBadRest reports the first unclaimed member, in sorted key order, that does not convert, so
// the error does not depend on map order. Only a number beyond the range of a double fails.
func (o *hooksObject) firstBadRest() error {
	for _, k := range hooksSortedKeys(o.m) {
		if o.isClaimed(k) {
			continue
		}
		if _, err := hooksValue(o.at(k), o.m[k]); err != nil {
			return err
		}
	}
	return nil
}

// hooksSortedKeys gives the keys of m in order, so the first error reported is deterministic.
func hooksSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// hooksEnc builds the JSON tree of a Hooks message. hooksPlain builds it from plain JSON values,
// as the exported Encode* functions return it to callers who read the maps. hooksDirect leaves
// the Struct and Value messages inside it as they are, for EncodeHooksMessage: appendJSON writes
// them in the same bytes, so copying them into maps first would be wasted work.
type hooksEnc struct {
	direct bool
}

var (
	hooksPlain  = hooksEnc{}
	hooksDirect = hooksEnc{direct: true}
)

// base starts an encoded object from a level's unknown fields; typed fields written after it take
// precedence.
func (e hooksEnc) base(unknown *structpb.Struct) map[string]any {
	if !e.direct {
		return fromStruct(unknown)
	}
	fields := unknown.GetFields()
	out := make(map[string]any, len(fields)+4) // room for the typed members of a level
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// object writes a Struct-typed field.
func (e hooksEnc) object(s *structpb.Struct) any {
	if e.direct {
		return s
	}
	return fromStruct(s)
}

// value writes a Value-typed field.
func (e hooksEnc) value(v *structpb.Value) any {
	if e.direct {
		return v
	}
	return fromValue(v)
}

// hooksInteger reads a JSON number holding an integer within ±(2^53-1). Fraction and exponent
// forms ("1.0", "1e3") count when their value is integral, as JSON Schema's "integer" has it.
func hooksInteger(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, i >= -hooksMaxSafeInteger && i <= hooksMaxSafeInteger
	}
	// big.Rat decides exactly, but would build 10^e for any exponent e; no safe integer needs a
	// long literal or a large exponent, so those are refused first.
	if len(s) > 64 {
		return 0, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil || exp < -64 || exp > 64 {
			return 0, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	i := r.Num().Int64()
	return i, i >= -hooksMaxSafeInteger && i <= hooksMaxSafeInteger
}

// hooksIsDateTime reports whether s is an RFC 3339 date-time (section 5.6): full-date "T"
// full-time, with "T" and "Z" case-insensitive, an optional fraction and a Z or ±hh:mm offset.
// time.Parse is not used because it accepts forms RFC 3339 does not (and rejects second 60).
func hooksIsDateTime(s string) bool {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return false
	}
	year, ok1 := hooksDigits(s[0:4])
	month, ok2 := hooksDigits(s[5:7])
	day, ok3 := hooksDigits(s[8:10])
	hour, ok4 := hooksDigits(s[11:13])
	minute, ok5 := hooksDigits(s[14:16])
	second, ok6 := hooksDigits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return false
	}
	if month < 1 || month > 12 || day < 1 || day > hooksDaysIn(year, month) ||
		hour > 23 || minute > 59 || second > 60 {
		return false
	}
	rest := s[19:]
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	if rest == "Z" || rest == "z" {
		return true
	}
	if len(rest) != len("+00:00") || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	oh, ok1 := hooksDigits(rest[1:3])
	om, ok2 := hooksDigits(rest[4:6])
	return ok1 && ok2 && oh <= 23 && om <= 59
}

// hooksDigits reads a run of ASCII digits.
func hooksDigits(s string) (int, bool) {
	v := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func hooksDaysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// hooksIsURI reports whether s is an absolute URI in the sense of RFC 3986 (JSON Schema "uri"): a
// scheme, then only URI characters and well-formed percent escapes, with at most one fragment.
func hooksIsURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 {
		return false
	}
	for i, c := range []byte(s[:colon]) {
		alpha := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	rest := s[colon+1:]
	if strings.Count(rest, "#") > 1 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '%' {
			if i+2 >= len(rest) || !hooksIsHex(rest[i+1]) || !hooksIsHex(rest[i+2]) {
				return false
			}
			i += 2
			continue
		}
		if !hooksIsURIChar(c) {
			return false
		}
	}
	return true
}

func hooksIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hooksIsURIChar reports whether c is an RFC 3986 unreserved or reserved character.
func hooksIsURIChar(c byte) bool {
	if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}
