package policy

import (
	"fmt"
	"slices"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// harnessEventNames maps the Agent Harness Protocol v2.4 event names that differ from their
// canonical name (DESIGN.md, "One canonical event, several dialect names"). Harness names equal to
// a canonical name (error, heartbeat, idle, ...) need no entry. Harness "error" is ambiguous on the
// wire (it becomes tool.error when it names a tool), so in a policy it means canonical "error" only.
var harnessEventNames = map[string]string{
	"pre_action":    "tool.before",
	"post_action":   "tool.after",
	"session_start": "session.start",
	"session_end":   "session.end",
	"pre_prompt":    "model.request.before",
	"post_response": "model.response.after",
	"run_lifecycle": "run.lifecycle",
	"task_list":     "task.list",
}

// parseEventName resolves a name from a rule's `on:` list or a test event: a canonical name
// ("tool.before"), a Harness name ("pre_action") or a typed event name ("rate_limit").
func parseEventName(name string) (ahpv1.EventType, error) {
	if canonical, ok := harnessEventNames[name]; ok {
		name = canonical
	}
	if t, ok := names.ParseEventType(name); ok {
		return t, nil
	}
	return 0, fmt.Errorf("unknown event type %q", name)
}

// typedActions lists, per Harness typed event, the actions its typed decision can express. A
// typed rule is checked against it at load so a wrong action never reaches the typed deciders.
var typedActions = map[ahpv1.EventType][]string{
	ahpv1.EventType_EVENT_TYPE_IDLE:               {"allow", "defer"},
	ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION:   {"allow", "block"},
	ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION: {"allow", "block", "refine"},
	ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL:      {"allow", "block"},
	ahpv1.EventType_EVENT_TYPE_PLANNING:           {"allow", "block", "modify"},
	ahpv1.EventType_EVENT_TYPE_REASONING:          {"allow", "block"},
	ahpv1.EventType_EVENT_TYPE_RATE_LIMIT:         {"retry", "queue", "skip"},
	ahpv1.EventType_EVENT_TYPE_CONFIRMATION:       {"escalate", "approve", "reject"},
}

// TypedActions lists the actions a typed rule may give event type t, in the order of its typed
// decision's variants; nil when t is not typed. The policy compiler rejects any other action and
// the typed deciders apply exactly these.
func TypedActions(t ahpv1.EventType) []string { return slices.Clone(typedActions[t]) }

// isTyped reports whether t is one of the eight Harness typed events.
func isTyped(t ahpv1.EventType) bool {
	_, ok := typedActions[t]
	return ok
}

// modifiableEvents are the event types whose tool input a modify rule may change.
var modifiableEvents = []ahpv1.EventType{
	ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
	ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_REQUEST,
}

// bodyFieldByType names the Event.body oneof member that carries the typed payload of an event
// type; event types without one carry their payload in Event.payload.
var bodyFieldByType = map[ahpv1.EventType]string{
	ahpv1.EventType_EVENT_TYPE_IDLE:               "idle",
	ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION:   "intent_detection",
	ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION: "context_perception",
	ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL:      "memory_recall",
	ahpv1.EventType_EVENT_TYPE_PLANNING:           "planning",
	ahpv1.EventType_EVENT_TYPE_REASONING:          "reasoning",
	ahpv1.EventType_EVENT_TYPE_RATE_LIMIT:         "rate_limit",
	ahpv1.EventType_EVENT_TYPE_CONFIRMATION:       "confirmation",
	ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:      "run_lifecycle",
	ahpv1.EventType_EVENT_TYPE_TASK_LIST:          "task_list",
	ahpv1.EventType_EVENT_TYPE_VERIFICATION:       "verification",
}

// allEventTypes lists every named EventType, for indexing rules by type.
func allEventTypes() []ahpv1.EventType {
	values := ahpv1.EventType(0).Descriptor().Values()
	out := make([]ahpv1.EventType, 0, values.Len())
	for i := range values.Len() {
		t := ahpv1.EventType(values.Get(i).Number())
		if names.EventTypeName(t) != "" {
			out = append(out, t)
		}
	}
	return out
}

// typeNames renders event types as canonical names, for messages.
func typeNames(types []ahpv1.EventType) string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = names.EventTypeName(t)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
