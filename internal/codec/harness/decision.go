package harness

// Decisions in their exact wire shapes: every decision enum of the reference is internally tagged
// by "decision" with lower-case variant names. Keys come out sorted; Options are skipped when None
// except where serde writes null (refine's fields and the PerceptionTarget inside it); f32 fields
// are widened to f64 as serde_json::to_value does.

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/proto"
)

// ---- generic Decision ----

var decisionVariants = []string{"allow", "block", "modify", "defer", "escalate"}

// EncodeDecision writes a generic Decision, e.g. {"decision":"allow"} or
// {"decision":"defer","reason":"busy","retry_after_ms":1000}.
func EncodeDecision(d *ahpv1.HarnessDecision) ([]byte, error) {
	obj, err := decisionJSON("", d)
	if err != nil {
		return nil, err
	}
	return jsonwire.Marshal(obj)
}

func decodeDecision(path string, v any) (*ahpv1.HarnessDecision, error) {
	variant, obj, err := readTagged(path, v, "Decision", decisionVariants)
	if err != nil {
		return nil, err
	}
	d := &ahpv1.HarnessDecision{}
	var fields []structField
	switch variant {
	case "allow":
		x := &ahpv1.HarnessDecision_Allow{}
		d.Decision = &ahpv1.HarnessDecision_Allow_{Allow: x}
		fields = []structField{optValue("modified_payload", &x.ModifiedPayload), optMap("metadata", &x.Metadata)}
	case "block":
		x := &ahpv1.HarnessDecision_Block{}
		d.Decision = &ahpv1.HarnessDecision_Block_{Block: x}
		fields = []structField{reqString("reason", &x.Reason), optMap("metadata", &x.Metadata)}
	case "modify":
		x := &ahpv1.HarnessDecision_Modify{}
		d.Decision = &ahpv1.HarnessDecision_Modify_{Modify: x}
		fields = []structField{reqValue("modified_payload", &x.ModifiedPayload), optMap("metadata", &x.Metadata)}
	case "defer":
		x := &ahpv1.HarnessDecision_Defer{}
		d.Decision = &ahpv1.HarnessDecision_Defer_{Defer: x}
		fields = []structField{reqUint("retry_after_ms", u64Type, &x.RetryAfterMs), optString("reason", &x.Reason)}
	case "escalate":
		x := &ahpv1.HarnessDecision_Escalate{}
		d.Decision = &ahpv1.HarnessDecision_Escalate_{Escalate: x}
		fields = []structField{reqString("reason", &x.Reason), optString("escalation_target", &x.EscalationTarget)}
	}
	if err := readStruct(path, obj, "Decision", fields); err != nil {
		return nil, err
	}
	return d, nil
}

func decisionJSON(path string, d *ahpv1.HarnessDecision) (map[string]any, error) {
	out := map[string]any{}
	switch x := d.GetDecision().(type) {
	case *ahpv1.HarnessDecision_Allow_:
		out["decision"] = "allow"
		if x.Allow.GetModifiedPayload() != nil {
			out["modified_payload"] = jsonwire.FromValue(x.Allow.GetModifiedPayload())
		}
		putMap(out, "metadata", x.Allow.GetMetadata())
	case *ahpv1.HarnessDecision_Block_:
		out["decision"], out["reason"] = "block", x.Block.GetReason()
		putMap(out, "metadata", x.Block.GetMetadata())
	case *ahpv1.HarnessDecision_Modify_:
		out["decision"], out["modified_payload"] = "modify", valueJSON(x.Modify.GetModifiedPayload())
		putMap(out, "metadata", x.Modify.GetMetadata())
	case *ahpv1.HarnessDecision_Defer_:
		out["decision"], out["retry_after_ms"] = "defer", u64JSON(x.Defer.GetRetryAfterMs())
		putString(out, "reason", nonNil(x.Defer).Reason)
	case *ahpv1.HarnessDecision_Escalate_:
		out["decision"], out["reason"] = "escalate", x.Escalate.GetReason()
		putString(out, "escalation_target", nonNil(x.Escalate).EscalationTarget)
	default:
		return nil, requiredErr(jsonwire.JoinPath(path, "decision"), "a decision")
	}
	return out, nil
}

// ---- typed decisions ----

// typedDecisionCodec reads and writes the decision of one typed event type.
type typedDecisionCodec struct {
	decode func(path string, v any) (proto.Message, error)
	encode func(m proto.Message) (map[string]any, error)
}

func typedDecisionOf[T proto.Message](dec func(string, any) (T, error), enc func(T) (map[string]any, error)) typedDecisionCodec {
	return typedDecisionCodec{
		decode: decodeAs(dec),
		encode: func(m proto.Message) (map[string]any, error) {
			t, err := messageAs[T](m)
			if err != nil {
				return nil, err
			}
			return enc(t)
		},
	}
}

// typedDecisions is keyed by typed event type, which is also the name of the matching
// Decision.typed field.
var typedDecisions = map[string]typedDecisionCodec{
	"idle":               typedDecisionOf(decodeIdleDecision, idleDecisionJSON),
	"intent_detection":   typedDecisionOf(decodeIntentDecision, intentDecisionJSON),
	"context_perception": typedDecisionOf(decodePerceptionDecision, perceptionDecisionJSON),
	"memory_recall":      typedDecisionOf(decodeMemoryDecision, memoryDecisionJSON),
	"planning":           typedDecisionOf(decodePlanningDecision, planningDecisionJSON),
	"reasoning":          typedDecisionOf(decodeReasoningDecision, reasoningDecisionJSON),
	"rate_limit":         typedDecisionOf(decodeRateLimitDecision, rateLimitDecisionJSON),
	"confirmation":       typedDecisionOf(decodeConfirmationDecision, confirmationDecisionJSON),
}

// EncodeTypedDecision writes a typed decision (*ahpv1.IdleDecision,
// *ahpv1.IntentDetectionDecision, ..., *ahpv1.ConfirmationDecision) in the reference's exact bytes,
// e.g. {"confidence":0.949999988079071,"decision":"allow","detected_intent":"locate"}.
func EncodeTypedDecision(m proto.Message) ([]byte, error) {
	name, ok := oneofFieldOf(&ahpv1.Decision{}, "typed", m)
	if !ok {
		return nil, fmt.Errorf("convert: %T is not a Harness typed decision", m)
	}
	obj, err := typedDecisions[name].encode(m)
	if err != nil {
		return nil, err
	}
	return jsonwire.Marshal(obj)
}

// DecodeTypedDecision reads the typed decision of the named typed event type with serde's
// rules, into the matching message (*ahpv1.IdleDecision for "idle", ...).
func DecodeTypedDecision(eventType, path string, v any) (proto.Message, error) {
	c, ok := typedDecisions[eventType]
	if !ok {
		return nil, fmt.Errorf("convert: harness event type %q has no typed decision", eventType)
	}
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	return c.decode(path, v)
}

// typedBlock decodes the fields of a typed block variant; withMetadata is false for the
// variants that carry only a reason.
func typedBlock(withMetadata bool) (*ahpv1.TypedBlock, []structField) {
	b := &ahpv1.TypedBlock{}
	fields := []structField{reqString("reason", &b.Reason)}
	if withMetadata {
		fields = append(fields, optMap("metadata", &b.Metadata))
	}
	return b, fields
}

func typedBlockJSON(tag string, b *ahpv1.TypedBlock, withMetadata bool) map[string]any {
	out := map[string]any{"decision": tag, "reason": b.GetReason()}
	if withMetadata {
		putMap(out, "metadata", b.GetMetadata())
	}
	return out
}

// idle

func decodeIdleDecision(path string, v any) (*ahpv1.IdleDecision, error) {
	variant, obj, err := readTagged(path, v, "IdleDecision", []string{"allow", "defer"})
	if err != nil {
		return nil, err
	}
	if variant == "allow" {
		return &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Allow_{Allow: &ahpv1.IdleDecision_Allow{}}}, nil
	}
	x := &ahpv1.IdleDecision_Defer{}
	if err := readStruct(path, obj, "IdleDecision", []structField{optString("reason", &x.Reason)}); err != nil {
		return nil, err
	}
	return &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Defer_{Defer: x}}, nil
}

func idleDecisionJSON(d *ahpv1.IdleDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.IdleDecision_Allow_:
		return map[string]any{"decision": "allow"}, nil
	case *ahpv1.IdleDecision_Defer_:
		out := map[string]any{"decision": "defer"}
		putString(out, "reason", nonNil(x.Defer).Reason)
		return out, nil
	}
	return nil, requiredErr("decision", "a decision")
}

// intent_detection

func decodeIntentDecision(path string, v any) (*ahpv1.IntentDetectionDecision, error) {
	variant, obj, err := readTagged(path, v, "IntentDetectionDecision", []string{"allow", "block"})
	if err != nil {
		return nil, err
	}
	if variant == "block" {
		b, fields := typedBlock(false)
		if err := readStruct(path, obj, "IntentDetectionDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Block{Block: b}}, nil
	}
	x := &ahpv1.IntentDetectionDecision_Allow{}
	err = readStruct(path, obj, "IntentDetectionDecision", []structField{
		reqString("detected_intent", &x.DetectedIntent),
		reqF32("confidence", &x.Confidence),
		opt("target_hints", &x.TargetHints, decodeTargetHints),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Allow_{Allow: x}}, nil
}

func decodeTargetHints(path string, v any) (*ahpv1.TargetHints, error) {
	h := &ahpv1.TargetHints{}
	return readInto(h, path, v, "TargetHints", []structField{
		optString("target_type", &h.TargetType),
		optString("target_name", &h.TargetName),
		optString("domain", &h.Domain),
	})
}

func intentDecisionJSON(d *ahpv1.IntentDetectionDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.IntentDetectionDecision_Allow_:
		out := map[string]any{
			"decision":        "allow",
			"detected_intent": x.Allow.GetDetectedIntent(),
			"confidence":      serde.f32(x.Allow.GetConfidence()),
		}
		if h := x.Allow.GetTargetHints(); h != nil {
			hints := map[string]any{}
			putString(hints, "target_type", h.TargetType)
			putString(hints, "target_name", h.TargetName)
			putString(hints, "domain", h.Domain)
			out["target_hints"] = hints
		}
		return out, nil
	case *ahpv1.IntentDetectionDecision_Block:
		return typedBlockJSON("block", x.Block, false), nil
	}
	return nil, requiredErr("decision", "a decision")
}

// context_perception

func decodePerceptionDecision(path string, v any) (*ahpv1.ContextPerceptionDecision, error) {
	variant, obj, err := readTagged(path, v, "ContextPerceptionDecision", []string{"allow", "block", "refine"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "block":
		b, fields := typedBlock(true)
		if err := readStruct(path, obj, "ContextPerceptionDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Block{Block: b}}, nil
	case "refine":
		x := &ahpv1.ContextPerceptionDecision_Refine{}
		err := readStruct(path, obj, "ContextPerceptionDecision", []structField{
			{name: "refined_intent", optional: true, decode: func(p string, v any) error {
				if v == nil {
					return nil
				}
				n, err := readEnum(p, v, ahpv1.PerceptionIntent(0).Descriptor())
				x.RefinedIntent = ahpv1.PerceptionIntent(n)
				return err
			}},
			opt("refined_target", &x.RefinedTarget, decodeTarget),
			reqStrings("scope_hints", &x.ScopeHints),
		})
		if err != nil {
			return nil, err
		}
		return &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Refine_{Refine: x}}, nil
	}
	x := &ahpv1.ContextPerceptionDecision_Allow{}
	err = readStruct(path, obj, "ContextPerceptionDecision", []structField{
		{name: "injected_context", decode: func(p string, v any) (err error) {
			x.InjectedContext, err = decodeInjectedContext(p, v)
			return err
		}},
		optMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Allow_{Allow: x}}, nil
}

func perceptionDecisionJSON(d *ahpv1.ContextPerceptionDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.ContextPerceptionDecision_Allow_:
		out := map[string]any{
			"decision":         "allow",
			"injected_context": injectedContextJSON(x.Allow.GetInjectedContext()),
		}
		putMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.ContextPerceptionDecision_Block:
		return typedBlockJSON("block", x.Block, true), nil
	case *ahpv1.ContextPerceptionDecision_Refine_:
		// refine's fields have no skip_serializing_if: unset ones are null.
		out := map[string]any{
			"decision":       "refine",
			"refined_intent": nil,
			"refined_target": nil,
			"scope_hints":    stringsJSON(x.Refine.GetScopeHints()),
		}
		if x.Refine.GetRefinedIntent() != ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNSPECIFIED {
			name, err := enumWire("refined_intent", x.Refine.GetRefinedIntent())
			if err != nil {
				return nil, err
			}
			out["refined_intent"] = name
		}
		if t := x.Refine.GetRefinedTarget(); t != nil {
			j, err := targetJSON("refined_target", t, serde)
			if err != nil {
				return nil, err
			}
			out["refined_target"] = j
		}
		return out, nil
	}
	return nil, requiredErr("decision", "a decision")
}

func decodeProjectSummary(path string, v any) (*ahpv1.ProjectSummary, error) {
	s := &ahpv1.ProjectSummary{}
	return readInto(s, path, v, "ProjectSummary", []structField{
		reqString("project_name", &s.ProjectName),
		optString("language", &s.Language),
		optStrings("key_files", &s.KeyFiles),
		reqString("structure_description", &s.StructureDescription),
	})
}

func decodeInjectedContext(path string, v any) (*ahpv1.InjectedContext, error) {
	c := &ahpv1.InjectedContext{}
	return readInto(c, path, v, "InjectedContext", []structField{
		{name: "facts", decode: func(p string, v any) (err error) {
			c.Facts, err = decodeFacts(p, v)
			return err
		}},
		{name: "file_contents", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			list := &ahpv1.FileContentSnippetList{Values: []*ahpv1.FileContentSnippet{}}
			err := readSeq(p, v, func(p string, v any) error {
				s := &ahpv1.FileContentSnippet{}
				err := readStruct(p, v, "FileContentSnippet", []structField{
					reqString("path", &s.Path),
					reqString("snippet", &s.Snippet),
					reqF32("relevance_score", &s.RelevanceScore),
				})
				list.Values = append(list.Values, s)
				return err
			})
			c.FileContents = list
			return err
		}},
		opt("project_summary", &c.ProjectSummary, decodeProjectSummary),
		optStrings("knowledge", &c.Knowledge),
		optStrings("suggestions", &c.Suggestions),
	})
}

func injectedContextJSON(c *ahpv1.InjectedContext) map[string]any {
	out := map[string]any{"facts": factsJSON(c.GetFacts(), serde)}
	if c.GetFileContents() != nil {
		list := []any{}
		for _, s := range c.GetFileContents().GetValues() {
			list = append(list, map[string]any{
				"path":            s.GetPath(),
				"snippet":         s.GetSnippet(),
				"relevance_score": serde.f32(s.GetRelevanceScore()),
			})
		}
		out["file_contents"] = list
	}
	if s := c.GetProjectSummary(); s != nil {
		j := map[string]any{"project_name": s.GetProjectName(), "structure_description": s.GetStructureDescription()}
		putString(j, "language", s.Language)
		putStrings(j, "key_files", s.GetKeyFiles())
		out["project_summary"] = j
	}
	putStrings(out, "knowledge", c.GetKnowledge())
	putStrings(out, "suggestions", c.GetSuggestions())
	return out
}

// memory_recall

func decodeMemoryDecision(path string, v any) (*ahpv1.MemoryRecallDecision, error) {
	variant, obj, err := readTagged(path, v, "MemoryRecallDecision", []string{"allow", "block"})
	if err != nil {
		return nil, err
	}
	if variant == "block" {
		b, fields := typedBlock(true)
		if err := readStruct(path, obj, "MemoryRecallDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Block{Block: b}}, nil
	}
	x := &ahpv1.MemoryRecallDecision_Allow{}
	err = readStruct(path, obj, "MemoryRecallDecision", []structField{
		{name: "injected_facts", decode: func(p string, v any) (err error) {
			x.InjectedFacts, err = decodeFacts(p, v)
			return err
		}},
		optMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Allow_{Allow: x}}, nil
}

func memoryDecisionJSON(d *ahpv1.MemoryRecallDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.MemoryRecallDecision_Allow_:
		out := map[string]any{"decision": "allow", "injected_facts": factsJSON(x.Allow.GetInjectedFacts(), serde)}
		putMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.MemoryRecallDecision_Block:
		return typedBlockJSON("block", x.Block, true), nil
	}
	return nil, requiredErr("decision", "a decision")
}

// planning

func decodePlanningDecision(path string, v any) (*ahpv1.PlanningDecision, error) {
	variant, obj, err := readTagged(path, v, "PlanningDecision", []string{"allow", "block", "modify"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "block":
		b, fields := typedBlock(true)
		if err := readStruct(path, obj, "PlanningDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Block{Block: b}}, nil
	case "modify":
		x := &ahpv1.PlanningDecision_Modify{}
		err := readStruct(path, obj, "PlanningDecision", []structField{
			reqString("modified_task", &x.ModifiedTask),
			optStrings("hints", &x.Hints),
		})
		if err != nil {
			return nil, err
		}
		return &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Modify_{Modify: x}}, nil
	}
	x := &ahpv1.PlanningDecision_Allow{}
	err = readStruct(path, obj, "PlanningDecision", []structField{
		{name: "selected_strategy", decode: func(p string, v any) (err error) {
			x.SelectedStrategy, err = decodeStrategy(p, v)
			return err
		}},
		optValue("planning_template", &x.PlanningTemplate),
		optMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Allow_{Allow: x}}, nil
}

func planningDecisionJSON(d *ahpv1.PlanningDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.PlanningDecision_Allow_:
		strategy, err := strategyJSON("selected_strategy", x.Allow.GetSelectedStrategy())
		if err != nil {
			return nil, err
		}
		out := map[string]any{"decision": "allow", "selected_strategy": strategy}
		if x.Allow.GetPlanningTemplate() != nil {
			out["planning_template"] = jsonwire.FromValue(x.Allow.GetPlanningTemplate())
		}
		putMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.PlanningDecision_Block:
		return typedBlockJSON("block", x.Block, true), nil
	case *ahpv1.PlanningDecision_Modify_:
		out := map[string]any{"decision": "modify", "modified_task": x.Modify.GetModifiedTask()}
		putStrings(out, "hints", x.Modify.GetHints())
		return out, nil
	}
	return nil, requiredErr("decision", "a decision")
}

// reasoning

func decodeReasoningDecision(path string, v any) (*ahpv1.ReasoningDecision, error) {
	variant, obj, err := readTagged(path, v, "ReasoningDecision", []string{"allow", "block"})
	if err != nil {
		return nil, err
	}
	if variant == "block" {
		b, fields := typedBlock(true)
		if err := readStruct(path, obj, "ReasoningDecision", fields); err != nil {
			return nil, err
		}
		return &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Block{Block: b}}, nil
	}
	x := &ahpv1.ReasoningDecision_Allow{}
	err = readStruct(path, obj, "ReasoningDecision", []structField{
		optStrings("hints", &x.Hints),
		optMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Allow_{Allow: x}}, nil
}

func reasoningDecisionJSON(d *ahpv1.ReasoningDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.ReasoningDecision_Allow_:
		out := map[string]any{"decision": "allow"}
		putStrings(out, "hints", x.Allow.GetHints())
		putMap(out, "metadata", x.Allow.GetMetadata())
		return out, nil
	case *ahpv1.ReasoningDecision_Block:
		return typedBlockJSON("block", x.Block, true), nil
	}
	return nil, requiredErr("decision", "a decision")
}

// rate_limit

func decodeRateLimitDecision(path string, v any) (*ahpv1.RateLimitDecision, error) {
	variant, obj, err := readTagged(path, v, "RateLimitDecision", []string{"retry", "queue", "skip"})
	if err != nil {
		return nil, err
	}
	switch variant {
	case "queue":
		return &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Queue_{Queue: &ahpv1.RateLimitDecision_Queue{}}}, nil
	case "skip":
		x := &ahpv1.RateLimitDecision_Skip{}
		if err := readStruct(path, obj, "RateLimitDecision", []structField{reqString("reason", &x.Reason)}); err != nil {
			return nil, err
		}
		return &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Skip_{Skip: x}}, nil
	}
	x := &ahpv1.RateLimitDecision_Retry{}
	err = readStruct(path, obj, "RateLimitDecision", []structField{
		reqUint("retry_after_ms", u64Type, &x.RetryAfterMs),
		optMap("metadata", &x.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Retry_{Retry: x}}, nil
}

func rateLimitDecisionJSON(d *ahpv1.RateLimitDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.RateLimitDecision_Retry_:
		out := map[string]any{"decision": "retry", "retry_after_ms": u64JSON(x.Retry.GetRetryAfterMs())}
		putMap(out, "metadata", x.Retry.GetMetadata())
		return out, nil
	case *ahpv1.RateLimitDecision_Queue_:
		return map[string]any{"decision": "queue"}, nil
	case *ahpv1.RateLimitDecision_Skip_:
		return map[string]any{"decision": "skip", "reason": x.Skip.GetReason()}, nil
	}
	return nil, requiredErr("decision", "a decision")
}

// confirmation

func decodeConfirmationDecision(path string, v any) (*ahpv1.ConfirmationDecision, error) {
	variant, obj, err := readTagged(path, v, "ConfirmationDecision", []string{"escalate", "approve", "reject"})
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
	if err := readStruct(path, obj, "ConfirmationDecision", []structField{reqString("reason", &x.Reason)}); err != nil {
		return nil, err
	}
	return &ahpv1.ConfirmationDecision{Decision: &ahpv1.ConfirmationDecision_Reject_{Reject: x}}, nil
}

func confirmationDecisionJSON(d *ahpv1.ConfirmationDecision) (map[string]any, error) {
	switch x := d.GetDecision().(type) {
	case *ahpv1.ConfirmationDecision_Escalate_:
		return map[string]any{"decision": "escalate"}, nil
	case *ahpv1.ConfirmationDecision_Approve_:
		return map[string]any{"decision": "approve"}, nil
	case *ahpv1.ConfirmationDecision_Reject_:
		return map[string]any{"decision": "reject", "reason": x.Reject.GetReason()}, nil
	}
	return nil, requiredErr("decision", "a decision")
}
