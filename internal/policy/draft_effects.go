package policy

import (
	"slices"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// The effect forms the Agent Hooks Protocol "draft" adds (docs/policy.md, "Draft effects"):
//
//	return: {value: <any JSON>}                          a supplied result; skips the original call
//	flow:   {stop: {reason: ...}} | {continue: {instruction: ...}}
//	inject: {deliver_at: now|next_turn, text: ...}     or value: [<canonical messages>]
//	modify: {target: prompt|request|response|..., operation: replace|merge, value: <any JSON>}
//
// Values are literals; whether a value fits its target, and whether the caller can express the
// effect at all (per event, target and operation), is decided when the answer is rendered for the
// caller, which falls back and records it when it cannot.

type returnSpec struct {
	Value any `yaml:"value"`
}

type flowSpec struct {
	Stop     *reasonSpec   `yaml:"stop"`
	Continue *continueSpec `yaml:"continue"`
}

type continueSpec struct {
	Instruction string `yaml:"instruction"`
}

type injectSpec struct {
	DeliverAt string `yaml:"deliver_at"`
	Text      string `yaml:"text"`
	Value     []any  `yaml:"value"`
}

// draftRule holds what the draft effect forms compile to.
type draftRule struct {
	value       *structpb.Value // return value, modify value
	list        *structpb.ListValue
	flowOp      string // "stop" or "continue"
	instruction string
	deliverAt   string
	modTarget   ahpv1.ModifyTarget
	modOp       ahpv1.ModifyOperation
}

// modifyTargetsByName maps the draft's modify targets to canonical ones.
var modifyTargetsByName = map[string]ahpv1.ModifyTarget{
	"input": ahpv1.ModifyTarget_MODIFY_TARGET_INPUT, "output": ahpv1.ModifyTarget_MODIFY_TARGET_OUTPUT,
	"prompt": ahpv1.ModifyTarget_MODIFY_TARGET_PROMPT, "request": ahpv1.ModifyTarget_MODIFY_TARGET_REQUEST,
	"response": ahpv1.ModifyTarget_MODIFY_TARGET_RESPONSE, "content": ahpv1.ModifyTarget_MODIFY_TARGET_CONTENT,
	"instructions": ahpv1.ModifyTarget_MODIFY_TARGET_INSTRUCTIONS, "summary": ahpv1.ModifyTarget_MODIFY_TARGET_SUMMARY,
	"workspace": ahpv1.ModifyTarget_MODIFY_TARGET_WORKSPACE,
}

// compileDraftEffect compiles return, flow and inject; it reports whether e was one of them.
func (r *rule) compileDraftEffect(e effectSpec, add func(string, ...any)) bool {
	switch {
	case e.Return != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_RETURN
		v, err := jsonValue(e.Return.Value, "effect.return.value")
		if err != nil {
			add("%v", err)
		}
		if e.Return.Value == nil {
			add("effect.return: value is required")
		}
		r.draft.value = v
	case e.Flow != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_FLOW
		switch {
		case (e.Flow.Stop == nil) == (e.Flow.Continue == nil):
			add("effect.flow: give exactly one of stop, continue")
		case e.Flow.Stop != nil:
			r.draft.flowOp = "stop"
			r.reason = e.Flow.Stop.Reason
			if r.reason == "" {
				add("effect.flow.stop: reason is required")
			}
		default:
			r.draft.flowOp = "continue"
			r.draft.instruction = e.Flow.Continue.Instruction
		}
	case e.Inject != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_INJECT
		switch e.Inject.DeliverAt {
		case "", "now", "next_turn":
			r.draft.deliverAt = e.Inject.DeliverAt
		default:
			add("effect.inject.deliver_at: want now or next_turn, got %q", e.Inject.DeliverAt)
		}
		switch {
		case (e.Inject.Text == "") == (e.Inject.Value == nil):
			add("effect.inject: give exactly one of text, value")
		case e.Inject.Text != "":
			r.draft.list = systemMessage(r.info.ID, e.Inject.Text)
		default:
			v, err := jsonValue(e.Inject.Value, "effect.inject.value")
			if err != nil {
				add("%v", err)
			}
			r.draft.list = v.GetListValue()
		}
	default:
		return false
	}
	return true
}

// systemMessage is the canonical message an inject text stands for.
func systemMessage(id, text string) *structpb.ListValue {
	msg, _ := structpb.NewValue(map[string]any{"id": "inject-" + id, "role": "system", "parts": []any{
		map[string]any{"id": "inject-" + id + "-text", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": text},
	}})
	return &structpb.ListValue{Values: []*structpb.Value{msg}}
}

// isTargetModify reports whether a modify spec addresses a target other than the tool input.
func isTargetModify(m *modifySpec) bool { return m.Target != "" && m.Target != "input" }

// compileTargetModify compiles modify {target, operation, value} for a draft target.
func (r *rule) compileTargetModify(m *modifySpec, add func(string, ...any)) {
	t, ok := modifyTargetsByName[m.Target]
	if !ok {
		add("effect.modify.target: unknown target %q", m.Target)
	}
	r.draft.modTarget = t
	switch m.Operation {
	case "", "replace":
		r.draft.modOp = ahpv1.ModifyOperation_MODIFY_OPERATION_REPLACE
	case "merge":
		r.draft.modOp = ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE
	default:
		add("effect.modify.operation: want replace or merge, got %q", m.Operation)
	}
	if m.Merge != nil || m.MergeExpr != "" || m.Input != "" {
		add("effect.modify: merge, merge_expr and input change the tool input; with target %q give value", m.Target)
	}
	if m.Value == nil {
		add("effect.modify: value is required with target %q", m.Target)
	}
	v, err := jsonValue(m.Value, "effect.modify.value")
	if err != nil {
		add("%v", err)
	}
	r.draft.value = v
}

// buildDraftEffect builds the canonical effect of a matched draft-form rule.
func (r *rule) buildDraftEffect(e *ahpv1.Effect, reason string) bool {
	switch r.effect {
	case ahpv1.EffectKind_EFFECT_KIND_RETURN:
		e.Effect = &ahpv1.Effect_Return{Return: &ahpv1.ReturnEffect{Value: proto.CloneOf(r.draft.value)}}
	case ahpv1.EffectKind_EFFECT_KIND_FLOW:
		e.Effect = &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: r.draft.flowOp, Reason: reason, Instruction: r.draft.instruction}}
	case ahpv1.EffectKind_EFFECT_KIND_INJECT:
		e.Effect = &ahpv1.Effect_Inject{Inject: &ahpv1.InjectEffect{Target: "context", Operation: "append",
			DeliverAt: r.draft.deliverAt, Value: proto.CloneOf(r.draft.list)}}
	case ahpv1.EffectKind_EFFECT_KIND_MODIFY:
		if r.draft.modTarget == ahpv1.ModifyTarget_MODIFY_TARGET_UNSPECIFIED {
			return false
		}
		e.Effect = &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: r.draft.modTarget, Operation: r.draft.modOp,
			Value: proto.CloneOf(r.draft.value), Reason: reason}}
	default:
		return false
	}
	return true
}

// addDraft takes a matched draft-form effect (return, flow, inject, modify of a draft target):
// expressed as itself when the caller advertises its kind, otherwise the rule's fallback (return,
// flow stop, modify) or dropped and recorded (inject, flow continue, which never refuse anything).
// It reports whether e was such an effect.
func (c *combiner) addDraft(r *rule, e *ahpv1.Effect) bool {
	kind := r.effect
	switch {
	case kind == ahpv1.EffectKind_EFFECT_KIND_MODIFY && r.draft.modTarget == ahpv1.ModifyTarget_MODIFY_TARGET_UNSPECIFIED:
		return false
	case !slices.Contains([]ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_RETURN, ahpv1.EffectKind_EFFECT_KIND_FLOW,
		ahpv1.EffectKind_EFFECT_KIND_INJECT, ahpv1.EffectKind_EFFECT_KIND_MODIFY}, kind):
		return false
	}
	if c.caps.has(kind) && (kind != ahpv1.EffectKind_EFFECT_KIND_MODIFY || c.draftTargets) {
		c.extras = append(c.extras, candidate{r, e})
		return true
	}
	if kind == ahpv1.EffectKind_EFFECT_KIND_INJECT || e.GetFlow().GetOperation() == "continue" {
		c.res.Fallbacks = append(c.res.Fallbacks, &ahpv1.Fallback{
			RuleId: r.info.ID, Wanted: e, Reason: "inject and flow continue are not supported by this caller; dropped",
		})
		return true
	}
	if sent := c.fallback(r, e); sent != nil && c.deny == nil {
		c.deny = &candidate{r, sent}
	}
	return true
}

// acceptsDraftTargets reports whether the caller of ev can take modify of a target other than the
// tool input: a Hooks "draft" caller, or the typed API (no recorded origin). A v0.1 or Harness
// caller advertises modify for the tool input only.
func acceptsDraftTargets(ev *ahpv1.Event) bool {
	o := ev.GetOrigin()
	return o.GetDialect() == ahpv1.Dialect_DIALECT_UNSPECIFIED ||
		(o.GetDialect() == ahpv1.Dialect_DIALECT_HOOKS && o.GetProtocolVersion() == "draft")
}

// catalogueVal is event.catalogue for CEL: the typed members of a Hooks "draft" event in their
// proto (snake_case) names, absent members omitted, plus tool_origin ("native" or "mcp") for tool
// events; an empty object for other events. Built only when a rule reads it.
func catalogueVal(adapter types.Adapter, ev *ahpv1.Event) ref.Val {
	c := ev.GetCatalogue()
	if c == nil {
		return emptyObject
	}
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(c)
	if err != nil {
		return emptyObject
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(raw, s); err != nil {
		return emptyObject
	}
	// protojson writes 64-bit integers as strings; CEL rules compare them with numbers.
	if a := s.Fields["attempt"].GetStructValue(); a != nil && c.GetAttempt() != nil {
		a.Fields["number"] = structpb.NewNumberValue(float64(c.GetAttempt().GetNumber()))
	}
	if u := s.Fields["usage"].GetStructValue(); u != nil {
		for key, p := range map[string]*uint64{"input_tokens": c.GetUsage().InputTokens, "output_tokens": c.GetUsage().OutputTokens,
			"cache_read_tokens": c.GetUsage().CacheReadTokens, "cache_write_tokens": c.GetUsage().CacheWriteTokens} {
			if p != nil {
				u.Fields[key] = structpb.NewNumberValue(float64(*p))
			}
		}
	}
	if o := ev.GetTool().GetOrigin(); o != "" {
		s.Fields["tool_origin"] = structpb.NewStringValue(o)
	}
	return structVal(adapter, s)
}
