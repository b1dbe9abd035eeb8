package policy

import (
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
)

// fields is a fixed set of named values computed from a Go value on demand.
type fields interface {
	// field returns the value of the named field, or false when there is no such field.
	field(name string) (ref.Val, bool)
	// names lists every field, for iteration and size.
	names() []string
}

// record is a CEL map over a fields source. Entries are computed when a rule reads them, so a
// variable like `session` costs one small allocation no matter how many of its fields the policy
// ignores. Lookups (the hot path) are answered directly; rarer operations (equality, iteration,
// conversion) work on a materialized copy.
type record struct {
	adapter types.Adapter
	src     fields
}

var (
	_ traits.Mapper = (*record)(nil)
	_ interface {
		FindStringKey(string) (any, bool)
	} = (*record)(nil)
)

func newRecord(adapter types.Adapter, src fields) *record {
	return &record{adapter: adapter, src: src}
}

// FindStringKey is the fast path the CEL interpreter takes for `x.name` on maps.
func (r *record) FindStringKey(name string) (any, bool) { return r.src.field(name) }

// Find implements traits.Mapper.
func (r *record) Find(key ref.Val) (ref.Val, bool) {
	name, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return r.src.field(string(name))
}

// Get implements traits.Indexer.
func (r *record) Get(key ref.Val) ref.Val {
	if v, ok := r.Find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

// Contains implements traits.Container.
func (r *record) Contains(key ref.Val) ref.Val {
	_, ok := r.Find(key)
	return types.Bool(ok)
}

// Size implements traits.Sizer.
func (r *record) Size() ref.Val { return types.Int(len(r.src.names())) }

// Iterator implements traits.Iterable.
func (r *record) Iterator() traits.Iterator { return r.materialize().Iterator() }

// ConvertToNative implements ref.Val.
func (r *record) ConvertToNative(t reflect.Type) (any, error) {
	return r.materialize().ConvertToNative(t)
}

// ConvertToType implements ref.Val.
func (r *record) ConvertToType(t ref.Type) ref.Val {
	if t == types.MapType {
		return r
	}
	return r.materialize().ConvertToType(t)
}

// Equal implements ref.Val.
func (r *record) Equal(other ref.Val) ref.Val { return r.materialize().Equal(other) }

// Type implements ref.Val.
func (r *record) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (r *record) Value() any { return r.materialize().Value() }

func (r *record) materialize() traits.Mapper {
	names := r.src.names()
	m := make(map[string]ref.Val, len(names))
	for _, n := range names {
		m[n], _ = r.src.field(n)
	}
	return types.NewMap(r.adapter, m)
}

// jsonAdapter converts google.protobuf.Value entries of JSON structs and lists without going
// through the proto registry, which is the slow, allocating path of the default adapter; it
// matters because tool input is read by almost every rule.
type jsonAdapter struct{ types.Adapter }

func (a jsonAdapter) NativeToValue(v any) ref.Val {
	if jv, ok := v.(*structpb.Value); ok {
		return jsonVal(a, jv)
	}
	return a.Adapter.NativeToValue(v)
}
