package redact

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// walker redacts one message in place (a clone), keeping track of where it is for the report.
type walker struct {
	r      *Redactor
	path   []pathSeg
	spans  []span
	report Report
	// wholePath is > 0 inside a value that matched a configured path: every string in it is
	// replaced, and the match was reported once at its root.
	wholePath int
}

func (r *Redactor) newWalker() *walker {
	return &walker{r: r, path: make([]pathSeg, 0, 8)}
}

func (w *walker) push(s pathSeg) { w.path = append(w.path, s) }
func (w *walker) pop()           { w.path = w.path[:len(w.path)-1] }

// add records a masked field at the current path.
func (w *walker) add(kind string) {
	w.report.Masked = append(w.report.Masked, Finding{Path: joinPath(w.path), Kind: kind})
}

// finish sorts and de-duplicates the report.
func (w *walker) finish() Report {
	rep := w.report
	if len(rep.Masked) > 1 {
		slices.SortFunc(rep.Masked, func(a, b Finding) int {
			if c := strings.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			return strings.Compare(a.Kind, b.Kind)
		})
		rep.Masked = slices.Compact(rep.Masked)
	}
	if len(rep.Truncated) > 1 {
		slices.SortFunc(rep.Truncated, func(a, b Truncation) int { return strings.Compare(a.Path, b.Path) })
	}
	return rep
}

// pathMatch reports whether the current position matches a configured path.
func (w *walker) pathMatch() bool {
	for _, p := range w.r.paths {
		if !hasAnyDepth(p) && len(p) != len(w.path) {
			continue
		}
		if matchPath(p, w.path) {
			return true
		}
	}
	return false
}

// str redacts one string at the current path.
func (w *walker) str(s string) (out string) {
	if w.wholePath > 0 {
		return Placeholder(KindPath)
	}
	if s == "" {
		return s
	}
	defer func() {
		if recover() != nil {
			out = Placeholder(KindError)
			w.add(KindError)
		}
	}()
	out, found, truncated, spans := w.r.text(s, w.spans)
	w.spans = spans
	for found != 0 {
		i := bits.TrailingZeros64(found)
		found &^= 1 << uint(i)
		w.add(w.r.detectors[i].name)
	}
	if truncated {
		w.report.Truncated = append(w.report.Truncated, Truncation{Path: joinPath(w.path), Bytes: len(s)})
	}
	return out
}

// message redacts every populated field of m.
func (w *walker) message(m protoreflect.Message) {
	if len(m.GetUnknown()) > 0 {
		m.SetUnknown(nil)
		w.add(KindUnknownFields)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		jsonName := fd.JSONName()
		if jsonName == string(fd.Name()) {
			jsonName = ""
		}
		w.push(pathSeg{name: string(fd.Name()), jsonName: jsonName, index: -1})
		w.field(m, fd, v)
		w.pop()
		return true
	})
}

// field redacts one populated field. A failure replaces the field by a placeholder.
func (w *walker) field(m protoreflect.Message, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	depth := len(w.path)
	defer func() {
		if recover() != nil {
			w.path = w.path[:depth]
			w.replaceFailed(m, fd)
		}
	}()
	whole := w.wholePath == 0 && w.pathMatch()
	if whole {
		w.add(KindPath)
		w.wholePath++
		defer func() { w.wholePath-- }()
	}
	switch {
	case fd.IsList():
		list := v.List()
		for i := 0; i < list.Len(); i++ {
			w.push(pathSeg{index: i})
			switch {
			case fd.Kind() == protoreflect.StringKind:
				list.Set(i, protoreflect.ValueOfString(w.str(list.Get(i).String())))
			case fd.Kind() == protoreflect.BytesKind:
				list.Set(i, protoreflect.ValueOfBytes([]byte(w.str(string(list.Get(i).Bytes())))))
			case fd.Message() != nil:
				w.messageValue(list.Get(i).Message())
			}
			w.pop()
		}
	case fd.IsMap():
		w.mapField(fd, v.Map())
	case fd.Kind() == protoreflect.StringKind:
		// Set only what changed: setting a string through reflection allocates.
		if in := v.String(); in != "" {
			if out := w.str(in); out != in {
				m.Set(fd, protoreflect.ValueOfString(out))
			}
		}
	case fd.Kind() == protoreflect.BytesKind:
		if in := string(v.Bytes()); in != "" {
			if out := w.str(in); out != in {
				m.Set(fd, protoreflect.ValueOfBytes([]byte(out)))
			}
		}
	case fd.Message() != nil:
		w.messageValue(v.Message())
	}
}

// mapField redacts the string and message values of a map field (ahp.v1 has none today; this
// keeps a future one from passing through unscanned).
func (w *walker) mapField(fd protoreflect.FieldDescriptor, mp protoreflect.Map) {
	type entry struct {
		k protoreflect.MapKey
		v protoreflect.Value
	}
	var set []entry
	mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		w.push(pathSeg{name: k.String(), index: -1})
		switch {
		case fd.MapValue().Kind() == protoreflect.StringKind:
			set = append(set, entry{k, protoreflect.ValueOfString(w.str(v.String()))})
		case fd.MapValue().Message() != nil:
			w.messageValue(v.Message())
		}
		w.pop()
		return true
	})
	for _, e := range set {
		mp.Set(e.k, e.v)
	}
}

// messageValue redacts a message in place, with the JSON well-known types handled directly.
func (w *walker) messageValue(m protoreflect.Message) {
	switch x := m.Interface().(type) {
	case *structpb.Struct:
		if w.wholePath > 0 {
			x.Fields = map[string]*structpb.Value{"redacted": structpb.NewStringValue(Placeholder(KindPath))}
			return
		}
		w.structFields(x)
	case *structpb.Value:
		w.value(x)
	case *structpb.ListValue:
		w.list(x)
	default:
		w.message(m)
	}
}

// replaceFailed puts a placeholder where redacting a field failed.
func (w *walker) replaceFailed(m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	w.add(KindError)
	ph := Placeholder(KindError)
	switch {
	case fd.IsList() || fd.IsMap():
		m.Clear(fd)
	case fd.Kind() == protoreflect.StringKind:
		m.Set(fd, protoreflect.ValueOfString(ph))
	case fd.Kind() == protoreflect.BytesKind:
		m.Set(fd, protoreflect.ValueOfBytes([]byte(ph)))
	case fd.Message() != nil:
		switch m.Get(fd).Message().Interface().(type) {
		case *structpb.Struct:
			m.Set(fd, protoreflect.ValueOfMessage((&structpb.Struct{Fields: map[string]*structpb.Value{"redacted": structpb.NewStringValue(ph)}}).ProtoReflect()))
		case *structpb.Value:
			m.Set(fd, protoreflect.ValueOfMessage(structpb.NewStringValue(ph).ProtoReflect()))
		default:
			m.Clear(fd)
		}
	default:
		m.Clear(fd)
	}
}

// structFields redacts an object: keys are scanned like strings, a key naming a secret masks its
// value, and every value is redacted.
func (w *walker) structFields(s *structpb.Struct) {
	type rename struct{ from, to string }
	var renames []rename
	for k, v := range s.Fields {
		key := w.str(k)
		if key != k {
			renames = append(renames, rename{k, key})
		}
		w.push(pathSeg{name: key, index: -1})
		switch {
		case v == nil:
		case w.pathMatch():
			w.add(KindPath)
			setPlaceholder(v, KindPath)
		case w.r.keysOn && w.r.keys.secret(k) && textual(v):
			w.add(KindSecretKey)
			setPlaceholder(v, KindSecretKey)
		default:
			w.value(v)
		}
		w.pop()
	}
	for _, rn := range renames {
		v := s.Fields[rn.from]
		delete(s.Fields, rn.from)
		to := rn.to
		for n := 2; ; n++ {
			if _, taken := s.Fields[to]; !taken {
				break
			}
			to = rn.to + "#" + strconv.Itoa(n)
		}
		s.Fields[to] = v
	}
}

// value redacts a JSON value in place.
func (w *walker) value(v *structpb.Value) {
	if w.wholePath > 0 {
		setPlaceholder(v, KindPath)
		return
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		k.StringValue = w.str(k.StringValue)
	case *structpb.Value_StructValue:
		if k.StructValue != nil {
			w.structFields(k.StructValue)
		}
	case *structpb.Value_ListValue:
		if k.ListValue != nil {
			w.list(k.ListValue)
		}
	}
}

// list redacts a JSON array in place.
func (w *walker) list(l *structpb.ListValue) {
	for i, v := range l.GetValues() {
		w.push(pathSeg{index: i})
		switch {
		case v == nil:
		case w.wholePath == 0 && w.pathMatch():
			w.add(KindPath)
			setPlaceholder(v, KindPath)
		default:
			w.value(v)
		}
		w.pop()
	}
}

// textual reports whether v can hold a secret worth masking by key name: strings, objects and
// arrays. Numbers, booleans and null stay, so "max_tokens": 100 keeps its value.
func textual(v *structpb.Value) bool {
	switch v.GetKind().(type) {
	case *structpb.Value_StringValue, *structpb.Value_StructValue, *structpb.Value_ListValue:
		return true
	}
	return false
}

func setPlaceholder(v *structpb.Value, kind string) {
	v.Kind = &structpb.Value_StringValue{StringValue: Placeholder(kind)}
}
