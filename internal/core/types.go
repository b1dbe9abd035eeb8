package core

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// eventClass says how the core may handle an event type.
type eventClass uint8

const (
	classUnknown eventClass = iota
	// classIntercept: a blocking event answered with a generic decision.
	classIntercept
	// classTyped: a Harness typed event answered with a typed decision.
	classTyped
	// classObserve: a fire-and-forget event.
	classObserve
	// classEither: interceptable in the Hooks draft and observable as well.
	classEither
)

var classes = map[ahpv1.EventType]eventClass{
	ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE:          classEither, // observed tool.before is allowed
	ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE: classEither,
	ahpv1.EventType_EVENT_TYPE_HANDSHAKE:            classIntercept,
	ahpv1.EventType_EVENT_TYPE_QUERY:                classIntercept,

	ahpv1.EventType_EVENT_TYPE_TOOL_AFTER:           classEither,
	ahpv1.EventType_EVENT_TYPE_SESSION_START:        classEither,
	ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER: classEither,
	ahpv1.EventType_EVENT_TYPE_TOOL_ERROR:           classObserve,
	ahpv1.EventType_EVENT_TYPE_SESSION_END:          classObserve,
	ahpv1.EventType_EVENT_TYPE_ERROR:                classObserve,
	ahpv1.EventType_EVENT_TYPE_HEARTBEAT:            classObserve,
	ahpv1.EventType_EVENT_TYPE_SUCCESS:              classObserve,
	ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE:        classObserve,
	ahpv1.EventType_EVENT_TYPE_TASK_LIST:            classObserve,
	ahpv1.EventType_EVENT_TYPE_VERIFICATION:         classObserve,

	// Hooks draft catalogue: interceptable ones per its capability table, the rest observe-only.
	ahpv1.EventType_EVENT_TYPE_TURN_START:               classEither,
	ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE:       classEither,
	ahpv1.EventType_EVENT_TYPE_MODEL_SWITCH_BEFORE:      classEither,
	ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_REQUEST:  classEither,
	ahpv1.EventType_EVENT_TYPE_TOOL_BATCH_AFTER:         classEither,
	ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE:   classEither,
	ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_AFTER:    classEither,
	ahpv1.EventType_EVENT_TYPE_CONFIG_CHANGE_BEFORE:     classEither,
	ahpv1.EventType_EVENT_TYPE_USER_ELICITATION_REQUEST: classEither,
	ahpv1.EventType_EVENT_TYPE_USER_ELICITATION_RESULT:  classEither,
	ahpv1.EventType_EVENT_TYPE_USER_MESSAGE_INBOUND:     classEither,
	ahpv1.EventType_EVENT_TYPE_USER_MESSAGE_OUTBOUND:    classEither,
	ahpv1.EventType_EVENT_TYPE_TASK_CHANGE_BEFORE:       classEither,
	ahpv1.EventType_EVENT_TYPE_WORKSPACE_CHANGE_BEFORE:  classEither,
	ahpv1.EventType_EVENT_TYPE_TURN_END:                 classObserve,
	ahpv1.EventType_EVENT_TYPE_TURN_PROGRESS:            classObserve,
	ahpv1.EventType_EVENT_TYPE_MODEL_ERROR:              classObserve,
	ahpv1.EventType_EVENT_TYPE_MODEL_SWITCH_AFTER:       classObserve,
	ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_RESOLVED: classObserve,
	ahpv1.EventType_EVENT_TYPE_TOOL_PROGRESS:            classObserve,
	ahpv1.EventType_EVENT_TYPE_CONFIG_CHANGE_AFTER:      classObserve,
	ahpv1.EventType_EVENT_TYPE_USER_ATTENTION:           classObserve,
	ahpv1.EventType_EVENT_TYPE_HOOK_FAILURE:             classObserve,
	ahpv1.EventType_EVENT_TYPE_TASK_CHANGE_AFTER:        classObserve,
	ahpv1.EventType_EVENT_TYPE_WORKSPACE_CHANGE_AFTER:   classObserve,
	ahpv1.EventType_EVENT_TYPE_FILE_CHANGED:             classObserve,

	ahpv1.EventType_EVENT_TYPE_IDLE:               classTyped,
	ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION:   classTyped,
	ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION: classTyped,
	ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL:      classTyped,
	ahpv1.EventType_EVENT_TYPE_PLANNING:           classTyped,
	ahpv1.EventType_EVENT_TYPE_REASONING:          classTyped,
	ahpv1.EventType_EVENT_TYPE_RATE_LIMIT:         classTyped,
	ahpv1.EventType_EVENT_TYPE_CONFIRMATION:       classTyped,
}

func classOf(t ahpv1.EventType) eventClass { return classes[t] }

func interceptable(t ahpv1.EventType) bool {
	c := classOf(t)
	return c == classIntercept || c == classEither || c == classTyped
}

func observable(t ahpv1.EventType) bool {
	c := classOf(t)
	return c == classObserve || c == classEither
}

// batchable mirrors the Harness rule: every generic-decision event type except handshake and query.
func batchable(t ahpv1.EventType) bool {
	c := classOf(t)
	if t == ahpv1.EventType_EVENT_TYPE_HANDSHAKE || t == ahpv1.EventType_EVENT_TYPE_QUERY {
		return false
	}
	return c != classTyped && c != classUnknown
}

// bodyType gives the event type implied by a typed or contract payload, if any.
func bodyType(ev *ahpv1.Event) ahpv1.EventType {
	switch ev.GetBody().(type) {
	case *ahpv1.Event_Idle:
		return ahpv1.EventType_EVENT_TYPE_IDLE
	case *ahpv1.Event_IntentDetection:
		return ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION
	case *ahpv1.Event_ContextPerception:
		return ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION
	case *ahpv1.Event_MemoryRecall:
		return ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL
	case *ahpv1.Event_Planning:
		return ahpv1.EventType_EVENT_TYPE_PLANNING
	case *ahpv1.Event_Reasoning:
		return ahpv1.EventType_EVENT_TYPE_REASONING
	case *ahpv1.Event_RateLimit:
		return ahpv1.EventType_EVENT_TYPE_RATE_LIMIT
	case *ahpv1.Event_Confirmation:
		return ahpv1.EventType_EVENT_TYPE_CONFIRMATION
	case *ahpv1.Event_RunLifecycle:
		return ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE
	case *ahpv1.Event_TaskList:
		return ahpv1.EventType_EVENT_TYPE_TASK_LIST
	case *ahpv1.Event_Verification:
		return ahpv1.EventType_EVENT_TYPE_VERIFICATION
	}
	return ahpv1.EventType_EVENT_TYPE_UNSPECIFIED
}

// needsBody reports whether an event type must carry its typed or contract payload.
func needsBody(t ahpv1.EventType) bool {
	switch t {
	case ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE, ahpv1.EventType_EVENT_TYPE_TASK_LIST, ahpv1.EventType_EVENT_TYPE_VERIFICATION:
		return true
	}
	return classOf(t) == classTyped
}
