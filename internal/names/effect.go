package names

import ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"

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
