package hooks

import (
	"slices"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// Offer is what a draft hooks/intercept request advertises in params.capabilities: the effect
// names, the modify targets with their operations, the flow operations with the continuation
// counters, and the inject delivery times. A rendered answer never leaves it (RenderDraftResult).
type Offer struct {
	// Event is the draft event name the offer was made for.
	Event string
	// Effects are the advertised effect names, in wire order.
	Effects []string
	// Modify maps each advertised modify target to its operations.
	Modify map[string]ModifyOps
	// FlowOps are the advertised flow operations ("stop", "continue").
	FlowOps []string
	// RemainingContinuations and ContinuationCount are the flow counters (continue only).
	RemainingContinuations, ContinuationCount int64
	// InjectDeliverAt are the advertised inject delivery times ("now", "next_turn").
	InjectDeliverAt []string
	// raw is the capabilities object exactly as parsed, for lossless re-encoding; it is the
	// decoder's tree, never changed after decoding (the offer is read-only).
	raw map[string]any
	// ElicitationMode and ElicitationAction are those of a user.elicitation.result event, which
	// decide whether and how its content can be modified.
	ElicitationMode, ElicitationAction string
}

// ModifyOps are the operations advertised for one modify target.
type ModifyOps struct{ Replace, Merge bool }

// Has reports whether the offer advertises the named effect.
func (o *Offer) Has(effect string) bool { return o != nil && slices.Contains(o.Effects, effect) }

// eventEffects is the draft's per-event table of allowed effects (capabilities.schema.json
// $defs), with the modify targets and flow operations each event allows.
type eventEffects struct {
	effects []string
	targets []string
	flow    []string
}

var allowedEffects = map[string]eventEffects{
	"session.start":            {effects: []string{"inject", "message"}},
	"config.change.before":     {effects: []string{"deny", "message"}},
	"task.change.before":       {effects: []string{"deny", "message"}},
	"turn.start":               {effects: []string{"deny", "modify", "inject", "flow", "message"}, targets: []string{"prompt"}, flow: []string{"stop"}},
	"turn.finish.before":       {effects: []string{"modify", "flow", "message"}, targets: []string{"response"}, flow: []string{"stop", "continue"}},
	"model.request.before":     {effects: []string{"deny", "modify", "inject", "return", "flow", "message"}, targets: []string{"request"}, flow: []string{"stop"}},
	"model.response.after":     {effects: []string{"modify", "flow", "message"}, targets: []string{"response"}, flow: []string{"stop"}},
	"model.switch.before":      {effects: []string{"deny", "flow", "message"}, flow: []string{"stop"}},
	"tool.before":              {effects: []string{"deny", "allow", "ask", "modify", "inject", "flow", "return", "message"}, targets: []string{"input"}, flow: []string{"stop"}},
	"tool.after":               {effects: []string{"modify", "inject", "flow", "message"}, targets: []string{"output"}, flow: []string{"stop", "continue"}},
	"tool.permission.request":  {effects: []string{"allow", "deny", "modify", "flow", "message"}, targets: []string{"input"}, flow: []string{"stop"}},
	"tool.batch.after":         {effects: []string{"flow", "inject", "message"}, flow: []string{"stop"}},
	"context.compact.before":   {effects: []string{"deny", "modify", "return", "inject", "message"}, targets: []string{"instructions"}},
	"context.compact.after":    {effects: []string{"inject", "modify", "message"}, targets: []string{"summary"}},
	"user.elicitation.request": {effects: []string{"deny", "return", "message"}},
	"user.elicitation.result":  {effects: []string{"modify", "message"}, targets: []string{"content"}},
	"user.message.inbound":     {effects: []string{"deny", "modify", "message"}, targets: []string{"prompt"}},
	"user.message.outbound":    {effects: []string{"deny", "modify", "message"}, targets: []string{"content"}},
	"workspace.change.before":  {effects: []string{"deny", "modify", "message"}, targets: []string{"workspace"}},
}

// AllowedEffects returns the core effects the draft allows at an interceptable event, in the
// catalogue's order; nil for an event hooks/intercept does not take.
func AllowedEffects(event string) []string { return allowedEffects[event].effects }

// coreEffects are the draft's core effect names; others must be reverse-DNS extension names.
var coreEffects = []string{"deny", "allow", "ask", "modify", "message", "return", "flow", "inject"}

var effectKinds = map[string]ahpv1.EffectKind{
	"deny": ahpv1.EffectKind_EFFECT_KIND_DENY, "allow": ahpv1.EffectKind_EFFECT_KIND_ALLOW,
	"ask": ahpv1.EffectKind_EFFECT_KIND_ASK, "modify": ahpv1.EffectKind_EFFECT_KIND_MODIFY,
	"message": ahpv1.EffectKind_EFFECT_KIND_MESSAGE, "return": ahpv1.EffectKind_EFFECT_KIND_RETURN,
	"flow": ahpv1.EffectKind_EFFECT_KIND_FLOW, "inject": ahpv1.EffectKind_EFFECT_KIND_INJECT,
}

// decodeOffer validates params.capabilities for event: known or reverse-DNS effect names without
// duplicates, each core effect allowed at the event; a modify, flow or inject block exactly when
// that effect is advertised; modify targets allowed at the event with at least one operation;
// flow operations allowed at the event, continue with both counters; inject context append with
// at least one delivery time. tool.before must advertise deny (AHP-CAP-002).
func decodeOffer(path string, v any, event string) (*Offer, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	list, err := o.requiredArray("effects", "must be an array of effect names", "")
	if err != nil {
		return nil, err
	}
	allowed := allowedEffects[event]
	off := &Offer{Event: event}
	for i, e := range list {
		p := jsonwire.IndexPath(o.at("effects"), i)
		name, ok := e.(string)
		switch {
		case !ok:
			return nil, invalid(p, "must be a string")
		case slices.Contains(off.Effects, name):
			return nil, invalid(p, "duplicate effect name")
		case slices.Contains(coreEffects, name):
			if !slices.Contains(allowed.effects, name) {
				return nil, invalid(p, "effect not allowed for this event type by the draft's per-event table")
			}
		case !isReverseDNS(name):
			return nil, invalid(p, "unknown effect; core effects are deny, allow, ask, modify, message, return, flow, inject, and extension effects use reverse-DNS names")
		}
		off.Effects = append(off.Effects, name)
	}
	for _, block := range []string{"modify", "flow", "inject"} {
		switch {
		case off.Has(block) && !o.has(block):
			return nil, invalid(o.at(block), "required when %s is advertised", block)
		case !off.Has(block) && o.has(block):
			return nil, invalid(o.at(block), "allowed only when %s is advertised", block)
		}
	}
	if m, err := o.optionalObject("modify"); err != nil {
		return nil, err
	} else if m != nil {
		if len(m.m) == 0 {
			return nil, invalid(m.path(), "must name at least one target")
		}
		off.Modify = map[string]ModifyOps{}
		for _, target := range jsonwire.SortedKeys(m.m) {
			if !slices.Contains(allowed.targets, target) {
				return nil, invalid(m.at(target), "modify target not allowed for this event type")
			}
			t, err := m.requiredObject(target)
			if err != nil {
				return nil, err
			}
			var ops ModifyOps
			for _, op := range []string{"replace", "merge"} {
				b, err := t.optionalBool(op)
				if err != nil {
					return nil, err
				}
				if b != nil && *b {
					if op == "replace" {
						ops.Replace = true
					} else {
						ops.Merge = true
					}
				}
			}
			if !ops.Replace && !ops.Merge {
				return nil, invalid(t.path(), "must enable replace or merge")
			}
			off.Modify[target] = ops
		}
	}
	if f, err := o.optionalObject("flow"); err != nil {
		return nil, err
	} else if f != nil {
		ops, err := f.requiredArray("operations", "must be an array of flow operations", "must not be empty")
		if err != nil {
			return nil, err
		}
		for i, x := range ops {
			s, _ := x.(string)
			if !slices.Contains(allowed.flow, s) {
				return nil, invalid(jsonwire.IndexPath(f.at("operations"), i), "flow operation not allowed for this event type")
			}
			off.FlowOps = append(off.FlowOps, s)
		}
		counters := []struct {
			key string
			dst *int64
		}{{"remainingContinuations", &off.RemainingContinuations}, {"continuationCount", &off.ContinuationCount}}
		for _, c := range counters {
			raw, ok := f.m[c.key]
			if !ok {
				if slices.Contains(off.FlowOps, "continue") {
					return nil, invalid(f.at(c.key), "required when continue is advertised")
				}
				continue
			}
			n, ok := safeInteger(raw)
			if !ok || n < 0 {
				return nil, invalid(f.at(c.key), "must be a non-negative integer")
			}
			*c.dst = n
		}
		if raw, ok := f.m["maxContinuations"]; ok {
			if n, ok := safeInteger(raw); !ok || n < 0 {
				return nil, invalid(f.at("maxContinuations"), "must be a non-negative integer")
			}
		}
	}
	if in, err := o.optionalObject("inject"); err != nil {
		return nil, err
	} else if in != nil {
		ctx, err := in.requiredObject("context")
		if err != nil {
			return nil, err
		}
		if b, ok := ctx.m["append"].(bool); !ok || !b {
			return nil, invalid(ctx.at("append"), "must be true")
		}
		at, err := ctx.requiredArray("deliverAt", "must be an array of delivery times", "must not be empty")
		if err != nil {
			return nil, err
		}
		for i, x := range at {
			s, _ := x.(string)
			if s != "now" && s != "next_turn" {
				return nil, invalid(jsonwire.IndexPath(ctx.at("deliverAt"), i), "must be now or next_turn")
			}
			off.InjectDeliverAt = append(off.InjectDeliverAt, s)
		}
	}
	if e, ok := o.m["elicitation"]; ok {
		if _, ok := e.(map[string]any); !ok {
			return nil, invalid(o.at("elicitation"), "must be an object")
		}
	}
	// AHP-CAP-002: a tool interception harness always lets the backend deny tool.before.
	if event == "tool.before" && !off.Has("deny") {
		return nil, invalid(o.at("effects"), "must contain deny for tool.before")
	}
	off.raw = o.m
	return off, nil
}

// canonical is the offer as the decision core sees it: core effect kinds and extension names.
func (o *Offer) canonical() *ahpv1.Capabilities {
	c := &ahpv1.Capabilities{}
	for _, name := range o.Effects {
		if k, ok := effectKinds[name]; ok {
			c.Effects = append(c.Effects, k)
		} else {
			c.ExtensionEffects = append(c.ExtensionEffects, name)
		}
	}
	return c
}

// AllowedModifyTargets returns the modify targets the draft allows at an interceptable event.
func AllowedModifyTargets(event string) []string { return allowedEffects[event].targets }

// AllowedFlowOps returns the flow operations the draft allows at an interceptable event.
func AllowedFlowOps(event string) []string { return allowedEffects[event].flow }
