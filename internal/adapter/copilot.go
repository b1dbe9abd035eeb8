package adapter

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// GitHub Copilot's hooks (docs.github.com, "Copilot CLI hooks reference"; code.visualstudio.com,
// agent hooks): .github/hooks/*.json, {"version": 1, "hooks": {EVENT: [{"type": "command",
// "bash": …}]}}. Two payload formats, chosen by how the event is spelled in the configuration:
//
//   - camelCase (preToolUse, …): camelCase fields (toolName, toolArgs as a JSON string, no event
//     name — the hook command passes --event); only preToolUse is answered, and only its
//     {"permissionDecision": "deny", "permissionDecisionReason": …} is acted on;
//   - PascalCase, "VS Code compatible" (PreToolUse, …): Claude Code's snake_case fields plus
//     hookEventName, and Claude Code's hookSpecificOutput answers (allow/deny/ask, updatedInput).
//
// A hook that fails or times out does not block (fail-open); its default timeout is 30 s.
const (
	copilotPreToolUse      = "preToolUse"
	copilotPostToolUse     = "postToolUse"
	copilotPromptSubmitted = "userPromptSubmitted"
	copilotSessionStart    = "sessionStart"
	copilotSessionEnd      = "sessionEnd"
	copilotErrorOccurred   = "errorOccurred"
	copilotAgentStop       = "agentStop"
	copilotSubagentStop    = "subagentStop"
	copilotVSSubagentStart = "SubagentStart"
	copilotVSSubagentStop  = "SubagentStop"
	copilotVSPreCompact    = "PreCompact"
	copilotCamelToolName   = "toolName"
	copilotCamelToolArgs   = "toolArgs"
	copilotCamelToolResult = "toolResult"
	copilotEventNameField  = "hookEventName"
	copilotSessionIDField  = "sessionId"
)

func init() {
	ev, order := specs(
		// VS Code compatible (PascalCase) events.
		&eventSpec{native: PreToolUse, canonical: evToolBefore, delivery: intercept, tool: true,
			caps: capsFor(Copilot, effDeny, effAllow, effAsk, effEscalate, effModify, effMessage)},
		&eventSpec{native: UserPromptSubmit, canonical: ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, delivery: intercept,
			caps: capsFor(Copilot, effDeny, effMessage)},
		&eventSpec{native: PostToolUse, canonical: evToolAfter, delivery: observe, tool: true},
		&eventSpec{native: SessionStart, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: Stop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
		&eventSpec{native: copilotVSSubagentStart, canonical: ahpv1.EventType_EVENT_TYPE_TURN_START, delivery: observe},
		&eventSpec{native: copilotVSSubagentStop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
		&eventSpec{native: copilotVSPreCompact, canonical: ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE, delivery: observe},
		// Copilot CLI camelCase events.
		&eventSpec{native: copilotPreToolUse, canonical: evToolBefore, delivery: intercept, tool: true, caps: capsFor(Copilot, effDeny)},
		&eventSpec{native: copilotPostToolUse, canonical: evToolAfter, delivery: observe, tool: true},
		// Its output is not read, so the prompt can only be recorded.
		&eventSpec{native: copilotPromptSubmitted, canonical: ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, delivery: observe},
		&eventSpec{native: copilotSessionStart, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: copilotSessionEnd, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
		&eventSpec{native: copilotErrorOccurred, canonical: ahpv1.EventType_EVENT_TYPE_ERROR, delivery: observe},
		&eventSpec{native: copilotAgentStop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
		&eventSpec{native: copilotSubagentStop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
	)
	formats[Copilot] = &format{
		eventFields: []string{copilotEventNameField, fieldEventName}, events: ev, order: order,
		toolNameField: fieldToolName, toolInputField: fieldToolInput,
		read: readCopilot, write: writeCopilot, stableCallIDs: true,
		kinds: kindTable(map[ahpv1.ToolKind][]string{
			kindShell:                           {"powershell", "runInTerminal", "run_in_terminal"},
			kindFileRead:                        {"readFile"},
			ahpv1.ToolKind_TOOL_KIND_FILE_WRITE: {"create", "createFile"},
			ahpv1.ToolKind_TOOL_KIND_FILE_EDIT:  {"str_replace_editor", "editFiles", "replace_string_in_file", "insert_edit_into_file"},
			ahpv1.ToolKind_TOOL_KIND_SEARCH:     {"grep_search", "file_search", "semantic_search", "codebase"},
			ahpv1.ToolKind_TOOL_KIND_FETCH:      {"fetch_webpage"},
			ahpv1.ToolKind_TOOL_KIND_TASK:       {"runSubagent"},
		}),
	}
}

// camelCase reports whether a Copilot event is one of the CLI's camelCase ones.
func copilotCamelCase(native string) bool {
	return native != "" && native[0] >= 'a' && native[0] <= 'z'
}

func readCopilot(spec *eventSpec, rest fieldMap) (*fields, error) {
	if !copilotCamelCase(spec.native) {
		return readClaude(Copilot, claudeKeys{
			session: []string{copilotSessionIDField, fieldSessionID}, callID: []string{fieldToolUseID},
		})(spec, rest)
	}
	fl := &fields{session: &ahpv1.Session{Id: rest.take(copilotSessionIDField), Cwd: rest.take(fieldCwd)}}
	if !spec.tool {
		return fl, nil
	}
	t := &fl.tool
	t.name = rest.take(copilotCamelToolName)
	t.input, _ = rest.takeObject(copilotCamelToolArgs)
	if spec.canonical == evToolAfter {
		t.output, t.hasOutput = rest.takeAny(copilotCamelToolResult)
	}
	return fl, nil
}

// copilotCamelOutput is the camelCase preToolUse answer.
type copilotCamelOutput struct {
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// copilotPromptOutput refuses a VS Code compatible UserPromptSubmit with the common output fields.
type copilotPromptOutput struct {
	Continue      *bool  `json:"continue,omitempty"`
	StopReason    string `json:"stopReason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

func writeCopilot(req *Request, a answer) (Output, error) {
	switch req.spec.native {
	case copilotPreToolUse:
		if a.verdict != verdictDeny {
			return Output{}, nil
		}
		return jsonOutput(copilotCamelOutput{PermissionDecision: "deny", PermissionDecisionReason: a.reason}, false)
	case UserPromptSubmit:
		out := copilotPromptOutput{SystemMessage: strings.Join(a.messages, "\n")}
		if a.verdict == verdictDeny {
			no := false
			out.Continue, out.StopReason = &no, a.reason
		}
		return jsonOutput(out, out.Continue == nil && out.SystemMessage == "")
	}
	return writeClaude(req, a)
}
