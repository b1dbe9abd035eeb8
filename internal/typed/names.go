package typed

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// parseIntent maps a wire intent name ("locate") to its PerceptionIntent.
func parseIntent(name string) (ahpv1.PerceptionIntent, bool) {
	n, ok := names.ParseEnumWire(ahpv1.PerceptionIntent(0).Descriptor(), name)
	return ahpv1.PerceptionIntent(n), ok
}

// strategyName is the wire name of a planning strategy: "step_by_step", or the custom name.
func strategyName(s *ahpv1.PlanningStrategy) string {
	if c, ok := s.GetStrategy().(*ahpv1.PlanningStrategy_Custom); ok {
		return c.Custom
	}
	return names.EnumWireName(s.GetKnown())
}

// confirmationName is the wire name of a confirmation type: "cost_confirm", or the custom name.
func confirmationName(t *ahpv1.ConfirmationType) string {
	if c, ok := t.GetType().(*ahpv1.ConfirmationType_Custom); ok {
		return c.Custom
	}
	return names.EnumWireName(t.GetKnown())
}
