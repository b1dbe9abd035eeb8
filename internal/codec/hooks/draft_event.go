package hooks

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
)

// DecodeDraftEvent converts a decoded Agent Hooks Protocol "draft" catalogue event into the
// canonical event. path is the event's JSON path ("params.event").
//
// Checked: the envelope (id, source as an absolute URI, time as an RFC 3339 date-time, session
// where the catalogue requires it, reverse-DNS extension keys), the catalogue's required members
// and their JSON kinds, the draft tool shapes (call, tool, path, MCP descriptor and connection
// gaps), execution, tool.after.outcome with its error/output exclusions, model, attempt, usage,
// turn, gaps, a non-empty parentEventId, the content model of items (content.go) and the bodies
// of task, workspace, message, elicitation, failure, attention, config and file changes.
// A name outside the catalogue (including the removed names such as tool.error) matches
// ErrUnsupportedEvent.
//
// Typed members land in Event (id, source, time, session, tool, extensions, outcome of
// session.end) and Event.catalogue; the canonical type of a tool.after with outcome "error" is
// tool.error (Origin.event_type keeps "tool.after"). Every other member is kept verbatim in
// Event.payload, so EncodeDraftEvent gives the same JSON back.
func DecodeDraftEvent(path string, v any) (*ahpv1.Event, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	typeName, err := o.requiredString("type", true)
	if err != nil {
		return nil, err
	}
	spec, ok := catalogue[typeName]
	if !ok {
		reason := "unsupported event type; not in the draft catalogue"
		if removedNames[typeName] {
			reason = "unsupported event type; this name was removed from the draft catalogue"
		}
		return nil, errorf(CodeUnsupportedEvent, ErrUnsupportedEvent, o.at("type"), "%s", reason)
	}
	ev := &ahpv1.Event{
		Type:      spec.typ,
		Origin:    &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HOOKS, ProtocolVersion: string(Draft), EventType: typeName},
		Catalogue: &ahpv1.Catalogue{},
	}
	if ev.Id, err = o.requiredString("id", true); err != nil {
		return nil, err
	}
	if ev.Source, err = o.requiredString("source", false); err != nil {
		return nil, err
	}
	if !jsonwire.IsURI(ev.Source) {
		return nil, invalid(o.at("source"), "must be an absolute URI")
	}
	if ev.Time, err = o.requiredString("time", false); err != nil {
		return nil, err
	}
	if !jsonwire.IsDateTime(ev.Time) {
		return nil, invalid(o.at("time"), "must be an RFC 3339 date-time (e.g. 2026-08-24T08:51:14Z)")
	}
	for _, m := range spec.required {
		raw, ok := o.m[m.name]
		if !ok {
			return nil, invalid(o.at(m.name), "required for this event type")
		}
		if !hasKind(raw, m.kind) {
			return nil, invalid(o.at(m.name), "must be %s", m.kind)
		}
	}
	if spec.session || o.has("session") {
		s, err := o.requiredObject("session")
		if err != nil {
			return nil, err
		}
		if ev.Session, err = decodeSession(s); err != nil {
			return nil, err
		}
	}
	if spec.tool {
		if ev.Tool, err = decodeDraftTool(o, ev); err != nil {
			return nil, err
		}
	} else {
		for _, key := range []string{"tool", "call"} {
			if err := o.forbid(key, "not allowed for this event type; it applies only to tool events"); err != nil {
				return nil, err
			}
		}
	}
	if err := decodeLineage(o, ev.Catalogue); err != nil {
		return nil, err
	}
	if err := decodeRecords(o, ev, typeName); err != nil {
		return nil, err
	}
	if err := checkBody(o, typeName); err != nil {
		return nil, err
	}
	if ev.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if payload, err := o.rest(); err != nil {
		return nil, err
	} else if payload != nil {
		ev.Payload = jsonwireStructValue(payload)
	}
	return ev, nil
}

// decodeLineage reads parentEventId, turn, gaps, synthesized, trigger and items.
func decodeLineage(o *object, c *ahpv1.Catalogue) error {
	if raw, ok := o.m["parentEventId"]; ok {
		s, ok := raw.(string)
		if !ok || s == "" {
			return invalid(o.at("parentEventId"), "must be a non-empty event id")
		}
		o.claim("parentEventId")
		c.ParentEventId = s
	}
	if t, err := o.optionalObject("turn"); err != nil {
		return err
	} else if t != nil {
		c.Turn = &ahpv1.TurnRef{}
		if c.Turn.Id, err = t.requiredString("id", true); err != nil {
			return err
		}
		if c.Turn.Synthesized, err = t.optionalBool("synthesized"); err != nil {
			return err
		}
		if c.Turn.UnknownFields, err = t.rest(); err != nil {
			return err
		}
	}
	if raw, ok := o.m["gaps"]; ok {
		gaps, err := decodeGaps(o.at("gaps"), raw)
		if err != nil {
			return err
		}
		o.claim("gaps")
		c.Gaps = gaps
	}
	var err error
	if c.Synthesized, err = o.optionalBool("synthesized"); err != nil {
		return err
	}
	if c.Trigger, err = o.optionalString("trigger"); err != nil {
		return err
	}
	if raw, ok := o.m["items"]; ok {
		list, ok := raw.([]any)
		if !ok {
			return invalid(o.at("items"), "must be an array of content items")
		}
		if err := checkItems(o.at("items"), list, itemRules{}); err != nil {
			return err
		}
		pv, err := fieldValue(o.at("items"), raw)
		if err != nil {
			return err
		}
		o.claim("items")
		c.Items = pv.GetListValue()
	}
	return nil
}

// decodeGaps reads a gaps list: objects with exactly a non-empty path and a non-empty reason.
func decodeGaps(path string, raw any) ([]*ahpv1.Gap, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, invalid(path, "must be an array of {path, reason}")
	}
	out := make([]*ahpv1.Gap, 0, len(list))
	for i, x := range list {
		g, err := objectAt(jsonwire.IndexPath(path, i), x)
		if err != nil {
			return nil, err
		}
		gap := &ahpv1.Gap{}
		if gap.Path, err = g.requiredString("path", true); err != nil {
			return nil, err
		}
		if gap.Reason, err = g.requiredString("reason", true); err != nil {
			return nil, err
		}
		if len(g.m) != 2 {
			return nil, invalid(g.path(), "only path and reason are allowed")
		}
		out = append(out, gap)
	}
	return out, nil
}

// EncodeDraftEvent writes a canonical event that came from the draft back as draft JSON values.
func EncodeDraftEvent(ev *ahpv1.Event) map[string]any { return plainEncoder.draftEvent(ev) }

func (e encoder) draftEvent(ev *ahpv1.Event) map[string]any {
	var out map[string]any
	if p := ev.GetPayload().GetStructValue(); p != nil {
		out = e.base(p)
	} else {
		out = map[string]any{}
	}
	putString(out, "id", ev.GetId())
	putString(out, "source", ev.GetSource())
	name := ev.GetOrigin().GetEventType()
	if name == "" {
		name = names.EventTypeName(ev.GetType())
	}
	out["type"] = name
	putString(out, "time", ev.GetTime())
	if s := ev.GetSession(); s != nil {
		out["session"] = e.session(s)
	}
	if t := ev.GetTool(); t != nil {
		e.draftTool(out, ev)
	}
	if ev.GetExtensions() != nil {
		out["extensions"] = e.object(ev.GetExtensions())
	}
	if ev.GetOutcome() != ahpv1.SessionOutcome_SESSION_OUTCOME_UNSPECIFIED {
		out["outcome"] = names.EnumWireName(ev.GetOutcome())
	}
	e.catalogue(out, ev.GetCatalogue())
	return out
}

func (e encoder) catalogue(out map[string]any, c *ahpv1.Catalogue) {
	if c == nil {
		return
	}
	putString(out, "parentEventId", c.GetParentEventId())
	if t := c.GetTurn(); t != nil {
		m := e.base(t.GetUnknownFields())
		putString(m, "id", t.GetId())
		if t.Synthesized != nil {
			m["synthesized"] = t.GetSynthesized()
		}
		out["turn"] = m
	}
	if c.Gaps != nil {
		out["gaps"] = encodeGaps(c.GetGaps())
	}
	if c.Synthesized != nil {
		out["synthesized"] = c.GetSynthesized()
	}
	putString(out, "trigger", c.GetTrigger())
	if c.GetItems() != nil {
		out["items"] = jsonwire.FromValue(listValue(c.GetItems()))
	}
	putString(out, "path", c.GetPath())
	putString(out, "outcome", c.GetOutcome())
	e.records(out, c)
}

func encodeGaps(gaps []*ahpv1.Gap) []any {
	list := make([]any, len(gaps))
	for i, g := range gaps {
		list[i] = map[string]any{"path": g.GetPath(), "reason": g.GetReason()}
	}
	return list
}

// eventAt writes an event in the shape of the given version.
func (e encoder) eventAt(v Version, ev *ahpv1.Event) map[string]any {
	if v == Draft {
		return e.draftEvent(ev)
	}
	return e.event(ev)
}
