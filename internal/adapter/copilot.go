package adapter

import (
	"encoding/json"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// GitHub Copilot's hooks (docs.github.com, "GitHub Copilot CLI hooks reference"; VS Code agent
// hooks): .github/hooks/*.json, {"version": 1, "hooks": {EVENT: [{"type": "command", "bash": …}]}}.
// Two payload formats, chosen by how the event is spelled in the configuration:
//
//   - camelCase (preToolUse, …): camelCase fields (sessionId, toolName, toolArgs) and no event
//     name, so the hook command passes --event;
//   - PascalCase, "VS Code compatible" (PreToolUse, …): snake_case fields with hook_event_name,
//     as Claude Code writes them.
//
// preToolUse answers {"permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason",
// "modifiedArgs"}; permissionRequest (camelCase only) {"behavior": "allow"|"deny", "message"}.
// The outputs of prompt, session and error events are not read. A hook that fails or times out
// never blocks (fail-open); the default timeout is 30 s.
const (
	copilotPreToolUse         = "preToolUse"
	copilotPermissionRequest  = "permissionRequest"
	copilotPostToolUse        = "postToolUse"
	copilotPostToolUseFailure = "postToolUseFailure"
	copilotPromptSubmitted    = "userPromptSubmitted"
	copilotSessionStart       = "sessionStart"
	copilotSessionEnd         = "sessionEnd"
	copilotErrorOccurred      = "errorOccurred"
	copilotAgentStop          = "agentStop"
	copilotSubagentStart      = "subagentStart"
	copilotSubagentStop       = "subagentStop"
	copilotPreCompact         = "preCompact"

	copilotVSPostToolUseFailure = "PostToolUseFailure"
	copilotVSErrorOccurred      = "ErrorOccurred"
	copilotVSSubagentStop       = "SubagentStop"
	copilotVSPreCompact         = "PreCompact"
)

func init() {
	toolCaps := capsFor(Copilot, effDeny, effAllow, effAsk, effEscalate, effModify)
	var list []*eventSpec
	// Both spellings of the same events.
	for _, pair := range [][2]string{
		{copilotPreToolUse, PreToolUse}, {copilotPostToolUse, PostToolUse},
		{copilotPostToolUseFailure, copilotVSPostToolUseFailure}, {copilotPromptSubmitted, UserPromptSubmit},
		{copilotSessionStart, SessionStart}, {copilotSessionEnd, SessionEnd},
		{copilotErrorOccurred, copilotVSErrorOccurred}, {copilotAgentStop, Stop},
		{copilotSubagentStop, copilotVSSubagentStop}, {copilotPreCompact, copilotVSPreCompact},
	} {
		for _, name := range pair {
			s := &eventSpec{native: name, delivery: observe}
			switch pair[0] {
			case copilotPreToolUse:
				s.canonical, s.delivery, s.tool, s.caps = evToolBefore, intercept, true, toolCaps
			case copilotPostToolUse:
				s.canonical, s.tool = evToolAfter, true
			case copilotPostToolUseFailure:
				s.canonical, s.tool = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, true
			case copilotPromptSubmitted:
				// Its output is not read: the prompt can only be recorded.
				s.canonical = evTurnStart
			case copilotSessionStart:
				s.canonical = ahpv1.EventType_EVENT_TYPE_SESSION_START
			case copilotSessionEnd:
				s.canonical = ahpv1.EventType_EVENT_TYPE_SESSION_END
			case copilotErrorOccurred:
				s.canonical = ahpv1.EventType_EVENT_TYPE_ERROR
			case copilotAgentStop, copilotSubagentStop:
				s.canonical = ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE
			case copilotPreCompact:
				s.canonical = ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE
			}
			list = append(list, s)
		}
	}
	list = append(list,
		&eventSpec{native: copilotPermissionRequest, canonical: ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_REQUEST, delivery: intercept, tool: true, permission: true,
			caps: capsFor(Copilot, effDeny, effAllow, effAsk, effEscalate)},
		&eventSpec{native: copilotSubagentStart, canonical: ahpv1.EventType_EVENT_TYPE_TURN_START, delivery: observe},
	)
	ev, order := specs(list...)
	formats[Copilot] = &format{
		eventFields: []string{fieldEventName, "hookEventName"}, events: ev, order: order,
		toolNameField: fieldToolName, toolInputField: fieldToolInput,
		read: readCopilot, write: writeCopilot, stableCallIDs: true, mcpPrefixed: true,
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

// copilotCamelCase reports whether a Copilot event is one of the camelCase ones.
func copilotCamelCase(native string) bool {
	return native != "" && native[0] >= 'a' && native[0] <= 'z'
}

var readCopilotVS = readClaude(Copilot, claudeKeys{
	session: []string{fieldSessionID, "sessionId"}, callID: []string{fieldToolUseID},
	output: []string{"tool_result", fieldToolResponse},
})

func readCopilot(spec *eventSpec, rest fieldMap) (*fields, error) {
	if !copilotCamelCase(spec.native) {
		return readCopilotVS(spec, rest)
	}
	fl := &fields{session: &ahpv1.Session{Id: rest.take("sessionId"), Cwd: rest.take(fieldCwd)}}
	if !spec.tool {
		return fl, nil
	}
	t := &fl.tool
	t.name = rest.take("toolName")
	t.input, _ = rest.takeObject("toolArgs")
	if spec.canonical == evToolAfter {
		t.output, t.hasOutput = rest.takeAny("toolResult")
	}
	return fl, nil
}

// copilotToolOutput is preToolUse's answer. The VS Code compatible events also get Claude Code's
// hookSpecificOutput, which VS Code reads.
type copilotToolOutput struct {
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	ModifiedArgs             json.RawMessage `json:"modifiedArgs,omitempty"`
	HookSpecificOutput       *specificOutput `json:"hookSpecificOutput,omitempty"`
}

// copilotPermissionOutput is permissionRequest's answer.
type copilotPermissionOutput struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

func writeCopilot(req *Request, a answer) (Output, error) {
	if req.spec.native == copilotPermissionRequest {
		switch a.verdict {
		case verdictDeny:
			return jsonOutput(copilotPermissionOutput{Behavior: "deny", Message: a.reason}, false)
		case verdictAllow:
			return jsonOutput(copilotPermissionOutput{Behavior: "allow"}, false)
		}
		return Output{}, nil // falls through to the normal permission flow
	}
	var out copilotToolOutput
	switch a.verdict {
	case verdictDeny:
		out.PermissionDecision = "deny"
	case verdictAsk:
		out.PermissionDecision = "ask"
	case verdictAllow, verdictModify:
		out.PermissionDecision = "allow"
	default:
		return Output{}, nil // empty output: the default behaviour
	}
	out.PermissionDecisionReason = a.reason
	if a.verdict == verdictModify {
		in, err := encodeInput(req, a.input)
		if err != nil {
			return Output{}, err
		}
		out.ModifiedArgs = in
	}
	if !copilotCamelCase(req.spec.native) {
		out.HookSpecificOutput = &specificOutput{
			HookEventName: PreToolUse, PermissionDecision: out.PermissionDecision,
			PermissionDecisionReason: out.PermissionDecisionReason, UpdatedInput: out.ModifiedArgs,
		}
	}
	return jsonOutput(out, false)
}
