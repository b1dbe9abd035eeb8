package hooks

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/limits"
	"github.com/ahp-gateway/ahp/internal/names"
)

// eventTypes are the five v0.1 event types. Names from the later "draft" catalogue are not
// accepted: their payloads have a different shape (call, path, items, ...) and only arrive with
// protocolVersion "draft", which this codec refuses anyway.
var eventTypes = map[string]ahpv1.EventType{
	"tool.before":   ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
	"tool.after":    ahpv1.EventType_EVENT_TYPE_TOOL_AFTER,
	"tool.error":    ahpv1.EventType_EVENT_TYPE_TOOL_ERROR,
	"session.start": ahpv1.EventType_EVENT_TYPE_SESSION_START,
	"session.end":   ahpv1.EventType_EVENT_TYPE_SESSION_END,
}

const eventTypeList = "tool.before, tool.after, tool.error, session.start, session.end"

// DecodeEvent converts a decoded Agent Hooks Protocol v0.1 event object (as produced by
// encoding/json with UseNumber) into the canonical event. path is the event's JSON path in the
// message ("params.event"); errors name fields below it.
//
// The event is checked against the v0.1 event schemas: required members, non-empty ids, time as an
// RFC 3339 date-time, source as an absolute URI, reverse-DNS extension keys, the closed tool.kind
// set, tool.input as an object, output only on tool.after, error only (and always) on tool.error,
// no tool on session events, outcome only on session.end, and identifiers no longer than the
// schema allows (package limits). A type outside the five v0.1 types is
// an error matching ErrUnsupportedEvent. Members the schema does not model are kept in the
// unknown_fields of their level, so EncodeEvent gives the same JSON back.
func DecodeEvent(path string, v any) (*ahpv1.Event, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	// The type decides which members are allowed, and an unsupported type must surface as such
	// (-32002) rather than as whatever shape error the foreign payload would cause.
	typeName, err := o.requiredString("type", true)
	if err != nil {
		return nil, err
	}
	eventType, ok := eventTypes[typeName]
	if !ok {
		return nil, errorf(CodeUnsupportedEvent, ErrUnsupportedEvent, o.at("type"),
			"unsupported event type; expected one of %s", eventTypeList)
	}
	ev := &ahpv1.Event{
		Type: eventType,
		Origin: &ahpv1.Origin{
			Dialect:         ahpv1.Dialect_DIALECT_HOOKS,
			ProtocolVersion: ProtocolVersion,
			EventType:       typeName,
		},
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
	session, err := o.requiredObject("session")
	if err != nil {
		return nil, err
	}
	if ev.Session, err = decodeSession(session); err != nil {
		return nil, err
	}

	switch eventType {
	case ahpv1.EventType_EVENT_TYPE_SESSION_START, ahpv1.EventType_EVENT_TYPE_SESSION_END:
		if err := o.forbid("tool", "not allowed on %s events; tool applies only to tool events", typeName); err != nil {
			return nil, err
		}
	default:
		tool, err := o.requiredObject("tool")
		if err != nil {
			return nil, err
		}
		if ev.Tool, err = decodeTool(tool, eventType); err != nil {
			return nil, err
		}
	}
	// outcome is modelled for session.end only; on tool events it is an unknown member and kept.
	switch eventType {
	case ahpv1.EventType_EVENT_TYPE_SESSION_START:
		if err := o.forbid("outcome", "not allowed on session.start events; outcome applies only to session.end"); err != nil {
			return nil, err
		}
	case ahpv1.EventType_EVENT_TYPE_SESSION_END:
		if o.has("outcome") {
			if ev.Outcome, err = decodeOutcome(o); err != nil {
				return nil, err
			}
		}
	}

	if native, err := o.optionalObject("native"); err != nil {
		return nil, err
	} else if native != nil {
		if ev.Native, err = decodeNative(native); err != nil {
			return nil, err
		}
	}
	if ev.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if ev.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	if err := checkLengths(path, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// checkLengths refuses an identifier longer than the schema allows (package limits), naming its
// member; it runs once the event has been read, so every other error comes first, as before.
func checkLengths(path string, ev *ahpv1.Event) error {
	s, t, n := ev.GetSession(), ev.GetTool(), ev.GetNative()
	for _, f := range []struct {
		member, value string
		max           int
	}{
		{"id", ev.GetId(), limits.ID},
		{"source", ev.GetSource(), limits.Source},
		{"time", ev.GetTime(), limits.Time},
		{"session.id", s.GetId(), limits.ID},
		{"session.cwd", s.GetCwd(), limits.Path},
		{"session.model", s.GetModel(), limits.Name},
		{"session.agent.id", s.GetAgent().GetId(), limits.ID},
		{"session.agent.type", s.GetAgent().GetType(), limits.Name},
		{"tool.callId", t.GetCallId(), limits.CallID},
		{"tool.name", t.GetName(), limits.Name},
		{"tool.mcp.server", t.GetMcp().GetServer(), limits.Name},
		{"tool.mcp.tool", t.GetMcp().GetTool(), limits.Name},
		{"tool.error.category", t.GetError().GetCategory(), limits.Kind},
		{"native.provider", n.GetProvider(), limits.Kind},
		{"native.eventName", n.GetEventName(), limits.Name},
	} {
		if limits.Exceeds(f.value, f.max) {
			return tooLong(jsonwire.JoinPath(path, f.member), f.max)
		}
	}
	for i, root := range s.GetWorkspaceRoots() {
		if limits.Exceeds(root, limits.Path) {
			return tooLong(jsonwire.IndexPath(jsonwire.JoinPath(path, "session.workspaceRoots"), i), limits.Path)
		}
	}
	return nil
}

func tooLong(path string, max int) error { return invalid(path, "must be at most %d characters", max) }

func decodeOutcome(o *object) (ahpv1.SessionOutcome, error) {
	d := ahpv1.SessionOutcome(0).Descriptor()
	s, err := o.requiredString("outcome", false)
	if err != nil {
		return 0, err
	}
	n, ok := names.ParseEnumWire(d, s)
	if !ok {
		return 0, invalid(o.at("outcome"), "unknown outcome; expected one of %s",
			strings.Join(names.EnumWireNames(d), ", "))
	}
	return ahpv1.SessionOutcome(n), nil
}

func decodeSession(o *object) (*ahpv1.Session, error) {
	s := &ahpv1.Session{}
	var err error
	if s.Id, err = o.requiredString("id", true); err != nil {
		return nil, err
	}
	if s.Cwd, err = o.optionalString("cwd"); err != nil {
		return nil, err
	}
	if s.WorkspaceRoots, err = o.optionalStrings("workspaceRoots"); err != nil {
		return nil, err
	}
	if s.Model, err = o.optionalString("model"); err != nil {
		return nil, err
	}
	agent, err := o.optionalObject("agent")
	if err != nil {
		return nil, err
	}
	if agent != nil {
		s.Agent = &ahpv1.Agent{}
		if s.Agent.Id, err = agent.requiredString("id", true); err != nil {
			return nil, err
		}
		if s.Agent.Type, err = agent.optionalString("type"); err != nil {
			return nil, err
		}
		if s.Agent.UnknownFields, err = agent.rest(); err != nil {
			return nil, err
		}
	}
	if s.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeTool(o *object, eventType ahpv1.EventType) (*ahpv1.Tool, error) {
	t := &ahpv1.Tool{}
	var err error
	if t.CallId, err = o.requiredString("callId", true); err != nil {
		return nil, err
	}
	if t.Name, err = o.requiredString("name", true); err != nil {
		return nil, err
	}
	kind, err := o.requiredString("kind", false)
	if err != nil {
		return nil, err
	}
	var ok bool
	if t.Kind, ok = names.ParseToolKind(kind); !ok {
		return nil, invalid(o.at("kind"), "unknown tool kind; expected one of %s",
			strings.Join(names.EnumWireNames(ahpv1.ToolKind(0).Descriptor()), ", "))
	}
	if t.Input, err = o.requiredStruct("input"); err != nil {
		return nil, err
	}

	switch eventType {
	case ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE:
		if err := o.forbid("output", "not allowed on tool.before events; the tool has not run"); err != nil {
			return nil, err
		}
		if err := o.forbid("error", "not allowed on tool.before events; the tool has not run"); err != nil {
			return nil, err
		}
	case ahpv1.EventType_EVENT_TYPE_TOOL_AFTER:
		if err := o.forbid("error", "not allowed on tool.after events; failures are tool.error events"); err != nil {
			return nil, err
		}
		if t.Output, err = o.optionalValue("output"); err != nil {
			return nil, err
		}
	case ahpv1.EventType_EVENT_TYPE_TOOL_ERROR:
		if err := o.forbid("output", "not allowed on tool.error events"); err != nil {
			return nil, err
		}
		e, err := o.requiredObject("error")
		if err != nil {
			return nil, err
		}
		if t.Error, err = decodeToolError(e); err != nil {
			return nil, err
		}
	}

	mcp, err := o.optionalObject("mcp")
	if err != nil {
		return nil, err
	}
	if mcp != nil {
		// v0.1 only says mcp is an object; server and tool are read when they are strings.
		t.Mcp = &ahpv1.McpTool{Server: mcp.looseString("server"), Tool: mcp.looseString("tool")}
		if t.Mcp.UnknownFields, err = mcp.rest(); err != nil {
			return nil, err
		}
	}
	if t.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeToolError reads tool.error's error object. The schema requires message but gives none
// of message, code and category a JSON type, so only string forms land in the typed fields.
func decodeToolError(o *object) (*ahpv1.ToolError, error) {
	if !o.has("message") {
		return nil, invalid(o.at("message"), "required")
	}
	e := &ahpv1.ToolError{Message: o.looseString("message"), Category: o.looseString("category")}
	var err error
	if e.Code, err = o.optionalValue("code"); err != nil {
		return nil, err
	}
	if e.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return e, nil
}

func decodeNative(o *object) (*ahpv1.Native, error) {
	n := &ahpv1.Native{}
	var err error
	if n.Provider, err = o.requiredString("provider", true); err != nil {
		return nil, err
	}
	if n.EventName, err = o.requiredString("eventName", true); err != nil {
		return nil, err
	}
	if n.Payload, err = o.requiredStruct("payload"); err != nil {
		return nil, err
	}
	if n.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return n, nil
}

func (e encoder) event(ev *ahpv1.Event) map[string]any {
	out := e.base(ev.GetUnknownFields())
	putString(out, "id", ev.GetId())
	putString(out, "source", ev.GetSource())
	if name := names.EventTypeName(ev.GetType()); name != "" {
		out["type"] = name
	}
	putString(out, "time", ev.GetTime())
	if s := ev.GetSession(); s != nil {
		out["session"] = e.session(s)
	}
	if t := ev.GetTool(); t != nil {
		out["tool"] = e.tool(t)
	}
	if n := ev.GetNative(); n != nil {
		m := e.base(n.GetUnknownFields())
		putString(m, "provider", n.GetProvider())
		putString(m, "eventName", n.GetEventName())
		if n.GetPayload() != nil {
			m["payload"] = e.object(n.GetPayload())
		}
		out["native"] = m
	}
	if ev.GetExtensions() != nil {
		out["extensions"] = e.object(ev.GetExtensions())
	}
	if ev.GetOutcome() != ahpv1.SessionOutcome_SESSION_OUTCOME_UNSPECIFIED {
		out["outcome"] = names.EnumWireName(ev.GetOutcome())
	}
	return out
}

func (e encoder) session(s *ahpv1.Session) map[string]any {
	m := e.base(s.GetUnknownFields())
	putString(m, "id", s.GetId())
	putString(m, "cwd", s.GetCwd())
	if roots := s.GetWorkspaceRoots(); len(roots) > 0 {
		list := make([]any, len(roots))
		for i, r := range roots {
			list[i] = r
		}
		m["workspaceRoots"] = list
	}
	putString(m, "model", s.GetModel())
	if a := s.GetAgent(); a != nil {
		am := e.base(a.GetUnknownFields())
		putString(am, "id", a.GetId())
		putString(am, "type", a.GetType())
		m["agent"] = am
	}
	return m
}

func (e encoder) tool(t *ahpv1.Tool) map[string]any {
	m := e.base(t.GetUnknownFields())
	putString(m, "callId", t.GetCallId())
	putString(m, "name", t.GetName())
	putString(m, "kind", names.ToolKindName(t.GetKind()))
	if t.GetInput() != nil {
		m["input"] = e.object(t.GetInput())
	}
	if t.GetOutput() != nil {
		m["output"] = e.value(t.GetOutput())
	}
	if te := t.GetError(); te != nil {
		em := e.base(te.GetUnknownFields())
		putString(em, "message", te.GetMessage())
		if te.GetCode() != nil {
			em["code"] = e.value(te.GetCode())
		}
		putString(em, "category", te.GetCategory())
		m["error"] = em
	}
	if mcp := t.GetMcp(); mcp != nil {
		mm := e.base(mcp.GetUnknownFields())
		putString(mm, "server", mcp.GetServer())
		putString(mm, "tool", mcp.GetTool())
		m["mcp"] = mm
	}
	return m
}

// putString sets a string member unless it is empty; an empty member that was on the wire
// comes back through the unknown fields instead.
func putString(m map[string]any, key, s string) {
	if s != "" {
		m[key] = s
	}
}
