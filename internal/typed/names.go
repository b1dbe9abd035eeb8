package typed

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// wireName is the Harness wire name of a closed enum value: the value name without the enum's
// prefix, lower-cased (REASONING_KIND_RE_ACT -> "re_act"); "" for the zero value. The proto file
// is the single source of these names.
func wireName(e protoreflect.Enum) string {
	if e.Number() == 0 {
		return ""
	}
	v := e.Descriptor().Values().ByNumber(e.Number())
	if v == nil {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(string(v.Name()), enumPrefix(e.Descriptor())))
}

// parseWire finds the value of d whose wire name is name.
func parseWire(d protoreflect.EnumDescriptor, name string) (protoreflect.EnumNumber, bool) {
	if name == "" || strings.ToLower(name) != name {
		return 0, false
	}
	v := d.Values().ByName(protoreflect.Name(enumPrefix(d) + strings.ToUpper(name)))
	if v == nil || v.Number() == 0 {
		return 0, false
	}
	return v.Number(), true
}

// enumPrefix turns an enum name into its value prefix (PerceptionIntent -> "PERCEPTION_INTENT_").
func enumPrefix(d protoreflect.EnumDescriptor) string {
	var b strings.Builder
	for i, r := range string(d.Name()) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String()) + "_"
}

// parseIntent maps a wire intent name ("locate") to its PerceptionIntent.
func parseIntent(name string) (ahpv1.PerceptionIntent, bool) {
	n, ok := parseWire(ahpv1.PerceptionIntent(0).Descriptor(), name)
	return ahpv1.PerceptionIntent(n), ok
}

// strategyName is the wire name of a planning strategy: "step_by_step", or the custom name.
func strategyName(s *ahpv1.PlanningStrategy) string {
	if c, ok := s.GetStrategy().(*ahpv1.PlanningStrategy_Custom); ok {
		return c.Custom
	}
	return wireName(s.GetKnown())
}

// confirmationName is the wire name of a confirmation type: "cost_confirm", or the custom name.
func confirmationName(t *ahpv1.ConfirmationType) string {
	if c, ok := t.GetType().(*ahpv1.ConfirmationType_Custom); ok {
		return c.Custom
	}
	return wireName(t.GetKnown())
}
