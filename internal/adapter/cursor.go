package adapter

import (
	"encoding/json"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Cursor's agent hooks (cursor.com/docs/agent/hooks): a command per event in .cursor/hooks.json,
// JSON on stdin with hook_event_name and conversation_id, answers in "permission"
// (allow/deny/ask) with user_message (to the user) and agent_message (to the model), and
// updated_input on preToolUse. A hook that fails (crash, timeout, bad JSON) lets the action
// through unless its entry sets failClosed.
const (
	cursorPreToolUse         = "preToolUse"
	cursorPostToolUse        = "postToolUse"
	cursorPostToolUseFailure = "postToolUseFailure"
	cursorBeforeShell        = "beforeShellExecution"
	cursorAfterShell         = "afterShellExecution"
	cursorBeforeMCP          = "beforeMCPExecution"
	cursorAfterMCP           = "afterMCPExecution"
	cursorBeforeReadFile     = "beforeReadFile"
	cursorAfterFileEdit      = "afterFileEdit"
	cursorBeforeSubmitPrompt = "beforeSubmitPrompt"
	cursorAfterAgentResponse = "afterAgentResponse"
	cursorSessionStart       = "sessionStart"
	cursorSessionEnd         = "sessionEnd"
	cursorSubagentStart      = "subagentStart"
	cursorSubagentStop       = "subagentStop"
	cursorStop               = "stop"
)

func init() {
	// ask on preToolUse is not documented to work (one integration reports it has no place
	// there), so it is not advertised: the policy's fallback answers instead.
	toolCaps := capsFor(Cursor, effDeny, effAllow, effModify, effMessage)
	permCaps := capsFor(Cursor, effDeny, effAllow, effAsk, effEscalate, effMessage)
	ev, order := specs(
		&eventSpec{native: cursorPreToolUse, canonical: evToolBefore, delivery: intercept, tool: true, caps: toolCaps},
		&eventSpec{native: cursorBeforeShell, canonical: evToolBefore, delivery: intercept, tool: true, caps: permCaps, toolName: "Shell", kind: kindShell},
		&eventSpec{native: cursorBeforeMCP, canonical: evToolBefore, delivery: intercept, tool: true, caps: permCaps, kind: kindMCP},
		&eventSpec{native: cursorBeforeReadFile, canonical: evToolBefore, delivery: intercept, tool: true, caps: capsFor(Cursor, effDeny, effAllow), toolName: "Read", kind: kindFileRead},
		&eventSpec{native: cursorBeforeSubmitPrompt, canonical: evTurnStart, delivery: intercept, caps: capsFor(Cursor, effDeny, effMessage)},
		&eventSpec{native: cursorPostToolUse, canonical: evToolAfter, delivery: observe, tool: true},
		&eventSpec{native: cursorPostToolUseFailure, canonical: ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, delivery: observe, tool: true},
		&eventSpec{native: cursorAfterShell, canonical: evToolAfter, delivery: observe, tool: true, toolName: "Shell", kind: kindShell},
		&eventSpec{native: cursorAfterMCP, canonical: evToolAfter, delivery: observe, tool: true, kind: kindMCP},
		&eventSpec{native: cursorAfterFileEdit, canonical: evToolAfter, delivery: observe, tool: true, toolName: "Edit", kind: ahpv1.ToolKind_TOOL_KIND_FILE_EDIT},
		&eventSpec{native: cursorAfterAgentResponse, canonical: ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER, delivery: observe},
		&eventSpec{native: cursorSessionStart, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: cursorSessionEnd, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
		&eventSpec{native: cursorSubagentStart, canonical: ahpv1.EventType_EVENT_TYPE_TURN_START, delivery: observe},
		&eventSpec{native: cursorSubagentStop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
		&eventSpec{native: cursorStop, canonical: ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, delivery: observe},
	)
	formats[Cursor] = &format{
		eventFields: []string{fieldEventName}, events: ev, order: order,
		toolNameField: fieldToolName, toolInputField: fieldToolInput,
		read: readCursor, write: writeCursor, stableCallIDs: true,
		// Cursor reads every hook's stdout as JSON; under failClosed an empty answer is a failure
		// and blocks, so "nothing to say" is an empty object.
		observed: []byte(`{}`),
		kinds: kindTable(map[ahpv1.ToolKind][]string{
			kindShell:                          {"Shell", "run_terminal_cmd"},
			kindFileRead:                       {"read_file"},
			ahpv1.ToolKind_TOOL_KIND_FILE_EDIT: {"StrReplace", "search_replace", "TabWrite", "Delete", "delete_file", "EditNotebook"},
			ahpv1.ToolKind_TOOL_KIND_SEARCH:    {"Grep", "Glob", "LS", "SemanticSearch", "codebase_search", "grep_search", "file_search", "list_dir"},
			ahpv1.ToolKind_TOOL_KIND_FETCH:     {"WebSearch", "WebFetch", "web_search"},
		}),
	}
}

func readCursor(spec *eventSpec, rest fieldMap) (*fields, error) {
	fl := &fields{session: &ahpv1.Session{Id: rest.take("conversation_id", fieldSessionID), Model: rest.take(fieldModel)}}
	// Shell events carry the command's directory; the others only workspace_roots (kept in the
	// payload).
	fl.session.Cwd = rest.take(fieldCwd)
	if !spec.tool {
		return fl, nil
	}
	t := &fl.tool
	t.callScope, _ = rest["generation_id"].(string)
	t.callID = rest.take(fieldToolUseID)
	switch spec.native {
	case cursorBeforeShell, cursorAfterShell:
		t.input = map[string]any{}
		if cmd, ok := rest["command"].(string); ok {
			delete(rest, "command")
			t.input["command"] = cmd
		}
		if spec.native == cursorAfterShell {
			t.output, t.hasOutput = rest.takeAny("output")
		}
	case cursorBeforeReadFile, cursorAfterFileEdit:
		t.input = map[string]any{}
		for _, k := range []string{"file_path", "content", "edits"} {
			if v, ok := rest[k]; ok {
				delete(rest, k)
				t.input[k] = v
			}
		}
	default:
		t.name = rest.take(fieldToolName)
		t.input, _ = rest.takeObject(fieldToolInput)
		t.output, t.hasOutput = rest.takeAny("tool_output", fieldToolResponse, "result_json")
	}
	if spec.kind == kindMCP {
		// Cursor names the server by how it is reached: its url, or the command that starts it;
		// Map replaces that with the server's name when MCPConfig.Endpoints knows it.
		server, _ := rest["server"].(string)
		if server == "" {
			server, _ = rest["url"].(string)
		}
		if server == "" {
			server, _ = rest["command"].(string)
		}
		if server != "" && t.name != "" {
			t.mcp = &ahpv1.McpTool{Server: server, Tool: t.name}
		}
	}
	return fl, nil
}

// cursorOutput is the answer of Cursor's permission events and of beforeSubmitPrompt.
type cursorOutput struct {
	Continue     *bool           `json:"continue,omitempty"`
	Permission   string          `json:"permission,omitempty"`
	UserMessage  string          `json:"user_message,omitempty"`
	AgentMessage string          `json:"agent_message,omitempty"`
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
}

func writeCursor(req *Request, a answer) (Output, error) {
	out := cursorOutput{UserMessage: strings.Join(a.messages, "\n")}
	if req.spec.native == cursorBeforeSubmitPrompt {
		if a.verdict == verdictDeny {
			no := false
			out.Continue = &no
			out.UserMessage = joinNonEmpty(out.UserMessage, a.reason)
		}
		return cursorJSON(out, out.Continue == nil && out.UserMessage == "")
	}
	switch a.verdict {
	case verdictDeny:
		out.Permission, out.AgentMessage = "deny", a.reason
		out.UserMessage = joinNonEmpty(out.UserMessage, a.reason)
	case verdictAsk:
		out.Permission, out.UserMessage = "ask", joinNonEmpty(out.UserMessage, a.reason)
	case verdictAllow:
		out.Permission = "allow"
	case verdictModify:
		out.Permission = "allow"
		in, err := encodeInput(req, a.input)
		if err != nil {
			return Output{}, err
		}
		out.UpdatedInput = in
	}
	return cursorJSON(out, out.Permission == "" && out.UserMessage == "")
}

// cursorJSON is out as JSON, or {} when it says nothing.
func cursorJSON(out cursorOutput, empty bool) (Output, error) {
	if empty {
		return Output{Stdout: []byte(`{}`)}, nil
	}
	return jsonOutput(out, false)
}

// joinNonEmpty joins the non-empty of a and b with a newline.
func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
