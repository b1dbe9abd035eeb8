package harness

import (
	"slices"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// ProtocolVersion is the Agent Harness Protocol version this codec speaks.
const ProtocolVersion = "2.4"

// eventTypeInfo is one row of the reference's EventType table.
type eventTypeInfo struct {
	name     string
	canon    ahpv1.EventType
	blocking bool // must arrive as a request
	typed    bool // answered with a typed decision
}

// eventTypeTable lists the 22 event types in the reference's declaration order, which is
// also the order of its "expected one of" list.
var eventTypeTable = []eventTypeInfo{
	{"handshake", ahpv1.EventType_EVENT_TYPE_HANDSHAKE, true, false},
	{"pre_action", ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, true, false},
	{"post_action", ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, false, false},
	{"pre_prompt", ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, true, false},
	{"post_response", ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER, false, false},
	{"session_start", ahpv1.EventType_EVENT_TYPE_SESSION_START, false, false},
	{"session_end", ahpv1.EventType_EVENT_TYPE_SESSION_END, false, false},
	{"error", ahpv1.EventType_EVENT_TYPE_ERROR, false, false},
	{"query", ahpv1.EventType_EVENT_TYPE_QUERY, true, false},
	{"heartbeat", ahpv1.EventType_EVENT_TYPE_HEARTBEAT, false, false},
	{"idle", ahpv1.EventType_EVENT_TYPE_IDLE, true, true},
	{"context_perception", ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION, true, true},
	{"success", ahpv1.EventType_EVENT_TYPE_SUCCESS, false, false},
	{"memory_recall", ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL, true, true},
	{"planning", ahpv1.EventType_EVENT_TYPE_PLANNING, true, true},
	{"reasoning", ahpv1.EventType_EVENT_TYPE_REASONING, true, true},
	{"rate_limit", ahpv1.EventType_EVENT_TYPE_RATE_LIMIT, true, true},
	{"confirmation", ahpv1.EventType_EVENT_TYPE_CONFIRMATION, true, true},
	{"intent_detection", ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION, true, true},
	{"run_lifecycle", ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE, false, false},
	{"task_list", ahpv1.EventType_EVENT_TYPE_TASK_LIST, false, false},
	{"verification", ahpv1.EventType_EVENT_TYPE_VERIFICATION, false, false},
}

var eventTypeNames = func() []string {
	names := make([]string, len(eventTypeTable))
	for i, t := range eventTypeTable {
		names[i] = t.name
	}
	return names
}()

func lookupType(name string) (eventTypeInfo, bool) {
	i := slices.IndexFunc(eventTypeTable, func(t eventTypeInfo) bool { return t.name == name })
	if i < 0 {
		return eventTypeInfo{}, false
	}
	return eventTypeTable[i], true
}

// isBlocking reports whether events of the named type must arrive as JSON-RPC requests
// (and get a decision); the others must arrive as notifications. Unknown names are not blocking.
func isBlocking(eventType string) bool {
	t, ok := lookupType(eventType)
	return ok && t.blocking
}

// UsesTypedDecision reports whether the named type is answered with a typed decision
// (IdleDecision, ..., ConfirmationDecision) instead of the generic Decision.
func UsesTypedDecision(eventType string) bool {
	t, ok := lookupType(eventType)
	return ok && t.typed
}

// isBatchable reports whether the named type may appear in ahp/batch: every type except
// handshake, query and the typed ones. Fire-and-forget types are batchable.
func isBatchable(eventType string) bool {
	t, ok := lookupType(eventType)
	return ok && !t.typed && eventType != "handshake" && eventType != "query"
}

// isContract reports whether the named type carries a run contract payload, which the
// reference validates with the event's shape.
func isContract(name string) bool {
	return name == "run_lifecycle" || name == "task_list" || name == "verification"
}
