package names

import (
	"strings"
	"sync"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// EventTypeName returns the canonical dotted name of t ("tool.before"), or "" when t has none.
func EventTypeName(t ahpv1.EventType) string {
	eventNamesOnce.Do(loadEventNames)
	return eventNameByType[t]
}

// ParseEventType maps a canonical dotted name back to its EventType.
func ParseEventType(name string) (ahpv1.EventType, bool) {
	eventNamesOnce.Do(loadEventNames)
	t, ok := eventTypeByName[name]
	return t, ok
}

var (
	eventNamesOnce  sync.Once
	eventNameByType map[ahpv1.EventType]string
	eventTypeByName map[string]ahpv1.EventType
)

// loadEventNames reads the event_name option of every EventType value, so the proto file is the
// single source of the canonical names.
func loadEventNames() {
	values := ahpv1.EventType(0).Descriptor().Values()
	eventNameByType = make(map[ahpv1.EventType]string, values.Len())
	eventTypeByName = make(map[string]ahpv1.EventType, values.Len())
	for i := range values.Len() {
		v := values.Get(i)
		name, _ := proto.GetExtension(v.Options(), ahpv1.E_EventName).(string)
		if name == "" {
			continue
		}
		t := ahpv1.EventType(v.Number())
		eventNameByType[t] = name
		eventTypeByName[name] = t
	}
}

// enumWireName returns the snake_case wire name of a closed enum value: the value name without the
// enum's prefix, lower-cased (TOOL_KIND_FILE_READ -> "file_read", REASONING_KIND_RE_ACT -> "re_act").
// The zero value has no wire name and gives "".
func EnumWireName(e protoreflect.Enum) string {
	if e.Number() == 0 {
		return ""
	}
	v := e.Descriptor().Values().ByNumber(e.Number())
	if v == nil {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(string(v.Name()), enumPrefix(e.Descriptor())))
}

// parseEnumWire looks up the enum value whose wire name is name; 0 and false when there is none.
func ParseEnumWire(d protoreflect.EnumDescriptor, name string) (protoreflect.EnumNumber, bool) {
	if name == "" || strings.ToLower(name) != name {
		return 0, false
	}
	v := d.Values().ByName(protoreflect.Name(enumPrefix(d) + strings.ToUpper(name)))
	if v == nil || v.Number() == 0 {
		return 0, false
	}
	return v.Number(), true
}

// enumWireNames lists the wire names of d in declaration order, for "expected one of" messages.
func EnumWireNames(d protoreflect.EnumDescriptor) []string {
	prefix := enumPrefix(d)
	var out []string
	for i := range d.Values().Len() {
		v := d.Values().Get(i)
		if v.Number() == 0 {
			continue
		}
		out = append(out, strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix)))
	}
	return out
}

// enumPrefixes caches enumPrefix by enum, since every enum field of every message needs it. The
// cache only ever holds what enumPrefixOf computes from the descriptor, so it changes no result.
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
	name := string(d.Name())
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String()) + "_"
}

// ToolKindName returns the wire name of a tool kind ("file_read"), or "" for unspecified.
func ToolKindName(k ahpv1.ToolKind) string { return EnumWireName(k) }

// ParseToolKind maps a wire name ("file_read") to its ToolKind.
func ParseToolKind(name string) (ahpv1.ToolKind, bool) {
	n, ok := ParseEnumWire(ahpv1.ToolKind(0).Descriptor(), name)
	return ahpv1.ToolKind(n), ok
}

// EffectKindOf names the effect set in e (EFFECT_KIND_UNSPECIFIED for none). It is a type switch,
// not reflection, because metrics call it for every effect of every decision.
func EffectKindOf(e *ahpv1.Effect) ahpv1.EffectKind {
	switch e.GetEffect().(type) {
	case *ahpv1.Effect_Deny:
		return ahpv1.EffectKind_EFFECT_KIND_DENY
	case *ahpv1.Effect_Allow:
		return ahpv1.EffectKind_EFFECT_KIND_ALLOW
	case *ahpv1.Effect_Ask:
		return ahpv1.EffectKind_EFFECT_KIND_ASK
	case *ahpv1.Effect_Modify:
		return ahpv1.EffectKind_EFFECT_KIND_MODIFY
	case *ahpv1.Effect_Defer:
		return ahpv1.EffectKind_EFFECT_KIND_DEFER
	case *ahpv1.Effect_Escalate:
		return ahpv1.EffectKind_EFFECT_KIND_ESCALATE
	case *ahpv1.Effect_Message:
		return ahpv1.EffectKind_EFFECT_KIND_MESSAGE
	case *ahpv1.Effect_Return:
		return ahpv1.EffectKind_EFFECT_KIND_RETURN
	case *ahpv1.Effect_Flow:
		return ahpv1.EffectKind_EFFECT_KIND_FLOW
	case *ahpv1.Effect_Inject:
		return ahpv1.EffectKind_EFFECT_KIND_INJECT
	}
	return ahpv1.EffectKind_EFFECT_KIND_UNSPECIFIED
}

// EffectKindName is the wire name of an effect kind ("deny"), or "" for unspecified.
func EffectKindName(k ahpv1.EffectKind) string { return EnumWireName(k) }
