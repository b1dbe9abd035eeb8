package hooks

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// eventSpec is one entry of the draft's 32-event catalogue: its canonical type, whether
// hooks/intercept takes it, whether it carries the call/tool/path triple, and the event-specific
// members it requires (with their JSON kinds) beyond the envelope and the typed members.
type eventSpec struct {
	typ           ahpv1.EventType
	interceptable bool
	tool          bool
	session       bool // session is required (session.start, session.end)
	required      []member
}

// member is a required body member and the JSON kind it must have.
type member struct {
	name string
	kind jsonKind
}

type jsonKind uint8

const (
	kindAny jsonKind = iota
	kindObject
	kindArray
	kindString
	kindBool
	kindInteger
)

func (k jsonKind) String() string {
	return [...]string{"any JSON value", "an object", "an array", "a string", "a boolean", "an integer"}[k]
}

func req(name string, k jsonKind) member { return member{name, k} }

// catalogue is the draft event catalogue (event.schema.json and the payload documents). The
// typed members (turn, model, attempt, execution, outcome, error, items, trigger, ...) are
// required through the flags below, not through required.
var catalogue = map[string]eventSpec{
	"session.start": {typ: ahpv1.EventType_EVENT_TYPE_SESSION_START, interceptable: true, session: true,
		required: []member{req("trigger", kindString), req("harness", kindObject), req("permissionMode", kindString), req("manifest", kindObject), req("items", kindArray)}},
	"session.end": {typ: ahpv1.EventType_EVENT_TYPE_SESSION_END, session: true,
		required: []member{req("outcome", kindString), req("reason", kindString)}},
	"tool.before": {typ: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, interceptable: true, tool: true},
	"tool.after": {typ: ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, interceptable: true, tool: true,
		required: []member{req("outcome", kindString), req("execution", kindObject), req("items", kindArray)}},
	"turn.start": {typ: ahpv1.EventType_EVENT_TYPE_TURN_START, interceptable: true,
		required: []member{req("turn", kindObject), req("trigger", kindString), req("items", kindArray)}},
	"turn.finish.before": {typ: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, interceptable: true,
		required: []member{req("turn", kindObject), req("outcome", kindString), req("continuationCount", kindInteger), req("items", kindArray)}},
	"turn.end": {typ: ahpv1.EventType_EVENT_TYPE_TURN_END,
		required: []member{req("turn", kindObject), req("outcome", kindString), req("continuationCount", kindInteger), req("items", kindArray)}},
	"turn.progress": {typ: ahpv1.EventType_EVENT_TYPE_TURN_PROGRESS,
		required: []member{req("turn", kindObject), req("item", kindObject), req("delta", kindAny), req("final", kindBool)}},
	"model.request.before": {typ: ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, interceptable: true,
		required: []member{req("model", kindObject), req("attempt", kindObject), req("params", kindObject), req("items", kindArray)}},
	"model.response.after": {typ: ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER, interceptable: true,
		required: []member{req("model", kindObject), req("attempt", kindObject), req("execution", kindObject), req("items", kindArray), req("finishReason", kindString)}},
	"model.error": {typ: ahpv1.EventType_EVENT_TYPE_MODEL_ERROR,
		required: []member{req("model", kindObject), req("attempt", kindObject), req("execution", kindObject), req("error", kindObject)}},
	"model.switch.before": {typ: ahpv1.EventType_EVENT_TYPE_MODEL_SWITCH_BEFORE, interceptable: true,
		required: []member{req("current", kindObject), req("proposed", kindObject), req("reason", kindString)}},
	"model.switch.after": {typ: ahpv1.EventType_EVENT_TYPE_MODEL_SWITCH_AFTER,
		required: []member{req("previous", kindObject), req("current", kindObject), req("reason", kindString)}},
	"tool.permission.request": {typ: ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_REQUEST, interceptable: true, tool: true,
		required: []member{req("suggestions", kindArray), req("sandboxBypass", kindBool)}},
	"tool.permission.resolved": {typ: ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_RESOLVED, tool: true,
		required: []member{req("decision", kindString), req("decidedBy", kindString)}},
	"tool.progress": {typ: ahpv1.EventType_EVENT_TYPE_TOOL_PROGRESS, tool: true,
		required: []member{req("partialOutput", kindAny), req("backgrounded", kindBool)}},
	"tool.batch.after": {typ: ahpv1.EventType_EVENT_TYPE_TOOL_BATCH_AFTER, interceptable: true,
		required: []member{req("batch", kindObject), req("calls", kindArray)}},
	"context.compact.before": {typ: ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE, interceptable: true,
		required: []member{req("trigger", kindString), req("items", kindArray)}},
	"context.compact.after": {typ: ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_AFTER, interceptable: true,
		required: []member{req("summary", kindAny), req("removed", kindAny), req("execution", kindObject)}},
	"config.change.before": {typ: ahpv1.EventType_EVENT_TYPE_CONFIG_CHANGE_BEFORE, interceptable: true,
		required: []member{req("change", kindObject)}},
	"config.change.after": {typ: ahpv1.EventType_EVENT_TYPE_CONFIG_CHANGE_AFTER,
		required: []member{req("change", kindObject)}},
	"user.attention": {typ: ahpv1.EventType_EVENT_TYPE_USER_ATTENTION,
		required: []member{req("attention", kindObject)}},
	"user.elicitation.request": {typ: ahpv1.EventType_EVENT_TYPE_USER_ELICITATION_REQUEST, interceptable: true,
		required: []member{req("elicitation", kindObject)}},
	"user.elicitation.result": {typ: ahpv1.EventType_EVENT_TYPE_USER_ELICITATION_RESULT, interceptable: true,
		required: []member{req("elicitation", kindObject)}},
	"user.message.inbound": {typ: ahpv1.EventType_EVENT_TYPE_USER_MESSAGE_INBOUND, interceptable: true,
		required: []member{req("message", kindObject)}},
	"user.message.outbound": {typ: ahpv1.EventType_EVENT_TYPE_USER_MESSAGE_OUTBOUND, interceptable: true,
		required: []member{req("message", kindObject)}},
	"hook.failure": {typ: ahpv1.EventType_EVENT_TYPE_HOOK_FAILURE,
		required: []member{req("failure", kindObject), req("parentEventId", kindString)}},
	"task.change.before": {typ: ahpv1.EventType_EVENT_TYPE_TASK_CHANGE_BEFORE, interceptable: true,
		required: []member{req("task", kindObject)}},
	"task.change.after": {typ: ahpv1.EventType_EVENT_TYPE_TASK_CHANGE_AFTER,
		required: []member{req("task", kindObject)}},
	"workspace.change.before": {typ: ahpv1.EventType_EVENT_TYPE_WORKSPACE_CHANGE_BEFORE, interceptable: true,
		required: []member{req("workspace", kindObject)}},
	"workspace.change.after": {typ: ahpv1.EventType_EVENT_TYPE_WORKSPACE_CHANGE_AFTER,
		required: []member{req("workspace", kindObject)}},
	"file.changed": {typ: ahpv1.EventType_EVENT_TYPE_FILE_CHANGED,
		required: []member{req("changes", kindArray)}},
}

// CatalogueEvents lists the 32 draft event names; InterceptableEvents the 19 hooks/intercept
// takes. Both are in the catalogue's order.
var (
	CatalogueEvents = []string{
		"session.start", "session.end", "tool.before", "tool.after", "turn.start", "turn.finish.before",
		"turn.end", "turn.progress", "model.request.before", "model.response.after", "model.error",
		"model.switch.before", "model.switch.after", "tool.permission.request", "tool.permission.resolved",
		"tool.progress", "tool.batch.after", "context.compact.before", "context.compact.after",
		"config.change.before", "config.change.after", "user.attention", "user.elicitation.request",
		"user.elicitation.result", "user.message.inbound", "user.message.outbound", "hook.failure",
		"task.change.before", "task.change.after", "workspace.change.before", "workspace.change.after",
		"file.changed",
	}
	InterceptableEvents = interceptable()
)

func interceptable() []string {
	var out []string
	for _, name := range CatalogueEvents {
		if catalogue[name].interceptable {
			out = append(out, name)
		}
	}
	return out
}

// IsInterceptable reports whether the draft lets hooks/intercept carry the named event.
func IsInterceptable(name string) bool { return catalogue[name].interceptable }

// removedNames are names earlier drafts used; they are not further standard events.
var removedNames = map[string]bool{
	"tool.error": true, "prompt.submitted": true, "agent.stop": true, "notification": true,
	"permission.request": true, "compact.pre": true, "compact.post": true, "file.edited": true, "other": true,
}

func hasKind(v any, k jsonKind) bool {
	switch k {
	case kindObject:
		_, ok := v.(map[string]any)
		return ok
	case kindArray:
		_, ok := v.([]any)
		return ok
	case kindString:
		_, ok := v.(string)
		return ok
	case kindBool:
		_, ok := v.(bool)
		return ok
	case kindInteger:
		_, ok := safeInteger(v)
		return ok
	}
	return true
}
