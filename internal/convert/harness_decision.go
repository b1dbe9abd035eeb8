package convert

// Decisions in their exact wire shapes: every decision enum of the reference is internally tagged
// by "decision" with lower-case variant names. Keys come out sorted; Options are skipped when None
// except where serde writes null (refine's fields and the PerceptionTarget inside it); f32 fields
// are widened to f64 as serde_json::to_value does.

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
)

// ---- generic Decision ----

var harnessDecisionVariants = []string{"allow", "block", "modify", "defer", "escalate"}

// EncodeHarnessDecision writes a generic Decision, e.g. {"decision":"allow"} or
// {"decision":"defer","reason":"busy","retry_after_ms":1000}.
func EncodeHarnessDecision(d *ahpv1.HarnessDecision) ([]byte, error) {
	obj, err := harnessDecisionJSON("", d)
	if err != nil {
		return nil, err
	}
	return marshalJSON(obj)
}

// DecodeHarnessDecision reads a generic Decision with serde's rules: the tag is required and
// case-sensitive, required fields must be present, unknown fields are ignored.
func DecodeHarnessDecision(path string, v any) (*ahpv1.HarnessDecision, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	return harnessDecodeDecision(path, v)
}

func harnessDecodeDecision(path string, v any) (*ahpv1.HarnessDecision, error) {
	variant, obj, err := harnessTagged(path, v, "Decision", harnessDecisionVariants)
	if err != nil {
		return nil, err
	}
	d := &ahpv1.HarnessDecision{}
	var fields []harnessField
	switch variant {
	case "allow":
		x := &ahpv1.HarnessDecision_Allow{}
		d.Decision = &ahpv1.HarnessDecision_Allow_{Allow: x}
		fields = []harnessField{harnessOptValue("modified_payload", &x.ModifiedPayload), harnessOptMap("metadata", &x.Metadata)}
	case "block":
		x := &ahpv1.HarnessDecision_Block{}
		d.Decision = &ahpv1.HarnessDecision_Block_{Block: x}
		fields = []harnessField{harnessReqString("reason", &x.Reason), harnessOptMap("metadata", &x.Metadata)}
	case "modify":
		x := &ahpv1.HarnessDecision_Modify{}
		d.Decision = &ahpv1.HarnessDecision_Modify_{Modify: x}
		fields = []harnessField{harnessReqValue("modified_payload", &x.ModifiedPayload), harnessOptMap("metadata", &x.Metadata)}
	case "defer":
		x := &ahpv1.HarnessDecision_Defer{}
		d.Decision = &ahpv1.HarnessDecision_Defer_{Defer: x}
		fields = []harnessField{harnessReqUint("retry_after_ms", harnessU64, &x.RetryAfterMs), harnessOptString("reason", &x.Reason)}
	case "escalate":
		x := &ahpv1.HarnessDecision_Escalate{}
		d.Decision = &ahpv1.HarnessDecision_Escalate_{Escalate: x}
		fields = []harnessField{harnessReqString("reason", &x.Reason), harnessOptString("escalation_target", &x.EscalationTarget)}
	}
	if err := harnessStruct(path, obj, "Decision", fields); err != nil {
		return nil, err
	}
	return d, nil
}

func harnessDecisionJSON(path string, d *ahpv1.HarnessDecision) (map[string]any, error) {
	out := map[string]any{}
	switch x := d.GetDecision().(type) {
	case *ahpv1.HarnessDecision_Allow_:
		out["decision"] = "allow"
		if x.Allow.GetModifiedPayload() != nil {
			out["modified_payload"] = fromValue(x.Allow.GetModifiedPayload())
		}
		harnessPutMap(out, "metadata", x.Allow.GetMetadata())
	case *ahpv1.HarnessDecision_Block_:
		out["decision"], out["reason"] = "block", x.Block.GetReason()
		harnessPutMap(out, "metadata", x.Block.GetMetadata())
	case *ahpv1.HarnessDecision_Modify_:
		out["decision"], out["modified_payload"] = "modify", harnessValueJSON(x.Modify.GetModifiedPayload())
		harnessPutMap(out, "metadata", x.Modify.GetMetadata())
	case *ahpv1.HarnessDecision_Defer_:
		out["decision"], out["retry_after_ms"] = "defer", harnessU64JSON(x.Defer.GetRetryAfterMs())
		harnessPutString(out, "reason", harnessNonNil(x.Defer).Reason)
	case *ahpv1.HarnessDecision_Escalate_:
		out["decision"], out["reason"] = "escalate", x.Escalate.GetReason()
		harnessPutString(out, "escalation_target", harnessNonNil(x.Escalate).EscalationTarget)
	default:
		return nil, harnessRequired(joinPath(path, "decision"), "a decision")
	}
	return out, nil
}

// ---- typed decisions ----

// harnessTypedDecisionCodec reads and writes the decision of one typed event type.
type harnessTypedDecisionCodec struct {
	decode func(path string, v any) (proto.Message, error)
	encode func(m proto.Message) (map[string]any, error)
}

func harnessTypedDecisionOf[T proto.Message](dec func(string, any) (T, error), enc func(T) (map[string]any, error)) harnessTypedDecisionCodec {
	return harnessTypedDecisionCodec{
		decode: func(path string, v any) (proto.Message, error) {
			m, err := dec(path, v)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
		encode: func(m proto.Message) (map[string]any, error) {
			t, ok := m.(T)
			if !ok || !m.ProtoReflect().IsValid() {
				return nil, fmt.Errorf("convert: want a non-nil %T, got %T", *new(T), m)
			}
			return enc(t)
		},
	}
}

// harnessTypedDecisions is keyed by typed event type, which is also the name of the matching
// Decision.typed field.
var harnessTypedDecisions = map[string]harnessTypedDecisionCodec{
	"idle":               harnessTypedDecisionOf(harnessDecodeIdleDecision, harnessIdleDecisionJSON),
	"intent_detection":   harnessTypedDecisionOf(harnessDecodeIntentDecision, harnessIntentDecisionJSON),
	"context_perception": harnessTypedDecisionOf(harnessDecodePerceptionDecision, harnessPerceptionDecisionJSON),
	"memory_recall":      harnessTypedDecisionOf(harnessDecodeMemoryDecision, harnessMemoryDecisionJSON),
	"planning":           harnessTypedDecisionOf(harnessDecodePlanningDecision, harnessPlanningDecisionJSON),
	"reasoning":          harnessTypedDecisionOf(harnessDecodeReasoningDecision, harnessReasoningDecisionJSON),
	"rate_limit":         harnessTypedDecisionOf(harnessDecodeRateLimitDecision, harnessRateLimitDecisionJSON),
	"confirmation":       harnessTypedDecisionOf(harnessDecodeConfirmationDecision, harnessConfirmationDecisionJSON),
}

// EncodeHarnessTypedDecision writes a typed decision (*ahpv1.IdleDecision,
// *ahpv1.IntentDetectionDecision, ..., *ahpv1.ConfirmationDecision) in the reference's exact bytes,
// e.g. {"confidence":0.949999988079071,"decision":"allow","detected_intent":"locate"}.
func EncodeHarnessTypedDecision(m proto.Message) ([]byte, error) {
	name, ok := harnessTypedDecisionName(m)
	if !ok {
		return nil, fmt.Errorf("convert: %T is not a Harness typed decision", m)
	}
	obj, err := harnessTypedDecisions[name].encode(m)
	if err != nil {
		return nil, err
	}
	return marshalJSON(obj)
}

// DecodeHarnessTypedDecision reads the typed decision of the named typed event type with serde's
// rules, into the matching message (*ahpv1.IdleDecision for "idle", ...).
func DecodeHarnessTypedDecision(eventType, path string, v any) (proto.Message, error) {
	c, ok := harnessTypedDecisions[eventType]
	if !ok {
		return nil, fmt.Errorf("convert: harness event type %q has no typed decision", eventType)
	}
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	return c.decode(path, v)
}

// harnessTypedDecisionName finds the typed event type whose decision message type m is.
func harnessTypedDecisionName(m proto.Message) (string, bool) {
	if m == nil {
		return "", false
	}
	fields := (&ahpv1.Decision{}).ProtoReflect().Descriptor().Oneofs().ByName("typed").Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message().FullName() == m.ProtoReflect().Descriptor().FullName() {
			return string(fd.Name()), true
		}
	}
	return "", false
}

// harnessTyped returns the typed oneof of a canonical decision: event type name and message.
func harnessTyped(d *ahpv1.Decision) (string, proto.Message) {
	r := d.ProtoReflect()
	fd := r.WhichOneof(r.Descriptor().Oneofs().ByName("typed"))
	if fd == nil {
		return "", nil
	}
	return string(fd.Name()), r.Get(fd).Message().Interface()
}

// harnessTypedBlock decodes the fields of a typed block variant; withMetadata is false for the
// variants that carry only a reason.
func harnessTypedBlock(withMetadata bool) (*ahpv1.TypedBlock, []harnessField) {
	b := &ahpv1.TypedBlock{}
	fields := []harnessField{harnessReqString("reason", &b.Reason)}
	if withMetadata {
		fields = append(fields, harnessOptMap("metadata", &b.Metadata))
	}
	return b, fields
}

func harnessTypedBlockJSON(tag string, b *ahpv1.TypedBlock, withMetadata bool) map[string]any {
	out := map[string]any{"decision": tag, "reason": b.GetReason()}
	if withMetadata {
		harnessPutMap(out, "metadata", b.GetMetadata())
	}
	return out
}

// idle

func harnessDecodeIdleDecision(path string, v any) (*ahpv1.IdleDecision, error) {
	variant, obj, err := harnessTagged(path, v, "IdleDecision", []string{"allow", "defer"})
	if err != nil {
		return nil, err
	}
	if variant == "allow" {
		return &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Allow_{Allow: &ahpv1.IdleDecision_Allow{}}}, nil
	}
	x := &ahpv1.IdleDecision_Defer{}
	if err := harnessStruct(path, obj, "IdleDecision", []harnessField{harnessOptString("reason", &x.Reason)}); err != nil {
		return nil, err
	}
	return &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Defer_{Defer: x}}, nil
}

func harnessIdleDecisionJSON(d *ahpv1.IdleDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.IdleDecision_Allow_:
		return map[string]any{"decision": "allow"}, nil
	case *ahpv1.IdleDecision_Defer_:
		out := map[string]any{"decision": "defer"}
		harnessPutString(out, "reason", harnessNonNil(x.Defer).Reason)
		return out, nil
	}
	return nil, harnessRequired("decision", "a decision")
}

// intent_detection

func harnessDecodeIntentDecision(path string, v any) (*ahpv1.IntentDetectionDecision, error) {
	variant, obj, err := harnessTagged(path, v, "IntentDetectionDecision", []string{"allow", "block"})
	if err != nil {
		return nil, err
	}
	if variant == "block" {
		b, fields := harnessTypedBlock(false)
		if err := harnessStruct(path, obj, "IntentDetectionDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Block{Block: b}}, nil
	}
	x := &ahpv1.IntentDetectionDecision_Allow{}
	err = harnessStruct(path, obj, "IntentDetectionDecision", []harnessField{
		harnessReqString("detected_intent", &x.DetectedIntent),
		harnessReqF32("confidence", &x.Confidence),
		{name: "target_hints", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			h := &ahpv1.TargetHints{}
			err := harnessStruct(p, v, "TargetHints", []harnessField{
				harnessOptString("target_type", &h.TargetType),
				harnessOptString("target_name", &h.TargetName),
				harnessOptString("domain", &h.Domain),
			})
			x.TargetHints = h
			return err
		}},
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Allow_{Allow: x}}, nil
}

func harnessIntentDecisionJSON(d *ahpv1.IntentDetectionDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.IntentDetectionDecision_Allow_:
		out := map[string]any{
			"decision":        "allow",
			"detected_intent": x.Allow.GetDetectedIntent(),
			"confidence":      harnessSerde.f32(x.Allow.GetConfidence()),
		}
		if h := x.Allow.GetTargetHints(); h != nil {
			hints := map[string]any{}
			harnessPutString(hints, "target_type", h.TargetType)
			harnessPutString(hints, "target_name", h.TargetName)
			harnessPutString(hints, "domain", h.Domain)
			out["target_hints"] = hints
		}
		return out, nil
	case *ahpv1.IntentDetectionDecision_Block:
		return harnessTypedBlockJSON("block", x.Block, false), nil
	}
	return nil, harnessRequired("decision", "a decision")
}

// context_perception

func harnessDecodePerceptionDecision(path string, v any) (*ahpv1.ContextPerceptionDecision, error) {
	variant, obj, err := harnessTagged(path, v, "ContextPerceptionDecision", []string{"allow", "block", "refine"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "block":
		b, fields := harnessTypedBlock(true)
		if err := harnessStruct(path, obj, "ContextPerceptionDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Block{Block: b}}, nil
	case "refine":
		x := &ahpv1.ContextPerceptionDecision_Refine{}
		err := harnessStruct(path, obj, "ContextPerceptionDecision", []harnessField{
			{name: "refined_intent", optional: true, decode: func(p string, v any) error {
				if v == nil {
					return nil
				}
				n, err := harnessEnum(p, v, ahpv1.PerceptionIntent(0).Descriptor())
				x.RefinedIntent = ahpv1.PerceptionIntent(n)
				return err
			}},
			{name: "refined_target", optional: true, decode: func(p string, v any) (err error) {
				if v != nil {
					x.RefinedTarget, err = harnessDecodeTarget(p, v)
				}
				return err
			}},
			harnessReqStrings("scope_hints", &x.ScopeHints),
		})
		if err != nil {
			return nil, err
		}
		return &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Refine_{Refine: x}}, nil
	}
	x := &ahpv1.ContextPerceptionDecision_Allow{}
	err = harnessStruct(path, obj, "ContextPerceptionDecision", []harnessField{
		{name: "injected_context", decode: func(p string, v any) (err error) {
			x.InjectedContext, err = harnessDecodeInjectedContext(p, v)
			return err
		}},
		harnessOptMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Allow_{Allow: x}}, nil
}

func harnessPerceptionDecisionJSON(d *ahpv1.ContextPerceptionDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.ContextPerceptionDecision_Allow_:
		out := map[string]any{
			"decision":         "allow",
			"injected_context": harnessInjectedContextJSON(x.Allow.GetInjectedContext()),
		}
		harnessPutMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.ContextPerceptionDecision_Block:
		return harnessTypedBlockJSON("block", x.Block, true), nil
	case *ahpv1.ContextPerceptionDecision_Refine_:
		// refine's fields have no skip_serializing_if: unset ones are null.
		out := map[string]any{
			"decision":       "refine",
			"refined_intent": nil,
			"refined_target": nil,
			"scope_hints":    harnessStringsJSON(x.Refine.GetScopeHints()),
		}
		if x.Refine.GetRefinedIntent() != ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNSPECIFIED {
			name, err := harnessEnumName("refined_intent", x.Refine.GetRefinedIntent())
			if err != nil {
				return nil, err
			}
			out["refined_intent"] = name
		}
		if t := x.Refine.GetRefinedTarget(); t != nil {
			j, err := harnessTargetJSON("refined_target", t, harnessSerde)
			if err != nil {
				return nil, err
			}
			out["refined_target"] = j
		}
		return out, nil
	}
	return nil, harnessRequired("decision", "a decision")
}

func harnessDecodeInjectedContext(path string, v any) (*ahpv1.InjectedContext, error) {
	c := &ahpv1.InjectedContext{}
	err := harnessStruct(path, v, "InjectedContext", []harnessField{
		{name: "facts", decode: func(p string, v any) (err error) {
			c.Facts, err = harnessDecodeFacts(p, v)
			return err
		}},
		{name: "file_contents", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			list := &ahpv1.FileContentSnippetList{Values: []*ahpv1.FileContentSnippet{}}
			err := harnessSeq(p, v, func(p string, v any) error {
				s := &ahpv1.FileContentSnippet{}
				err := harnessStruct(p, v, "FileContentSnippet", []harnessField{
					harnessReqString("path", &s.Path),
					harnessReqString("snippet", &s.Snippet),
					harnessReqF32("relevance_score", &s.RelevanceScore),
				})
				list.Values = append(list.Values, s)
				return err
			})
			c.FileContents = list
			return err
		}},
		{name: "project_summary", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			s := &ahpv1.ProjectSummary{}
			err := harnessStruct(p, v, "ProjectSummary", []harnessField{
				harnessReqString("project_name", &s.ProjectName),
				harnessOptString("language", &s.Language),
				harnessOptStrings("key_files", &s.KeyFiles),
				harnessReqString("structure_description", &s.StructureDescription),
			})
			c.ProjectSummary = s
			return err
		}},
		harnessOptStrings("knowledge", &c.Knowledge),
		harnessOptStrings("suggestions", &c.Suggestions),
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func harnessInjectedContextJSON(c *ahpv1.InjectedContext) map[string]any {
	out := map[string]any{"facts": harnessFactsJSON(c.GetFacts(), harnessSerde)}
	if c.GetFileContents() != nil {
		list := []any{}
		for _, s := range c.GetFileContents().GetValues() {
			list = append(list, map[string]any{
				"path":            s.GetPath(),
				"snippet":         s.GetSnippet(),
				"relevance_score": harnessSerde.f32(s.GetRelevanceScore()),
			})
		}
		out["file_contents"] = list
	}
	if s := c.GetProjectSummary(); s != nil {
		j := map[string]any{"project_name": s.GetProjectName(), "structure_description": s.GetStructureDescription()}
		harnessPutString(j, "language", s.Language)
		harnessPutStrings(j, "key_files", s.GetKeyFiles())
		out["project_summary"] = j
	}
	harnessPutStrings(out, "knowledge", c.GetKnowledge())
	harnessPutStrings(out, "suggestions", c.GetSuggestions())
	return out
}

// memory_recall

func harnessDecodeMemoryDecision(path string, v any) (*ahpv1.MemoryRecallDecision, error) {
	variant, obj, err := harnessTagged(path, v, "MemoryRecallDecision", []string{"allow", "block"})
	if err != nil {
		return nil, err
	}
	if variant == "block" {
		b, fields := harnessTypedBlock(true)
		if err := harnessStruct(path, obj, "MemoryRecallDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Block{Block: b}}, nil
	}
	x := &ahpv1.MemoryRecallDecision_Allow{}
	err = harnessStruct(path, obj, "MemoryRecallDecision", []harnessField{
		{name: "injected_facts", decode: func(p string, v any) (err error) {
			x.InjectedFacts, err = harnessDecodeFacts(p, v)
			return err
		}},
		harnessOptMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Allow_{Allow: x}}, nil
}

func harnessMemoryDecisionJSON(d *ahpv1.MemoryRecallDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.MemoryRecallDecision_Allow_:
		out := map[string]any{"decision": "allow", "injected_facts": harnessFactsJSON(x.Allow.GetInjectedFacts(), harnessSerde)}
		harnessPutMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.MemoryRecallDecision_Block:
		return harnessTypedBlockJSON("block", x.Block, true), nil
	}
	return nil, harnessRequired("decision", "a decision")
}

// planning

func harnessDecodePlanningDecision(path string, v any) (*ahpv1.PlanningDecision, error) {
	variant, obj, err := harnessTagged(path, v, "PlanningDecision", []string{"allow", "block", "modify"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "block":
		b, fields := harnessTypedBlock(true)
		if err := harnessStruct(path, obj, "PlanningDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Block{Block: b}}, nil
	case "modify":
		x := &ahpv1.PlanningDecision_Modify{}
		err := harnessStruct(path, obj, "PlanningDecision", []harnessField{
			harnessReqString("modified_task", &x.ModifiedTask),
			harnessOptStrings("hints", &x.Hints),
		})
		if err != nil {
			return nil, err
		}
		return &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Modify_{Modify: x}}, nil
	}
	x := &ahpv1.PlanningDecision_Allow{}
	err = harnessStruct(path, obj, "PlanningDecision", []harnessField{
		{name: "selected_strategy", decode: func(p string, v any) (err error) {
			x.SelectedStrategy, err = harnessDecodeStrategy(p, v)
			return err
		}},
		harnessOptValue("planning_template", &x.PlanningTemplate),
		harnessOptMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Allow_{Allow: x}}, nil
}

func harnessPlanningDecisionJSON(d *ahpv1.PlanningDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.PlanningDecision_Allow_:
		strategy, err := harnessStrategyJSON("selected_strategy", x.Allow.GetSelectedStrategy())
		if err != nil {
			return nil, err
		}
		out := map[string]any{"decision": "allow", "selected_strategy": strategy}
		if x.Allow.GetPlanningTemplate() != nil {
			out["planning_template"] = fromValue(x.Allow.GetPlanningTemplate())
		}
		harnessPutMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.PlanningDecision_Block:
		return harnessTypedBlockJSON("block", x.Block, true), nil
	case *ahpv1.PlanningDecision_Modify_:
		out := map[string]any{"decision": "modify", "modified_task": x.Modify.GetModifiedTask()}
		harnessPutStrings(out, "hints", x.Modify.GetHints())
		return out, nil
	}
	return nil, harnessRequired("decision", "a decision")
}

// reasoning

func harnessDecodeReasoningDecision(path string, v any) (*ahpv1.ReasoningDecision, error) {
	variant, obj, err := harnessTagged(path, v, "ReasoningDecision", []string{"allow", "block"})
	if err != nil {
		return nil, err
	}
	if variant == "block" {
		b, fields := harnessTypedBlock(true)
		if err := harnessStruct(path, obj, "ReasoningDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Block{Block: b}}, nil
	}
	x := &ahpv1.ReasoningDecision_Allow{}
	err = harnessStruct(path, obj, "ReasoningDecision", []harnessField{
		harnessOptStrings("hints", &x.Hints),
		harnessOptMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Allow_{Allow: x}}, nil
}

func harnessReasoningDecisionJSON(d *ahpv1.ReasoningDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.ReasoningDecision_Allow_:
		out := map[string]any{"decision": "allow"}
		harnessPutStrings(out, "hints", x.Allow.GetHints())
		harnessPutMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.ReasoningDecision_Block:
		return harnessTypedBlockJSON("block", x.Block, true), nil
	}
	return nil, harnessRequired("decision", "a decision")
}

// rate_limit

func harnessDecodeRateLimitDecision(path string, v any) (*ahpv1.RateLimitDecision, error) {
	variant, obj, err := harnessTagged(path, v, "RateLimitDecision", []string{"retry", "queue", "skip"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "queue":
		return &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Queue_{Queue: &ahpv1.RateLimitDecision_Queue{}}}, nil
	case "skip":
		x := &ahpv1.RateLimitDecision_Skip{}
		if err := harnessStruct(path, obj, "RateLimitDecision", []harnessField{harnessReqString("reason", &x.Reason)}); err != nil {
			return nil, err
		}
		return &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Skip_{Skip: x}}, nil
	}
	x := &ahpv1.RateLimitDecision_Retry{}
	err = harnessStruct(path, obj, "RateLimitDecision", []harnessField{
		harnessReqUint("retry_after_ms", harnessU64, &x.RetryAfterMs),
		harnessOptMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Retry_{Retry: x}}, nil
}

func harnessRateLimitDecisionJSON(d *ahpv1.RateLimitDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.RateLimitDecision_Retry_:
		out := map[string]any{"decision": "retry", "retry_after_ms": harnessU64JSON(x.Retry.GetRetryAfterMs())}
		harnessPutMap(out, "metadata", x.Retry.GetMetadata())
		return out, nil
	case *ahpv1.RateLimitDecision_Queue_:
		return map[string]any{"decision": "queue"}, nil
	case *ahpv1.RateLimitDecision_Skip_:
		return map[string]any{"decision": "skip", "reason": x.Skip.GetReason()}, nil
	}
	return nil, harnessRequired("decision", "a decision")
}

// confirmation

func harnessDecodeConfirmationDecision(path string, v any) (*ahpv1.ConfirmationDecision, error) {
	variant, obj, err := harnessTagged(path, v, "ConfirmationDecision", []string{"escalate", "approve", "reject"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "escalate":
		return &ahpv1.ConfirmationDecision{Decision: &ahpv1.ConfirmationDecision_Escalate_{Escalate: &ahpv1.ConfirmationDecision_Escalate{}}}, nil
	case "approve":
		return &ahpv1.ConfirmationDecision{Decision: &ahpv1.ConfirmationDecision_Approve_{Approve: &ahpv1.ConfirmationDecision_Approve{}}}, nil
	}
	x := &ahpv1.ConfirmationDecision_Reject{}
	if err := harnessStruct(path, obj, "ConfirmationDecision", []harnessField{harnessReqString("reason", &x.Reason)}); err != nil {
		return nil, err
	}
	return &ahpv1.ConfirmationDecision{Decision: &ahpv1.ConfirmationDecision_Reject_{Reject: x}}, nil
}

func harnessConfirmationDecisionJSON(d *ahpv1.ConfirmationDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.ConfirmationDecision_Escalate_:
		return map[string]any{"decision": "escalate"}, nil
	case *ahpv1.ConfirmationDecision_Approve_:
		return map[string]any{"decision": "approve"}, nil
	case *ahpv1.ConfirmationDecision_Reject_:
		return map[string]any{"decision": "reject", "reason": x.Reject.GetReason()}, nil
	}
	return nil, harnessRequired("decision", "a decision")
}
