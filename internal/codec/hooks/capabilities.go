package hooks

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/types/known/structpb"
)

// effectDeny is the one core effect name of v0.1.
const effectDeny = "deny"

// decodeCapabilities also returns the members other than effects, for lossless params.
func decodeCapabilities(path string, v any) (*ahpv1.Capabilities, *structpb.Struct, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, nil, err
	}
	list, err := o.requiredArray("effects", "must be an array of effect names", "must not be empty")
	if err != nil {
		return nil, nil, err
	}
	caps := &ahpv1.Capabilities{}
	seen := make(map[string]bool, len(list))
	for i, e := range list {
		p := func() string { return jsonwire.IndexPath(o.at("effects"), i) } // only an error needs it
		name, ok := e.(string)
		switch {
		case !ok:
			return nil, nil, invalid(p(), "must be a string")
		case seen[name]:
			return nil, nil, invalid(p(), "duplicate effect name")
		case name == effectDeny:
			caps.Effects = append(caps.Effects, ahpv1.EffectKind_EFFECT_KIND_DENY)
		case isReverseDNS(name):
			caps.ExtensionEffects = append(caps.ExtensionEffects, name)
		default:
			return nil, nil, invalid(p(), "unknown effect; v0.1 defines only deny, and extension effects use reverse-DNS names")
		}
		seen[name] = true
	}
	rest, err := o.rest()
	if err != nil {
		return nil, nil, err
	}
	return caps, rest, nil
}

// encodeCapabilities writes canonical capabilities as a v0.1 capabilities object: core effects
// first, then extension effects, each in order (the wire list is a set). Core kinds other than deny
// have no v0.1 name; they are written by their lower-case kind name, which v0.1 rejects, so that
// EncodeMessage refuses them instead of dropping them silently.
func encodeCapabilities(c *ahpv1.Capabilities) map[string]any {
	effects := make([]any, 0, len(c.GetEffects())+len(c.GetExtensionEffects()))
	for _, k := range c.GetEffects() {
		effects = append(effects, names.EnumWireName(k))
	}
	for _, name := range c.GetExtensionEffects() {
		effects = append(effects, name)
	}
	return map[string]any{"effects": effects}
}

// hasDeny reports whether capabilities advertise deny.
func hasDeny(c *ahpv1.Capabilities) bool {
	for _, k := range c.GetEffects() {
		if k == ahpv1.EffectKind_EFFECT_KIND_DENY {
			return true
		}
	}
	return false
}
