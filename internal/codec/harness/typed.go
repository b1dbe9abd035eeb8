package harness

// Payloads of the eight Harness typed events (idle, intent_detection, context_perception,
// memory_recall, planning, reasoning, rate_limit, confirmation) and their supporting types.
//
// Decoding never fills in serde defaults (domain general, modality any, include_sources true, ...):
// absence stays UNSPECIFIED or unset so that the event converts back to the JSON it came from. The
// serde encoder (serde) writes the defaults the way the reference re-serializes a payload.

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
)

// ---- idle ----

func decodeIdle(path string, v any) (*ahpv1.IdlePayload, error) {
	m := &ahpv1.IdlePayload{}
	return readInto(m, path, v, "IdleEvent", []structField{
		reqUint("idle_duration_ms", u64Type, &m.IdleDurationMs),
		reqString("idle_reason", &m.IdleReason),
		optString("last_event_type", &m.LastEventType),
		optString("suggested_action", &m.SuggestedAction),
	})
}

func idleJSON(m *ahpv1.IdlePayload, _ encoder) (map[string]any, error) {
	out := map[string]any{
		"idle_duration_ms": u64JSON(m.GetIdleDurationMs()),
		"idle_reason":      m.GetIdleReason(),
	}
	putString(out, "last_event_type", m.LastEventType)
	putString(out, "suggested_action", m.SuggestedAction)
	return out, nil
}

// ---- intent_detection ----

func decodeIntentDetection(path string, v any) (*ahpv1.IntentDetectionPayload, error) {
	m := &ahpv1.IntentDetectionPayload{}
	return readInto(m, path, v, "IntentDetectionEvent", []structField{
		reqString("session_id", &m.SessionId),
		reqString("prompt", &m.Prompt),
		reqString("workspace", &m.Workspace),
		optString("language_hint", &m.LanguageHint),
	})
}

func intentDetectionJSON(m *ahpv1.IntentDetectionPayload, _ encoder) (map[string]any, error) {
	out := map[string]any{
		"session_id": m.GetSessionId(),
		"prompt":     m.GetPrompt(),
		"workspace":  m.GetWorkspace(),
	}
	putString(out, "language_hint", m.LanguageHint)
	return out, nil
}

// ---- context_perception ----

func decodeContextPerception(path string, v any) (*ahpv1.ContextPerceptionPayload, error) {
	m := &ahpv1.ContextPerceptionPayload{}
	return readInto(m, path, v, "ContextPerceptionEvent", []structField{
		reqString("session_id", &m.SessionId),
		reqEnum("intent", &m.Intent),
		{name: "target", decode: func(p string, v any) (err error) {
			m.Target, err = decodeTarget(p, v)
			return err
		}},
		{name: "domain", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := readEnum(p, v, ahpv1.PerceptionDomain(0).Descriptor())
			m.Domain = ahpv1.PerceptionDomain(n)
			return err
		}},
		{name: "preferred_modality", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := readEnum(p, v, ahpv1.PerceptionModality(0).Descriptor())
			m.PreferredModality = ahpv1.PerceptionModality(n)
			return err
		}},
		{name: "urgency", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := readEnum(p, v, ahpv1.PerceptionUrgency(0).Descriptor())
			m.Urgency = ahpv1.PerceptionUrgency(n)
			return err
		}},
		{name: "freshness", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := readEnum(p, v, ahpv1.PerceptionFreshness(0).Descriptor())
			m.Freshness = ahpv1.PerceptionFreshness(n)
			return err
		}},
		{name: "context", decode: func(p string, v any) (err error) {
			m.Context, err = decodePerceptionContext(p, v)
			return err
		}},
		{name: "constraints", optional: true, defaulted: true, decode: func(p string, v any) (err error) {
			m.Constraints, err = decodeConstraints(p, v)
			return err
		}},
		optMap("metadata", &m.Metadata),
	})
}

func contextPerceptionJSON(m *ahpv1.ContextPerceptionPayload, e encoder) (map[string]any, error) {
	out := map[string]any{"session_id": m.GetSessionId()}
	intent, err := enumWire("intent", m.GetIntent())
	if err != nil {
		return nil, err
	}
	out["intent"] = intent
	if out["target"], err = targetJSON("target", m.GetTarget(), e); err != nil {
		return nil, err
	}
	// Defaults: absent (UNSPECIFIED) is written as the serde default, or left out when lossless.
	defaults := []struct {
		key, def, name string
	}{
		{"domain", "general", names.EnumWireName(m.GetDomain())},
		{"preferred_modality", "any", names.EnumWireName(m.GetPreferredModality())},
		{"urgency", "normal", names.EnumWireName(m.GetUrgency())},
		{"freshness", "static", names.EnumWireName(m.GetFreshness())},
	}
	for _, d := range defaults {
		switch {
		case d.name != "":
			out[d.key] = d.name
		case !e.lossless:
			out[d.key] = d.def
		}
	}
	if m.GetContext() == nil {
		return nil, requiredErr("context", "context")
	}
	out["context"] = perceptionContextJSON(m.GetContext())
	if m.GetConstraints() != nil || !e.lossless {
		out["constraints"] = constraintsJSON(m.GetConstraints(), e)
	}
	putMap(out, "metadata", m.GetMetadata())
	return out, nil
}

func decodePerceptionContext(path string, v any) (*ahpv1.PerceptionContext, error) {
	c := &ahpv1.PerceptionContext{}
	return readInto(c, path, v, "PerceptionContext", []structField{
		reqString("workspace", &c.Workspace),
		optString("current_task", &c.CurrentTask),
		optString("query", &c.Query),
		{name: "relevant_history", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			items := []*ahpv1.HistoryItem{}
			err := readSeq(p, v, func(p string, v any) error {
				h := &ahpv1.HistoryItem{}
				err := readStruct(p, v, "HistoryItem", []structField{
					reqString("item_type", &h.ItemType),
					reqString("content", &h.Content),
					{name: "timestamp", decode: func(p string, v any) (err error) {
						h.Timestamp, err = readSigned(p, v, i64Type)
						return err
					}},
				})
				items = append(items, h)
				return err
			})
			if err == nil {
				c.RelevantHistory = &ahpv1.HistoryItemList{Values: items}
			}
			return err
		}},
	})
}

func perceptionContextJSON(c *ahpv1.PerceptionContext) map[string]any {
	out := map[string]any{"workspace": c.GetWorkspace()}
	putString(out, "current_task", c.CurrentTask)
	putString(out, "query", c.Query)
	if c.GetRelevantHistory() != nil {
		items := []any{}
		for _, h := range c.GetRelevantHistory().GetValues() {
			items = append(items, map[string]any{
				"item_type": h.GetItemType(),
				"content":   h.GetContent(),
				"timestamp": i64JSON(h.GetTimestamp()),
			})
		}
		out["relevant_history"] = items
	}
	return out
}

func decodeConstraints(path string, v any) (*ahpv1.PerceptionConstraints, error) {
	c := &ahpv1.PerceptionConstraints{}
	maxResults := optUint("max_results", usizeType, &c.MaxResults)
	maxLength := optUint("max_context_length", usizeType, &c.MaxContextLength)
	maxResults.defaulted, maxLength.defaulted = true, true
	return readInto(c, path, v, "PerceptionConstraints", []structField{
		maxResults,
		maxLength,
		{name: "include_sources", optional: true, defaulted: true, decode: func(p string, v any) error {
			b, err := readBool(p, v)
			if err == nil {
				c.IncludeSources = &b
			}
			return err
		}},
	})
}

// constraintsJSON writes PerceptionConstraints; nil is the serde default.
func constraintsJSON(c *ahpv1.PerceptionConstraints, e encoder) map[string]any {
	c = nonNil(c)
	out := map[string]any{}
	e.nullable(out, "max_results", c.MaxResults != nil, func() any { return u64JSON(c.GetMaxResults()) })
	e.nullable(out, "max_context_length", c.MaxContextLength != nil, func() any { return u64JSON(c.GetMaxContextLength()) })
	switch {
	case c.IncludeSources != nil:
		out["include_sources"] = c.GetIncludeSources()
	case !e.lossless:
		out["include_sources"] = true
	}
	return out
}

// ---- perception targets ----

var targetVariants = []string{"entity", "location", "event", "relation", "rule", "state", "resource", "pattern"}

func decodeTarget(path string, v any) (*ahpv1.PerceptionTarget, error) {
	variant, obj, err := readStructEnum(path, v, targetVariants)
	if err != nil {
		return nil, err
	}
	p := jsonwire.JoinPath(path, variant)
	t := &ahpv1.PerceptionTarget{}
	var fields []structField
	switch variant {
	case "entity":
		x := &ahpv1.EntityTarget{}
		t.Target = &ahpv1.PerceptionTarget_Entity{Entity: x}
		fields = []structField{
			reqString("name", &x.Name),
			reqString("entity_type", &x.EntityType),
			optString("identifier", &x.Identifier),
		}
	case "location":
		x := &ahpv1.LocationTarget{}
		t.Target = &ahpv1.PerceptionTarget_Location{Location: x}
		fields = []structField{
			reqString("path", &x.Path),
			reqString("location_type", &x.LocationType),
		}
	case "event":
		x := &ahpv1.EventTarget{}
		t.Target = &ahpv1.PerceptionTarget_Event{Event: x}
		fields = []structField{
			reqString("description", &x.Description),
			reqString("event_type", &x.EventType),
			opt("time_range", &x.TimeRange, decodeTimeRange),
		}
	case "relation":
		x := &ahpv1.RelationTarget{}
		t.Target = &ahpv1.PerceptionTarget_Relation{Relation: x}
		fields = []structField{
			reqStrings("entities", &x.Entities),
			reqString("relation_type", &x.RelationType),
		}
	case "rule":
		x := &ahpv1.RuleTarget{}
		t.Target = &ahpv1.PerceptionTarget_Rule{Rule: x}
		fields = []structField{
			reqString("name", &x.Name),
			reqString("rule_type", &x.RuleType),
			optString("scope", &x.Scope),
		}
	case "state":
		x := &ahpv1.StateTarget{}
		t.Target = &ahpv1.PerceptionTarget_State{State: x}
		fields = []structField{
			reqString("target", &x.Target),
			reqString("aspect", &x.Aspect),
			reqBool("include_history", &x.IncludeHistory),
		}
	case "resource":
		x := &ahpv1.ResourceTarget{}
		t.Target = &ahpv1.PerceptionTarget_Resource{Resource: x}
		fields = []structField{
			reqString("name", &x.Name),
			reqString("resource_type", &x.ResourceType),
			optValue("constraints", &x.Constraints),
		}
	case "pattern":
		x := &ahpv1.PatternTarget{}
		t.Target = &ahpv1.PerceptionTarget_Pattern{Pattern: x}
		fields = []structField{
			reqString("pattern", &x.Pattern),
			reqString("pattern_type", &x.PatternType),
		}
	}
	if err := readStruct(p, obj, "PerceptionTarget", fields); err != nil {
		return nil, err
	}
	return t, nil
}

// targetJSON writes a PerceptionTarget. Its inner Options have no skip_serializing_if, so
// serde writes them as null.
func targetJSON(path string, t *ahpv1.PerceptionTarget, e encoder) (map[string]any, error) {
	in := map[string]any{}
	var variant string
	switch x := t.GetTarget().(type) {
	case *ahpv1.PerceptionTarget_Entity:
		variant = "entity"
		ent := nonNil(x.Entity)
		in["name"], in["entity_type"] = ent.GetName(), ent.GetEntityType()
		e.nullable(in, "identifier", ent.Identifier != nil, func() any { return ent.GetIdentifier() })
	case *ahpv1.PerceptionTarget_Location:
		variant = "location"
		in["path"], in["location_type"] = x.Location.GetPath(), x.Location.GetLocationType()
	case *ahpv1.PerceptionTarget_Event:
		variant = "event"
		in["description"], in["event_type"] = x.Event.GetDescription(), x.Event.GetEventType()
		e.nullable(in, "time_range", x.Event.GetTimeRange() != nil, func() any { return timeRangeJSON(x.Event.GetTimeRange(), e) })
	case *ahpv1.PerceptionTarget_Relation:
		variant = "relation"
		in["entities"], in["relation_type"] = stringsJSON(x.Relation.GetEntities()), x.Relation.GetRelationType()
	case *ahpv1.PerceptionTarget_Rule:
		variant = "rule"
		rule := nonNil(x.Rule)
		in["name"], in["rule_type"] = rule.GetName(), rule.GetRuleType()
		e.nullable(in, "scope", rule.Scope != nil, func() any { return rule.GetScope() })
	case *ahpv1.PerceptionTarget_State:
		variant = "state"
		in["target"], in["aspect"], in["include_history"] = x.State.GetTarget(), x.State.GetAspect(), x.State.GetIncludeHistory()
	case *ahpv1.PerceptionTarget_Resource:
		variant = "resource"
		in["name"], in["resource_type"] = x.Resource.GetName(), x.Resource.GetResourceType()
		e.nullable(in, "constraints", x.Resource.GetConstraints() != nil, func() any { return jsonwire.FromValue(x.Resource.GetConstraints()) })
	case *ahpv1.PerceptionTarget_Pattern:
		variant = "pattern"
		in["pattern"], in["pattern_type"] = x.Pattern.GetPattern(), x.Pattern.GetPatternType()
	default:
		return nil, requiredErr(path, "a perception target")
	}
	return map[string]any{variant: in}, nil
}

func decodeTimeRange(path string, v any) (*ahpv1.TimeRange, error) {
	r := &ahpv1.TimeRange{}
	return readInto(r, path, v, "TimeRange", []structField{
		optInt64("from", &r.From),
		optInt64("to", &r.To),
		optString("relative", &r.Relative),
	})
}

// timeRangeJSON writes a TimeRange: from/to are null when unset, relative is skipped.
func timeRangeJSON(r *ahpv1.TimeRange, e encoder) map[string]any {
	out := map[string]any{}
	e.nullable(out, "from", r.From != nil, func() any { return i64JSON(r.GetFrom()) })
	e.nullable(out, "to", r.To != nil, func() any { return i64JSON(r.GetTo()) })
	putString(out, "relative", r.Relative)
	return out
}

// ---- memory_recall ----

func decodeMemoryRecall(path string, v any) (*ahpv1.MemoryRecallPayload, error) {
	m := &ahpv1.MemoryRecallPayload{}
	return readInto(m, path, v, "MemoryRecallEvent", []structField{
		reqString("session_id", &m.SessionId),
		reqString("query", &m.Query),
		reqString("memory_type", &m.MemoryType),
		reqUint("max_results", usizeType, &m.MaxResults),
		reqString("working_directory", &m.WorkingDirectory),
	})
}

func memoryRecallJSON(m *ahpv1.MemoryRecallPayload, _ encoder) (map[string]any, error) {
	return map[string]any{
		"session_id":        m.GetSessionId(),
		"query":             m.GetQuery(),
		"memory_type":       m.GetMemoryType(),
		"max_results":       u64JSON(m.GetMaxResults()),
		"working_directory": m.GetWorkingDirectory(),
	}, nil
}

// ---- planning ----

func decodePlanning(path string, v any) (*ahpv1.PlanningPayload, error) {
	m := &ahpv1.PlanningPayload{}
	return readInto(m, path, v, "PlanningEvent", []structField{
		reqString("session_id", &m.SessionId),
		reqString("task_description", &m.TaskDescription),
		{name: "available_strategies", decode: func(p string, v any) error {
			m.AvailableStrategies = []*ahpv1.PlanningStrategy{}
			return readSeqInto(p, v, &m.AvailableStrategies, decodeStrategy)
		}},
		optValue("constraints", &m.Constraints),
	})
}

func planningJSON(m *ahpv1.PlanningPayload, _ encoder) (map[string]any, error) {
	strategies, err := listJSON("available_strategies", m.GetAvailableStrategies(), strategyJSON)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"session_id":           m.GetSessionId(),
		"task_description":     m.GetTaskDescription(),
		"available_strategies": strategies,
	}
	if m.GetConstraints() != nil {
		out["constraints"] = jsonwire.FromValue(m.GetConstraints())
	}
	return out, nil
}

func decodeStrategy(path string, v any) (*ahpv1.PlanningStrategy, error) {
	d := ahpv1.PlanningStrategyKind(0).Descriptor()
	name, custom, err := readNewtypeEnum(path, v, names.EnumWireNames(d), "custom")
	if err != nil {
		return nil, err
	}
	if custom {
		return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Custom{Custom: name}}, nil
	}
	n, _ := names.ParseEnumWire(d, name)
	return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind(n)}}, nil
}

func strategyJSON(path string, s *ahpv1.PlanningStrategy) (any, error) {
	if x, ok := s.GetStrategy().(*ahpv1.PlanningStrategy_Custom); ok {
		return map[string]any{"custom": x.Custom}, nil
	}
	if s.GetStrategy() == nil {
		return nil, requiredErr(path, "a planning strategy")
	}
	return enumWire(path, s.GetKnown())
}

// ---- reasoning ----

func decodeReasoning(path string, v any) (*ahpv1.ReasoningPayload, error) {
	m := &ahpv1.ReasoningPayload{}
	return readInto(m, path, v, "ReasoningEvent", []structField{
		reqString("session_id", &m.SessionId),
		{name: "reasoning_type", decode: func(p string, v any) error {
			d := ahpv1.ReasoningKind(0).Descriptor()
			name, other, err := readNewtypeEnum(p, v, names.EnumWireNames(d), "other")
			switch {
			case err != nil:
				return err
			case other:
				m.ReasoningType = &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Other{Other: name}}
			default:
				n, _ := names.ParseEnumWire(d, name)
				m.ReasoningType = &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Known{Known: ahpv1.ReasoningKind(n)}}
			}
			return nil
		}},
		reqString("problem_statement", &m.ProblemStatement),
		optStrings("hints", &m.Hints),
	})
}

func reasoningJSON(m *ahpv1.ReasoningPayload, _ encoder) (map[string]any, error) {
	var kind any
	switch x := m.GetReasoningType().GetType().(type) {
	case *ahpv1.ReasoningType_Other:
		kind = map[string]any{"other": x.Other}
	case *ahpv1.ReasoningType_Known:
		name, err := enumWire("reasoning_type", x.Known)
		if err != nil {
			return nil, err
		}
		kind = name
	default:
		return nil, requiredErr("reasoning_type", "a reasoning type")
	}
	out := map[string]any{
		"session_id":        m.GetSessionId(),
		"reasoning_type":    kind,
		"problem_statement": m.GetProblemStatement(),
	}
	putStrings(out, "hints", m.GetHints())
	return out, nil
}

// ---- rate_limit ----

func decodeRateLimit(path string, v any) (*ahpv1.RateLimitPayload, error) {
	m := &ahpv1.RateLimitPayload{}
	return readInto(m, path, v, "RateLimitEvent", []structField{
		reqString("session_id", &m.SessionId),
		{name: "limit_type", decode: func(p string, v any) error {
			d := ahpv1.RateLimitKind(0).Descriptor()
			name, custom, err := readNewtypeEnum(p, v, names.EnumWireNames(d), "custom")
			switch {
			case err != nil:
				return err
			case custom:
				m.LimitType = &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Custom{Custom: name}}
			default:
				n, _ := names.ParseEnumWire(d, name)
				m.LimitType = &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Known{Known: ahpv1.RateLimitKind(n)}}
			}
			return nil
		}},
		reqUint("retry_after_ms", u64Type, &m.RetryAfterMs),
		reqString("current_usage", &m.CurrentUsage),
	})
}

func rateLimitJSON(m *ahpv1.RateLimitPayload, _ encoder) (map[string]any, error) {
	var kind any
	switch x := m.GetLimitType().GetType().(type) {
	case *ahpv1.RateLimitType_Custom:
		kind = map[string]any{"custom": x.Custom}
	case *ahpv1.RateLimitType_Known:
		name, err := enumWire("limit_type", x.Known)
		if err != nil {
			return nil, err
		}
		kind = name
	default:
		return nil, requiredErr("limit_type", "a rate limit type")
	}
	return map[string]any{
		"session_id":     m.GetSessionId(),
		"limit_type":     kind,
		"retry_after_ms": u64JSON(m.GetRetryAfterMs()),
		"current_usage":  m.GetCurrentUsage(),
	}, nil
}

// ---- confirmation ----

func decodeConfirmation(path string, v any) (*ahpv1.ConfirmationPayload, error) {
	m := &ahpv1.ConfirmationPayload{}
	return readInto(m, path, v, "ConfirmationEvent", []structField{
		reqString("session_id", &m.SessionId),
		{name: "confirmation_type", decode: func(p string, v any) error {
			d := ahpv1.ConfirmationKind(0).Descriptor()
			name, custom, err := readNewtypeEnum(p, v, names.EnumWireNames(d), "custom")
			switch {
			case err != nil:
				return err
			case custom:
				m.ConfirmationType = &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Custom{Custom: name}}
			default:
				n, _ := names.ParseEnumWire(d, name)
				m.ConfirmationType = &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: ahpv1.ConfirmationKind(n)}}
			}
			return nil
		}},
		reqString("message", &m.Message),
		optStrings("options", &m.Options),
	})
}

func confirmationJSON(m *ahpv1.ConfirmationPayload, _ encoder) (map[string]any, error) {
	var kind any
	switch x := m.GetConfirmationType().GetType().(type) {
	case *ahpv1.ConfirmationType_Custom:
		kind = map[string]any{"custom": x.Custom}
	case *ahpv1.ConfirmationType_Known:
		name, err := enumWire("confirmation_type", x.Known)
		if err != nil {
			return nil, err
		}
		kind = name
	default:
		return nil, requiredErr("confirmation_type", "a confirmation type")
	}
	out := map[string]any{
		"session_id":        m.GetSessionId(),
		"confirmation_type": kind,
		"message":           m.GetMessage(),
	}
	putStrings(out, "options", m.GetOptions())
	return out, nil
}
