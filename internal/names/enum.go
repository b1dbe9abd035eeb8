package names

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The wire name of a closed enum value is its proto name without the enum's UPPER_SNAKE prefix,
// lower-cased: TOOL_KIND_FILE_READ -> "file_read", REASONING_KIND_RE_ACT -> "re_act". The proto
// file is the single source of these names; every enum value carries its enum's prefix
// (TestEnumValuesCarryTheirPrefix), so a name maps back by adding the prefix again.

// EnumWireName returns the wire name of e; the zero value has none and gives "".
func EnumWireName(e protoreflect.Enum) string {
	if e.Number() == 0 {
		return ""
	}
	vd := e.Descriptor().Values().ByNumber(e.Number())
	if vd == nil {
		return ""
	}
	return EnumValueWireName(vd)
}

// wireNames caches EnumValueWireName by value, since metrics, policy and both codecs ask for the
// names of every enum field of every message. It only ever holds what valueWireName computes.
var wireNames sync.Map // protoreflect.EnumValueDescriptor -> string

// EnumValueWireName returns the wire name of the enum value vd (the zero value included, which
// gives its own name, e.g. "unspecified").
func EnumValueWireName(vd protoreflect.EnumValueDescriptor) string {
	if s, ok := wireNames.Load(vd); ok {
		return s.(string)
	}
	s := strings.ToLower(strings.TrimPrefix(string(vd.Name()), enumPrefix(vd.Parent().(protoreflect.EnumDescriptor))))
	wireNames.Store(vd, s)
	return s
}

// ParseEnumWire looks up the non-zero value of d whose wire name is name; 0 and false when there
// is none.
func ParseEnumWire(d protoreflect.EnumDescriptor, name string) (protoreflect.EnumNumber, bool) {
	if name == "" {
		return 0, false
	}
	if m, ok := wireNumbers.Load(d); ok { // every decoded event asks; no strings built then
		n, ok := m.(map[string]protoreflect.EnumNumber)[name]
		return n, ok
	}
	wireNumbers.Store(d, wireNumberMap(d))
	return parseEnumWire(d, name)
}

// wireNumbers caches, per enum, ParseEnumWire's answers: the non-zero values by wire name. An
// enum has a fixed, small set of values, so the cache is bounded by the enums in the binary.
var wireNumbers sync.Map // protoreflect.EnumDescriptor -> map[string]protoreflect.EnumNumber

// wireNumberMap is every name parseEnumWire accepts for d, with its number.
func wireNumberMap(d protoreflect.EnumDescriptor) map[string]protoreflect.EnumNumber {
	values := d.Values()
	m := make(map[string]protoreflect.EnumNumber, values.Len())
	for i := range values.Len() {
		vd := values.Get(i)
		if w := EnumValueWireName(vd); vd.Number() != 0 {
			if n, ok := parseEnumWire(d, w); ok {
				m[w] = n
			}
		}
	}
	return m
}

// parseEnumWire is ParseEnumWire without the cache.
func parseEnumWire(d protoreflect.EnumDescriptor, name string) (protoreflect.EnumNumber, bool) {
	if name == "" || strings.ToLower(name) != name {
		return 0, false
	}
	v := d.Values().ByName(protoreflect.Name(enumPrefix(d) + strings.ToUpper(name)))
	// The last test keeps the match exact: ToUpper maps a few non-ASCII letters onto ASCII ones
	// ("ſ" -> "S"), which must not name a value.
	if v == nil || v.Number() == 0 || EnumValueWireName(v) != name {
		return 0, false
	}
	return v.Number(), true
}

// EnumWireNames lists the wire names of the non-zero values of d in declaration order, for
// "expected one of" messages.
func EnumWireNames(d protoreflect.EnumDescriptor) []string {
	var out []string
	values := d.Values()
	for i := range values.Len() {
		if vd := values.Get(i); vd.Number() != 0 {
			out = append(out, EnumValueWireName(vd))
		}
	}
	return out
}

// enumPrefixes caches enumPrefix by enum, since decoders parse enum values of every message. It
// only ever holds what enumPrefixOf computes.
var enumPrefixes sync.Map // protoreflect.FullName -> string

// enumPrefix is the UPPER_SNAKE form of the enum name plus "_" (ToolKind -> "TOOL_KIND_").
func enumPrefix(d protoreflect.EnumDescriptor) string {
	if p, ok := enumPrefixes.Load(d.FullName()); ok {
		return p.(string)
	}
	p := enumPrefixOf(d)
	enumPrefixes.Store(d.FullName(), p)
	return p
}

func enumPrefixOf(d protoreflect.EnumDescriptor) string {
	var b strings.Builder
	for i, r := range string(d.Name()) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String()) + "_"
}
