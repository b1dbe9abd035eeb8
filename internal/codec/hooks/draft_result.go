package hooks

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// modifyTargets are the draft's modify targets.
var modifyTargets = []string{"input", "output", "prompt", "request", "response", "content", "instructions", "summary", "workspace"}

// DecodeDraftResult reads a draft hooks/intercept result {protocolVersion "draft", effects,
// extensions?}: an ordered list of valid effects (effect.schema.json), rejected as a whole when
// any member is unknown or invalid (atomic). A discovery manifest never rides along. Effect
// members other than type, reason, code and extensions are kept in the effect's unknown_fields,
// so the result encodes back unchanged.
func DecodeDraftResult(path string, v any) (*ahpv1.HooksInterceptResult, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	r := &ahpv1.HooksInterceptResult{}
	if r.ProtocolVersion, err = checkDraftVersion(o); err != nil {
		return nil, err
	}
	if o.has("manifest") && o.has("effects") {
		return nil, invalid(o.at("manifest"), "not allowed; discovery and interception results cannot be combined")
	}
	list, err := o.requiredArray("effects", "must be an array", "")
	if err != nil {
		return nil, err
	}
	denies := 0
	for i, e := range list {
		eff, err := decodeDraftEffect(jsonwire.IndexPath(o.at("effects"), i), e)
		if err != nil {
			return nil, err
		}
		if eff.Type == "deny" {
			if denies++; denies > 1 {
				return nil, invalid(o.at("effects"), "at most one deny effect per result")
			}
		}
		r.Effects = append(r.Effects, eff)
	}
	if r.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if r.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeDraftEffect validates one effect by type: deny {reason, code?, extensions?, ...};
// allow and ask {type}; modify {target, operation replace|merge, value} with the value each target
// takes; message {text}; return {value}; flow stop {reason} or continue {instruction?}; inject
// {target context, operation append, deliverAt now|next_turn, value: messages}; an extension
// effect (reverse-DNS type) with any members. Everything but deny and extensions is closed.
func decodeDraftEffect(path string, v any) (*ahpv1.HooksEffect, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	eff := &ahpv1.HooksEffect{}
	if eff.Type, err = o.requiredString("type", false); err != nil {
		return nil, err
	}
	// keep claims only the members HooksEffect types; o is used for validation, which claims more.
	keep := newObject(path, o.m)
	keep.claim("type")
	var allowed []string // members besides type; nil means open
	switch eff.Type {
	case "deny":
		if eff.Reason, err = o.requiredString("reason", true); err != nil {
			return nil, err
		}
		if o.has("code") {
			if eff.Code, err = o.requiredString("code", false); err != nil {
				return nil, err
			}
			if !isReverseDNS(eff.Code) {
				return nil, invalid(o.at("code"), "must be a reverse-DNS name (e.g. com.example.policy.rule)")
			}
		}
		if eff.Extensions, err = o.extensions("extensions"); err != nil {
			return nil, err
		}
		for _, k := range []string{"reason", "code", "extensions"} {
			keep.claim(k)
		}
	case "allow", "ask":
		allowed = []string{}
	case "modify":
		allowed = []string{"target", "operation", "value"}
		target, err := o.requiredString("target", false)
		if err != nil {
			return nil, err
		}
		if !oneOf(target, modifyTargets...) {
			return nil, invalid(o.at("target"), "must be one of input, output, prompt, request, response, content, instructions, summary, workspace")
		}
		op, err := o.requiredString("operation", false)
		if err != nil {
			return nil, err
		}
		if op != "replace" && op != "merge" {
			return nil, invalid(o.at("operation"), "must be replace or merge")
		}
		value, err := o.required("value")
		if err != nil {
			return nil, err
		}
		if err := checkModifyValue(o.at("value"), target, op, value); err != nil {
			return nil, err
		}
	case "message":
		allowed = []string{"text"}
		if _, err := o.requiredString("text", true); err != nil {
			return nil, err
		}
	case "return":
		allowed = []string{"value"}
		value, err := o.required("value")
		if err != nil {
			return nil, err
		}
		if list, ok := value.([]any); ok {
			if err := checkItems(o.at("value"), list, itemRules{}); err != nil {
				return nil, err
			}
		}
	case "flow":
		op, err := o.requiredString("operation", false)
		if err != nil {
			return nil, err
		}
		switch op {
		case "stop":
			allowed = []string{"operation", "reason"}
			if eff.Reason, err = o.requiredString("reason", true); err != nil {
				return nil, err
			}
			keep.claim("reason")
		case "continue":
			allowed = []string{"operation", "instruction"}
			if _, err := o.optionalString("instruction"); err != nil {
				return nil, err
			}
		default:
			return nil, invalid(o.at("operation"), "must be stop or continue")
		}
	case "inject":
		allowed = []string{"target", "operation", "deliverAt", "value"}
		if t, err := o.requiredString("target", false); err != nil {
			return nil, err
		} else if t != "context" {
			return nil, invalid(o.at("target"), "must be context")
		}
		if op, err := o.requiredString("operation", false); err != nil {
			return nil, err
		} else if op != "append" {
			return nil, invalid(o.at("operation"), "must be append")
		}
		if at, err := o.requiredString("deliverAt", false); err != nil {
			return nil, err
		} else if at != "now" && at != "next_turn" {
			return nil, invalid(o.at("deliverAt"), "must be now or next_turn")
		}
		list, err := o.requiredArray("value", "must be an array of messages", "")
		if err != nil {
			return nil, err
		}
		if err := checkItems(o.at("value"), list, itemRules{messagesOnly: true}); err != nil {
			return nil, err
		}
	default:
		if !isReverseDNS(eff.Type) {
			return nil, invalid(o.at("type"), "unknown effect type; the whole result is rejected")
		}
	}
	if allowed != nil {
		for _, k := range jsonwire.SortedKeys(o.m) {
			if k != "type" && !oneOf(k, allowed...) {
				return nil, invalid(o.at(k), "not allowed on a %s effect", eff.Type)
			}
		}
	}
	if eff.UnknownFields, err = keep.rest(); err != nil {
		return nil, err
	}
	return eff, nil
}

// checkModifyValue holds a modify value to its target: input and workspace take objects;
// instructions take flat text parts; content takes messages or (at user.elicitation.result) the
// MCP answer object; the other content targets take messages.
func checkModifyValue(path, target, op string, value any) error {
	switch target {
	case "input", "workspace":
		if _, ok := value.(map[string]any); !ok {
			return invalid(path, "must be an object for target %s", target)
		}
		return nil
	case "content":
		if _, ok := value.(map[string]any); ok {
			return nil
		}
	}
	list, ok := value.([]any)
	if !ok {
		return invalid(path, "must be an array of content for target %s", target)
	}
	if target == "instructions" || target == "summary" {
		for i, x := range list {
			if m, ok := x.(map[string]any); ok {
				if _, isMessage := m["parts"]; isMessage {
					return invalid(jsonwire.IndexPath(path, i), "must be a content part, not a message, for target %s", target)
				}
			}
		}
		return checkItems(path, list, itemRules{})
	}
	return checkItems(path, list, itemRules{messagesOnly: true})
}

// CheckResultAt holds a decoded draft result to the edit context of one interception: the event
// it answers and, for user.elicitation.result, the elicitation's mode and action. Rules beyond
// the schema: content at user.elicitation.result is the MCP answer object (flat primitive or
// string-array values), only for form elicitations that were accepted; content at
// user.message.outbound is a list of assistant messages; output at tool.after a list of messages.
func CheckResultAt(m *Message, event, mode, action string) error {
	r := m.Result
	if r == nil {
		return nil
	}
	for i, e := range r.GetEffects() {
		if e.GetType() != "modify" {
			continue
		}
		path := jsonwire.IndexPath("result.effects", i)
		target := e.GetUnknownFields().GetFields()["target"].GetStringValue()
		value := jsonwire.FromValue(e.GetUnknownFields().GetFields()["value"])
		if err := checkModifyAt(path, event, mode, action, target, value); err != nil {
			return err
		}
	}
	return nil
}

func checkModifyAt(path, event, mode, action, target string, value any) error {
	vpath := jsonwire.JoinPath(path, "value")
	switch {
	case event == "user.elicitation.result" && target == "content":
		if mode != "form" {
			return invalid(jsonwire.JoinPath(path, "target"), "content of a %s elicitation cannot be modified", "url")
		}
		if action != "accept" {
			return invalid(jsonwire.JoinPath(path, "target"), "content can be modified only when the elicitation was accepted")
		}
		obj, ok := value.(map[string]any)
		if !ok {
			return invalid(vpath, "must be the MCP answer object at user.elicitation.result")
		}
		for _, k := range jsonwire.SortedKeys(obj) {
			switch x := obj[k].(type) {
			case map[string]any:
				return invalid(jsonwire.JoinPath(vpath, k), "must be a primitive or an array of strings")
			case []any:
				for _, s := range x {
					if _, ok := s.(string); !ok {
						return invalid(jsonwire.JoinPath(vpath, k), "must be a primitive or an array of strings")
					}
				}
			}
		}
	case event == "user.message.outbound" && target == "content":
		list, ok := value.([]any)
		if !ok {
			return invalid(vpath, "must be a list of messages at user.message.outbound")
		}
		return checkItems(vpath, list, itemRules{messagesOnly: true, role: "assistant"})
	}
	return nil
}
