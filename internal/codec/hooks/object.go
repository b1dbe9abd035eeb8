package hooks

import (
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

// object reads the members of one JSON object at a known path. Members a decoder maps onto a
// typed field are claimed; whatever is left over is kept verbatim as unknown fields. A member that
// holds the zero value of its typed field ("" or []) is left unclaimed on purpose: proto3 cannot
// tell that value from an absent field, so keeping it among the unknown fields is what makes the
// JSON round trip lossless.
type object struct {
	// key is the object's whole path when parent is nil; for a member object read through
	// requiredObject or optionalObject, its key under parent, the path built only when an error
	// needs it (see path).
	parent *object
	key    string
	m      map[string]any
	// claimed lists the claimed keys, each once. Objects have a handful of typed members, so a
	// scan of a short slice beats a map that would be allocated for every object; claimedBuf
	// holds the usual few without another allocation.
	claimed    []string
	claimedBuf [7]string
}

// objectAt checks that v is a JSON object.
func objectAt(path string, v any) (*object, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(path, "must be an object")
	}
	return newObject(path, m), nil
}

func newObject(path string, m map[string]any) *object {
	o := &object{key: path, m: m}
	o.claimed = o.claimedBuf[:0]
	return o
}

// member is the object member key of o, holding v, which must be an object. Its path is not
// built unless an error names it.
func (o *object) member(key string, v any) (*object, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(o.at(key), "must be an object")
	}
	c := &object{parent: o, key: key, m: m}
	c.claimed = c.claimedBuf[:0]
	return c, nil
}

// path is the object's path in the document.
func (o *object) path() string {
	if o.parent == nil {
		return o.key
	}
	return jsonwire.JoinPath(o.parent.path(), o.key)
}

func (o *object) at(key string) string { return jsonwire.JoinPath(o.path(), key) }

func (o *object) has(key string) bool {
	_, ok := o.m[key]
	return ok
}

func (o *object) claim(key string) {
	if !o.isClaimed(key) {
		o.claimed = append(o.claimed, key)
	}
}

func (o *object) isClaimed(key string) bool {
	for _, k := range o.claimed {
		if k == key {
			return true
		}
	}
	return false
}

// required returns a member that must be present, claimed.
func (o *object) required(key string) (any, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, invalid(o.at(key), "required")
	}
	o.claim(key)
	return v, nil
}

// requiredString reads a required string member.
func (o *object) requiredString(key string, nonEmpty bool) (string, error) {
	v, err := o.required(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid(o.at(key), "must be a string")
	}
	if nonEmpty && s == "" {
		return "", invalid(o.at(key), "must not be empty")
	}
	return s, nil
}

// optionalString reads an optional string member; only a non-empty string is claimed.
func (o *object) optionalString(key string) (string, error) {
	v, ok := o.m[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid(o.at(key), "must be a string")
	}
	if s != "" {
		o.claim(key)
	}
	return s, nil
}

// looseString claims a member the schema leaves untyped only when it is a non-empty string, the
// one form the proto field can carry; any other value stays verbatim among the unknown fields.
func (o *object) looseString(key string) string {
	if s, ok := o.m[key].(string); ok && s != "" {
		o.claim(key)
		return s
	}
	return ""
}

// requiredArray reads the required array member key; notArray is the error when it is not an
// array and empty, unless "", the error when it has no elements.
func (o *object) requiredArray(key, notArray, empty string) ([]any, error) {
	raw, err := o.required(key)
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, invalid(o.at(key), "%s", notArray)
	}
	if len(list) == 0 && empty != "" {
		return nil, invalid(o.at(key), "%s", empty)
	}
	return list, nil
}

// optionalStrings reads an optional array of strings; only a non-empty array is claimed.
func (o *object) optionalStrings(key string) ([]string, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, invalid(o.at(key), "must be an array of strings")
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, invalid(jsonwire.IndexPath(o.at(key), i), "must be a string")
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
func (o *object) optionalBool(key string) (*bool, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	b, ok := v.(bool)
	if !ok {
		return nil, invalid(o.at(key), "must be a boolean")
	}
	o.claim(key)
	return &b, nil
}

// requiredObject reads a required object member.
func (o *object) requiredObject(key string) (*object, error) {
	v, err := o.required(key)
	if err != nil {
		return nil, err
	}
	return o.member(key, v)
}

// optionalObject reads an optional object member; nil when absent.
func (o *object) optionalObject(key string) (*object, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	o.claim(key)
	return o.member(key, v)
}

// requiredStruct reads a required member that must be a JSON object, as a Struct.
func (o *object) requiredStruct(key string) (*structpb.Struct, error) {
	v, err := o.required(key)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(o.at(key), "must be an object")
	}
	s, err := jsonwire.ToStruct(m)
	if err != nil {
		return nil, numberRangeError(o.at(key)) // the path is built only when it is needed
	}
	return s, nil
}

// optionalValue reads an optional member of any JSON type; nil when absent, a null Value for null.
func (o *object) optionalValue(key string) (*structpb.Value, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	o.claim(key)
	pv, err := jsonwire.ToValue(v)
	if err != nil {
		return nil, numberRangeError(o.at(key))
	}
	return pv, nil
}

// forbid rejects a member that must not be present.
func (o *object) forbid(key, format string, args ...any) error {
	if o.has(key) {
		return invalid(o.at(key), format, args...)
	}
	return nil
}

// extensions reads an optional reverse-DNS keyed extensions object (extensions.schema.json).
func (o *object) extensions(key string) (*structpb.Struct, error) {
	v, ok := o.m[key]
	if !ok {
		return nil, nil
	}
	o.claim(key)
	return decodeExtensions(o, key, v)
}

// decodeExtensions checks that v, member key of o, is an object whose keys are reverse-DNS
// names.
func decodeExtensions(o *object, key string, v any) (*structpb.Struct, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(o.at(key), "must be an object")
	}
	for k := range m {
		if !isReverseDNS(k) {
			// The path names the object, not the key: a key is the sender's data.
			return nil, invalid(o.at(key), "an extension key is not a reverse-DNS name (e.g. com.example.feature)")
		}
	}
	s, err := jsonwire.ToStruct(m)
	if err != nil {
		return nil, numberRangeError(o.at(key))
	}
	return s, nil
}

// rest returns the unclaimed members as a Struct, or nil when there are none.
func (o *object) rest() (*structpb.Struct, error) {
	if len(o.claimed) == len(o.m) {
		return nil, nil
	}
	fields := make(map[string]*structpb.Value, len(o.m)-len(o.claimed))
	for k, v := range o.m {
		if o.isClaimed(k) {
			continue
		}
		pv, err := jsonwire.ToValue(v)
		if err != nil {
			return nil, o.firstBadRest()
		}
		fields[k] = pv
	}
	return &structpb.Struct{Fields: fields}, nil
}

// firstBadRest reports the first unclaimed member, in sorted key order, that does not convert, so
// the error does not depend on map order. Only a number beyond the range of a double fails.
func (o *object) firstBadRest() error {
	for _, k := range jsonwire.SortedKeys(o.m) {
		if o.isClaimed(k) {
			continue
		}
		if _, err := fieldValue(o.at(k), o.m[k]); err != nil {
			return err
		}
	}
	return nil
}
