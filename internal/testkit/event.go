package testkit

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// The defaults of the events built here; options override them.
const (
	DefaultSource  = "urn:ahp-test"
	DefaultSession = "s1"
)

// EventOption adjusts an event built by Event or ShellEvent.
type EventOption func(*ahpv1.Event)

// Event returns an event of type typ with id, DefaultSource and a session DefaultSession, then
// applies opts in order.
func Event(id string, typ ahpv1.EventType, opts ...EventOption) *ahpv1.Event {
	ev := &ahpv1.Event{Id: id, Source: DefaultSource, Type: typ, Session: &ahpv1.Session{Id: DefaultSession}}
	for _, o := range opts {
		o(ev)
	}
	return ev
}

// ShellEvent returns a tool.before event (see Event) for the tool "Bash" of kind shell, with
// call id "c-"+id and input {"command": command}, then applies opts in order.
func ShellEvent(id, command string, opts ...EventOption) *ahpv1.Event {
	input, err := structpb.NewStruct(map[string]any{"command": command})
	if err != nil {
		panic(err) // a string value always converts
	}
	ev := Event(id, ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE)
	ev.Tool = &ahpv1.Tool{CallId: "c-" + id, Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input}
	for _, o := range opts {
		o(ev)
	}
	return ev
}

// Session sets the session id.
func Session(id string) EventOption {
	return func(ev *ahpv1.Event) {
		if ev.Session == nil {
			ev.Session = &ahpv1.Session{}
		}
		ev.Session.Id = id
	}
}

// Agent sets the session's agent id.
func Agent(id string) EventOption {
	return func(ev *ahpv1.Event) {
		if ev.Session == nil {
			ev.Session = &ahpv1.Session{}
		}
		ev.Session.Agent = &ahpv1.Agent{Id: id}
	}
}

// Source sets the event source ("" for none).
func Source(s string) EventOption { return func(ev *ahpv1.Event) { ev.Source = s } }

// Type sets the event type.
func Type(typ ahpv1.EventType) EventOption { return func(ev *ahpv1.Event) { ev.Type = typ } }

// Tool sets the tool's name and kind, keeping its other fields.
func Tool(name string, kind ahpv1.ToolKind) EventOption {
	return func(ev *ahpv1.Event) {
		if ev.Tool == nil {
			ev.Tool = &ahpv1.Tool{}
		}
		ev.Tool.Name, ev.Tool.Kind = name, kind
	}
}

// HooksOrigin marks the event as coming from an Agent Hooks v0.1 caller.
func HooksOrigin() EventOption {
	return func(ev *ahpv1.Event) {
		ev.Origin = &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HOOKS, ProtocolVersion: "0.1"}
	}
}

// HarnessOrigin marks the event as coming from an Agent Harness v2.4 caller.
func HarnessOrigin() EventOption {
	return func(ev *ahpv1.Event) {
		ev.Origin = &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HARNESS, ProtocolVersion: "2.4"}
	}
}
