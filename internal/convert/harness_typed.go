package convert

// Payloads of the eight Harness typed events (idle, intent_detection, context_perception,
// memory_recall, planning, reasoning, rate_limit, confirmation) and their supporting types.
//
// Decoding never fills in serde defaults (domain general, modality any, include_sources true, ...):
// absence stays UNSPECIFIED or unset so that the event converts back to the JSON it came from. The
// serde encoder (harnessSerde) writes the defaults the way the reference re-serializes a payload.

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// ---- idle ----

func harnessDecodeIdle(path string, v any) (*ahpv1.IdlePayload, error) {
	m := &ahpv1.IdlePayload{}
	err := harnessStruct(path, v, "IdleEvent", []harnessField{
		harnessReqUint("idle_duration_ms", harnessU64, &m.IdleDurationMs),
		harnessReqString("idle_reason", &m.IdleReason),
		harnessOptString("last_event_type", &m.LastEventType),
		harnessOptString("suggested_action", &m.SuggestedAction),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessIdleJSON(m *ahpv1.IdlePayload, _ harnessEnc) (map[string]any, error) {
	out := map[string]any{
		"idle_duration_ms": harnessU64JSON(m.GetIdleDurationMs()),
		"idle_reason":      m.GetIdleReason(),
	}
	harnessPutString(out, "last_event_type", m.LastEventType)
	harnessPutString(out, "suggested_action", m.SuggestedAction)
	return out, nil
}

// ---- intent_detection ----

func harnessDecodeIntentDetection(path string, v any) (*ahpv1.IntentDetectionPayload, error) {
	m := &ahpv1.IntentDetectionPayload{}
	err := harnessStruct(path, v, "IntentDetectionEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		harnessReqString("prompt", &m.Prompt),
		harnessReqString("workspace", &m.Workspace),
		harnessOptString("language_hint", &m.LanguageHint),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessIntentDetectionJSON(m *ahpv1.IntentDetectionPayload, _ harnessEnc) (map[string]any, error) {
	out := map[string]any{
		"session_id": m.GetSessionId(),
		"prompt":     m.GetPrompt(),
		"workspace":  m.GetWorkspace(),
	}
	harnessPutString(out, "language_hint", m.LanguageHint)
	return out, nil
}

// ---- context_perception ----

func harnessDecodeContextPerception(path string, v any) (*ahpv1.ContextPerceptionPayload, error) {
	m := &ahpv1.ContextPerceptionPayload{}
	err := harnessStruct(path, v, "ContextPerceptionEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		{name: "intent", decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.PerceptionIntent(0).Descriptor())
			m.Intent = ahpv1.PerceptionIntent(n)
			return err
		}},
		{name: "target", decode: func(p string, v any) (err error) {
			m.Target, err = harnessDecodeTarget(p, v)
			return err
		}},
		{name: "domain", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.PerceptionDomain(0).Descriptor())
			m.Domain = ahpv1.PerceptionDomain(n)
			return err
		}},
		{name: "preferred_modality", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.PerceptionModality(0).Descriptor())
			m.PreferredModality = ahpv1.PerceptionModality(n)
			return err
		}},
		{name: "urgency", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.PerceptionUrgency(0).Descriptor())
			m.Urgency = ahpv1.PerceptionUrgency(n)
			return err
		}},
		{name: "freshness", optional: true, defaulted: true, decode: func(p string, v any) error {
			n, err := harnessEnum(p, v, ahpv1.PerceptionFreshness(0).Descriptor())
			m.Freshness = ahpv1.PerceptionFreshness(n)
			return err
		}},
		{name: "context", decode: func(p string, v any) (err error) {
			m.Context, err = harnessDecodePerceptionContext(p, v)
			return err
		}},
		{name: "constraints", optional: true, defaulted: true, decode: func(p string, v any) (err error) {
			m.Constraints, err = harnessDecodeConstraints(p, v)
			return err
		}},
		harnessOptMap("metadata", &m.Metadata),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessContextPerceptionJSON(m *ahpv1.ContextPerceptionPayload, e harnessEnc) (map[string]any, error) {
	out := map[string]any{"session_id": m.GetSessionId()}
	intent, err := harnessEnumName("intent", m.GetIntent())
	if err != nil {
		return nil, err
	}
	out["intent"] = intent
	if out["target"], err = harnessTargetJSON("target", m.GetTarget(), e); err != nil {
		return nil, err
	}
	// Defaults: absent (UNSPECIFIED) is written as the serde default, or left out when lossless.
	defaults := []struct {
		key, def, name string
	}{
		{"domain", "general", enumWireName(m.GetDomain())},
		{"preferred_modality", "any", enumWireName(m.GetPreferredModality())},
		{"urgency", "normal", enumWireName(m.GetUrgency())},
		{"freshness", "static", enumWireName(m.GetFreshness())},
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
		return nil, harnessRequired("context", "context")
	}
	out["context"] = harnessPerceptionContextJSON(m.GetContext())
	if m.GetConstraints() != nil || !e.lossless {
		out["constraints"] = harnessConstraintsJSON(m.GetConstraints(), e)
	}
	harnessPutMap(out, "metadata", m.GetMetadata())
	return out, nil
}

func harnessDecodePerceptionContext(path string, v any) (*ahpv1.PerceptionContext, error) {
	c := &ahpv1.PerceptionContext{}
	err := harnessStruct(path, v, "PerceptionContext", []harnessField{
		harnessReqString("workspace", &c.Workspace),
		harnessOptString("current_task", &c.CurrentTask),
		harnessOptString("query", &c.Query),
		{name: "relevant_history", optional: true, decode: func(p string, v any) error {
			if v == nil {
				return nil
			}
			items := []*ahpv1.HistoryItem{}
			err := harnessSeq(p, v, func(p string, v any) error {
				h := &ahpv1.HistoryItem{}
				err := harnessStruct(p, v, "HistoryItem", []harnessField{
					harnessReqString("item_type", &h.ItemType),
					harnessReqString("content", &h.Content),
					{name: "timestamp", decode: func(p string, v any) (err error) {
						h.Timestamp, err = harnessSigned(p, v, harnessI64)
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
	if err != nil {
		return nil, err
	}
	return c, nil
}

func harnessPerceptionContextJSON(c *ahpv1.PerceptionContext) map[string]any {
	out := map[string]any{"workspace": c.GetWorkspace()}
	harnessPutString(out, "current_task", c.CurrentTask)
	harnessPutString(out, "query", c.Query)
	if c.GetRelevantHistory() != nil {
		items := []any{}
		for _, h := range c.GetRelevantHistory().GetValues() {
			items = append(items, map[string]any{
				"item_type": h.GetItemType(),
				"content":   h.GetContent(),
				"timestamp": harnessI64JSON(h.GetTimestamp()),
			})
		}
		out["relevant_history"] = items
	}
	return out
}

func harnessDecodeConstraints(path string, v any) (*ahpv1.PerceptionConstraints, error) {
	c := &ahpv1.PerceptionConstraints{}
	maxResults := harnessOptUint("max_results", harnessUsize, &c.MaxResults)
	maxLength := harnessOptUint("max_context_length", harnessUsize, &c.MaxContextLength)
	maxResults.defaulted, maxLength.defaulted = true, true
	err := harnessStruct(path, v, "PerceptionConstraints", []harnessField{
		maxResults,
		maxLength,
		{name: "include_sources", optional: true, defaulted: true, decode: func(p string, v any) error {
			b, err := harnessBool(p, v)
			if err == nil {
				c.IncludeSources = &b
			}
			return err
		}},
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// harnessConstraintsJSON writes PerceptionConstraints; nil is the serde default.
func harnessConstraintsJSON(c *ahpv1.PerceptionConstraints, e harnessEnc) map[string]any {
	c = harnessNonNil(c)
	out := map[string]any{}
	e.nullable(out, "max_results", c.MaxResults != nil, func() any { return harnessU64JSON(c.GetMaxResults()) })
	e.nullable(out, "max_context_length", c.MaxContextLength != nil, func() any { return harnessU64JSON(c.GetMaxContextLength()) })
	switch {
	case c.IncludeSources != nil:
		out["include_sources"] = c.GetIncludeSources()
	case !e.lossless:
		out["include_sources"] = true
	}
	return out
}

// ---- perception targets ----

var harnessTargetVariants = []string{"entity", "location", "event", "relation", "rule", "state", "resource", "pattern"}

func harnessDecodeTarget(path string, v any) (*ahpv1.PerceptionTarget, error) {
	variant, obj, err := harnessStructEnum(path, v, harnessTargetVariants)
	if err != nil {
		return nil, err
	}
	p := joinPath(path, variant)
	t := &ahpv1.PerceptionTarget{}
	var fields []harnessField
	switch variant {
	case "entity":
		x := &ahpv1.EntityTarget{}
		t.Target = &ahpv1.PerceptionTarget_Entity{Entity: x}
		fields = []harnessField{
			harnessReqString("name", &x.Name),
			harnessReqString("entity_type", &x.EntityType),
			harnessOptString("identifier", &x.Identifier),
		}
	case "location":
		x := &ahpv1.LocationTarget{}
		t.Target = &ahpv1.PerceptionTarget_Location{Location: x}
		fields = []harnessField{
			harnessReqString("path", &x.Path),
			harnessReqString("location_type", &x.LocationType),
		}
	case "event":
		x := &ahpv1.EventTarget{}
		t.Target = &ahpv1.PerceptionTarget_Event{Event: x}
		fields = []harnessField{
			harnessReqString("description", &x.Description),
			harnessReqString("event_type", &x.EventType),
			{name: "time_range", optional: true, decode: func(p string, v any) (err error) {
				if v != nil {
					x.TimeRange, err = harnessDecodeTimeRange(p, v)
				}
				return err
			}},
		}
	case "relation":
		x := &ahpv1.RelationTarget{}
		t.Target = &ahpv1.PerceptionTarget_Relation{Relation: x}
		fields = []harnessField{
			harnessReqStrings("entities", &x.Entities),
			harnessReqString("relation_type", &x.RelationType),
		}
	case "rule":
		x := &ahpv1.RuleTarget{}
		t.Target = &ahpv1.PerceptionTarget_Rule{Rule: x}
		fields = []harnessField{
			harnessReqString("name", &x.Name),
			harnessReqString("rule_type", &x.RuleType),
			harnessOptString("scope", &x.Scope),
		}
	case "state":
		x := &ahpv1.StateTarget{}
		t.Target = &ahpv1.PerceptionTarget_State{State: x}
		fields = []harnessField{
			harnessReqString("target", &x.Target),
			harnessReqString("aspect", &x.Aspect),
			harnessReqBool("include_history", &x.IncludeHistory),
		}
	case "resource":
		x := &ahpv1.ResourceTarget{}
		t.Target = &ahpv1.PerceptionTarget_Resource{Resource: x}
		fields = []harnessField{
			harnessReqString("name", &x.Name),
			harnessReqString("resource_type", &x.ResourceType),
			harnessOptValue("constraints", &x.Constraints),
		}
	case "pattern":
		x := &ahpv1.PatternTarget{}
		t.Target = &ahpv1.PerceptionTarget_Pattern{Pattern: x}
		fields = []harnessField{
			harnessReqString("pattern", &x.Pattern),
			harnessReqString("pattern_type", &x.PatternType),
		}
	}
	if err := harnessStruct(p, obj, "PerceptionTarget", fields); err != nil {
		return nil, err
	}
	return t, nil
}

// harnessTargetJSON writes a PerceptionTarget. Its inner Options have no skip_serializing_if, so
// serde writes them as null.
func harnessTargetJSON(path string, t *ahpv1.PerceptionTarget, e harnessEnc) (map[string]any, error) {
	in := map[string]any{}
	var variant string
	switch x := t.GetTarget().(type) {
	case *ahpv1.PerceptionTarget_Entity:
		variant = "entity"
		ent := harnessNonNil(x.Entity)
		in["name"], in["entity_type"] = ent.GetName(), ent.GetEntityType()
		e.nullable(in, "identifier", ent.Identifier != nil, func() any { return ent.GetIdentifier() })
	case *ahpv1.PerceptionTarget_Location:
		variant = "location"
		in["path"], in["location_type"] = x.Location.GetPath(), x.Location.GetLocationType()
	case *ahpv1.PerceptionTarget_Event:
		variant = "event"
		in["description"], in["event_type"] = x.Event.GetDescription(), x.Event.GetEventType()
		e.nullable(in, "time_range", x.Event.GetTimeRange() != nil, func() any { return harnessTimeRangeJSON(x.Event.GetTimeRange(), e) })
	case *ahpv1.PerceptionTarget_Relation:
		variant = "relation"
		in["entities"], in["relation_type"] = harnessStringsJSON(x.Relation.GetEntities()), x.Relation.GetRelationType()
	case *ahpv1.PerceptionTarget_Rule:
		variant = "rule"
		rule := harnessNonNil(x.Rule)
		in["name"], in["rule_type"] = rule.GetName(), rule.GetRuleType()
		e.nullable(in, "scope", rule.Scope != nil, func() any { return rule.GetScope() })
	case *ahpv1.PerceptionTarget_State:
		variant = "state"
		in["target"], in["aspect"], in["include_history"] = x.State.GetTarget(), x.State.GetAspect(), x.State.GetIncludeHistory()
	case *ahpv1.PerceptionTarget_Resource:
		variant = "resource"
		in["name"], in["resource_type"] = x.Resource.GetName(), x.Resource.GetResourceType()
		e.nullable(in, "constraints", x.Resource.GetConstraints() != nil, func() any { return fromValue(x.Resource.GetConstraints()) })
	case *ahpv1.PerceptionTarget_Pattern:
		variant = "pattern"
		in["pattern"], in["pattern_type"] = x.Pattern.GetPattern(), x.Pattern.GetPatternType()
	default:
		return nil, harnessRequired(path, "a perception target")
	}
	return map[string]any{variant: in}, nil
}

func harnessDecodeTimeRange(path string, v any) (*ahpv1.TimeRange, error) {
	r := &ahpv1.TimeRange{}
	err := harnessStruct(path, v, "TimeRange", []harnessField{
		harnessOptInt64("from", &r.From),
		harnessOptInt64("to", &r.To),
		harnessOptString("relative", &r.Relative),
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// harnessTimeRangeJSON writes a TimeRange: from/to are null when unset, relative is skipped.
func harnessTimeRangeJSON(r *ahpv1.TimeRange, e harnessEnc) map[string]any {
	out := map[string]any{}
	e.nullable(out, "from", r.From != nil, func() any { return harnessI64JSON(r.GetFrom()) })
	e.nullable(out, "to", r.To != nil, func() any { return harnessI64JSON(r.GetTo()) })
	harnessPutString(out, "relative", r.Relative)
	return out
}

// ---- memory_recall ----

func harnessDecodeMemoryRecall(path string, v any) (*ahpv1.MemoryRecallPayload, error) {
	m := &ahpv1.MemoryRecallPayload{}
	err := harnessStruct(path, v, "MemoryRecallEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		harnessReqString("query", &m.Query),
		harnessReqString("memory_type", &m.MemoryType),
		harnessReqUint("max_results", harnessUsize, &m.MaxResults),
		harnessReqString("working_directory", &m.WorkingDirectory),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessMemoryRecallJSON(m *ahpv1.MemoryRecallPayload, _ harnessEnc) (map[string]any, error) {
	return map[string]any{
		"session_id":        m.GetSessionId(),
		"query":             m.GetQuery(),
		"memory_type":       m.GetMemoryType(),
		"max_results":       harnessU64JSON(m.GetMaxResults()),
		"working_directory": m.GetWorkingDirectory(),
	}, nil
}

// ---- planning ----

func harnessDecodePlanning(path string, v any) (*ahpv1.PlanningPayload, error) {
	m := &ahpv1.PlanningPayload{}
	err := harnessStruct(path, v, "PlanningEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		harnessReqString("task_description", &m.TaskDescription),
		{name: "available_strategies", decode: func(p string, v any) error {
			m.AvailableStrategies = []*ahpv1.PlanningStrategy{}
			return harnessSeq(p, v, func(p string, v any) error {
				s, err := harnessDecodeStrategy(p, v)
				m.AvailableStrategies = append(m.AvailableStrategies, s)
				return err
			})
		}},
		harnessOptValue("constraints", &m.Constraints),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessPlanningJSON(m *ahpv1.PlanningPayload, _ harnessEnc) (map[string]any, error) {
	strategies := []any{}
	for i, s := range m.GetAvailableStrategies() {
		j, err := harnessStrategyJSON(indexPath("available_strategies", i), s)
		if err != nil {
			return nil, err
		}
		strategies = append(strategies, j)
	}
	out := map[string]any{
		"session_id":           m.GetSessionId(),
		"task_description":     m.GetTaskDescription(),
		"available_strategies": strategies,
	}
	if m.GetConstraints() != nil {
		out["constraints"] = fromValue(m.GetConstraints())
	}
	return out, nil
}

func harnessDecodeStrategy(path string, v any) (*ahpv1.PlanningStrategy, error) {
	d := ahpv1.PlanningStrategyKind(0).Descriptor()
	name, custom, err := harnessNewtypeEnum(path, v, enumWireNames(d), "custom")
	if err != nil {
		return nil, err
	}
	if custom {
		return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Custom{Custom: name}}, nil
	}
	n, _ := parseEnumWire(d, name)
	return &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind(n)}}, nil
}

func harnessStrategyJSON(path string, s *ahpv1.PlanningStrategy) (any, error) {
	if x, ok := s.GetStrategy().(*ahpv1.PlanningStrategy_Custom); ok {
		return map[string]any{"custom": x.Custom}, nil
	}
	if s.GetStrategy() == nil {
		return nil, harnessRequired(path, "a planning strategy")
	}
	return harnessEnumName(path, s.GetKnown())
}

// ---- reasoning ----

func harnessDecodeReasoning(path string, v any) (*ahpv1.ReasoningPayload, error) {
	m := &ahpv1.ReasoningPayload{}
	err := harnessStruct(path, v, "ReasoningEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		{name: "reasoning_type", decode: func(p string, v any) error {
			d := ahpv1.ReasoningKind(0).Descriptor()
			name, other, err := harnessNewtypeEnum(p, v, enumWireNames(d), "other")
			switch {
			case err != nil:
				return err
			case other:
				m.ReasoningType = &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Other{Other: name}}
			default:
				n, _ := parseEnumWire(d, name)
				m.ReasoningType = &ahpv1.ReasoningType{Type: &ahpv1.ReasoningType_Known{Known: ahpv1.ReasoningKind(n)}}
			}
			return nil
		}},
		harnessReqString("problem_statement", &m.ProblemStatement),
		harnessOptStrings("hints", &m.Hints),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessReasoningJSON(m *ahpv1.ReasoningPayload, _ harnessEnc) (map[string]any, error) {
	var kind any
	switch x := m.GetReasoningType().GetType().(type) {
	case *ahpv1.ReasoningType_Other:
		kind = map[string]any{"other": x.Other}
	case *ahpv1.ReasoningType_Known:
		name, err := harnessEnumName("reasoning_type", x.Known)
		if err != nil {
			return nil, err
		}
		kind = name
	default:
		return nil, harnessRequired("reasoning_type", "a reasoning type")
	}
	out := map[string]any{
		"session_id":        m.GetSessionId(),
		"reasoning_type":    kind,
		"problem_statement": m.GetProblemStatement(),
	}
	harnessPutStrings(out, "hints", m.GetHints())
	return out, nil
}

// ---- rate_limit ----

func harnessDecodeRateLimit(path string, v any) (*ahpv1.RateLimitPayload, error) {
	m := &ahpv1.RateLimitPayload{}
	err := harnessStruct(path, v, "RateLimitEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		{name: "limit_type", decode: func(p string, v any) error {
			d := ahpv1.RateLimitKind(0).Descriptor()
			name, custom, err := harnessNewtypeEnum(p, v, enumWireNames(d), "custom")
			switch {
			case err != nil:
				return err
			case custom:
				m.LimitType = &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Custom{Custom: name}}
			default:
				n, _ := parseEnumWire(d, name)
				m.LimitType = &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Known{Known: ahpv1.RateLimitKind(n)}}
			}
			return nil
		}},
		harnessReqUint("retry_after_ms", harnessU64, &m.RetryAfterMs),
		harnessReqString("current_usage", &m.CurrentUsage),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessRateLimitJSON(m *ahpv1.RateLimitPayload, _ harnessEnc) (map[string]any, error) {
	var kind any
	switch x := m.GetLimitType().GetType().(type) {
	case *ahpv1.RateLimitType_Custom:
		kind = map[string]any{"custom": x.Custom}
	case *ahpv1.RateLimitType_Known:
		name, err := harnessEnumName("limit_type", x.Known)
		if err != nil {
			return nil, err
		}
		kind = name
	default:
		return nil, harnessRequired("limit_type", "a rate limit type")
	}
	return map[string]any{
		"session_id":     m.GetSessionId(),
		"limit_type":     kind,
		"retry_after_ms": harnessU64JSON(m.GetRetryAfterMs()),
		"current_usage":  m.GetCurrentUsage(),
	}, nil
}

// ---- confirmation ----

func harnessDecodeConfirmation(path string, v any) (*ahpv1.ConfirmationPayload, error) {
	m := &ahpv1.ConfirmationPayload{}
	err := harnessStruct(path, v, "ConfirmationEvent", []harnessField{
		harnessReqString("session_id", &m.SessionId),
		{name: "confirmation_type", decode: func(p string, v any) error {
			d := ahpv1.ConfirmationKind(0).Descriptor()
			name, custom, err := harnessNewtypeEnum(p, v, enumWireNames(d), "custom")
			switch {
			case err != nil:
				return err
			case custom:
				m.ConfirmationType = &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Custom{Custom: name}}
			default:
				n, _ := parseEnumWire(d, name)
				m.ConfirmationType = &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: ahpv1.ConfirmationKind(n)}}
			}
			return nil
		}},
		harnessReqString("message", &m.Message),
		harnessOptStrings("options", &m.Options),
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func harnessConfirmationJSON(m *ahpv1.ConfirmationPayload, _ harnessEnc) (map[string]any, error) {
	var kind any
	switch x := m.GetConfirmationType().GetType().(type) {
	case *ahpv1.ConfirmationType_Custom:
		kind = map[string]any{"custom": x.Custom}
	case *ahpv1.ConfirmationType_Known:
		name, err := harnessEnumName("confirmation_type", x.Known)
		if err != nil {
			return nil, err
		}
		kind = name
	default:
		return nil, harnessRequired("confirmation_type", "a confirmation type")
	}
	out := map[string]any{
		"session_id":        m.GetSessionId(),
		"confirmation_type": kind,
		"message":           m.GetMessage(),
	}
	harnessPutStrings(out, "options", m.GetOptions())
	return out, nil
}
