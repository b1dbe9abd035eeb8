package adapter

import ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"

// Factory Droid's hooks (docs.factory.ai/reference/hooks-reference): Claude Code's events, matcher
// groups and answers (hookSpecificOutput.permissionDecision allow/deny/ask, updatedInput;
// decision "block" on UserPromptSubmit), with camelCase common input fields (hookEventName,
// sessionId, transcriptPath, permissionMode). Exit 2 blocks with stderr as the reason; other
// failures are non-blocking.
const (
	factorySubagentStop = "SubagentStop"
	factoryPreCompact   = "PreCompact"
)

func init() {
	ev, order := specs(
		&eventSpec{native: PreToolUse, canonical: evToolBefore, delivery: intercept, tool: true,
			caps: capsFor(Factory, effDeny, effAllow, effAsk, effEscalate, effModify, effMessage)},
		&eventSpec{native: UserPromptSubmit, canonical: evTurnStart, delivery: intercept,
			caps: capsFor(Factory, effDeny, effMessage)},
		&eventSpec{native: PostToolUse, canonical: evToolAfter, delivery: observe, tool: true},
		&eventSpec{native: SessionStart, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: SessionEnd, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
		&eventSpec{native: Stop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
		&eventSpec{native: factorySubagentStop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
		&eventSpec{native: factoryPreCompact, canonical: ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE, delivery: observe},
	)
	formats[Factory] = &format{
		eventFields: []string{"hookEventName", fieldEventName}, events: ev, order: order,
		toolNameField: fieldToolName, toolInputField: fieldToolInput,
		read:  readClaude(Factory, claudeKeys{session: []string{"sessionId", fieldSessionID}, callID: []string{fieldToolUseID, "toolUseId"}}),
		write: writeClaude, stableCallIDs: true,
		kinds: kindTable(map[ahpv1.ToolKind][]string{
			kindShell:                           {"Execute"},
			ahpv1.ToolKind_TOOL_KIND_FILE_WRITE: {"Create"},
			ahpv1.ToolKind_TOOL_KIND_FILE_EDIT:  {"ApplyPatch"},
			ahpv1.ToolKind_TOOL_KIND_SEARCH:     {"LS"},
			ahpv1.ToolKind_TOOL_KIND_FETCH:      {"FetchUrl"},
		}),
	}
}
