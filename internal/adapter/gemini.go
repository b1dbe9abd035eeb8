package adapter

import (
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Gemini CLI's hooks (google-gemini/gemini-cli docs/hooks/reference.md): command hooks in
// settings.json, Claude-like input (session_id, cwd, hook_event_name, tool_name, tool_input,
// mcp_context), answers with decision "allow"/"deny" and a reason the agent sees as the tool's
// error; hookSpecificOutput.tool_input is merged over the arguments. There is no ask. Exit 2
// blocks with stderr as the reason; any other failure is only a warning (fail-open).
const (
	geminiBeforeTool  = "BeforeTool"
	geminiAfterTool   = "AfterTool"
	geminiBeforeAgent = "BeforeAgent"
	geminiAfterAgent  = "AfterAgent"
	geminiBeforeModel = "BeforeModel"
	geminiAfterModel  = "AfterModel"
	geminiSession     = "SessionStart"
	geminiSessionEnd  = "SessionEnd"
	geminiPreCompress = "PreCompress"
)

func init() {
	promptCaps := capsFor(Gemini, effDeny, effMessage)
	ev, order := specs(
		&eventSpec{native: geminiBeforeTool, canonical: evToolBefore, delivery: intercept, tool: true, caps: capsFor(Gemini, effDeny, effAllow, effModify, effMessage)},
		&eventSpec{native: geminiBeforeAgent, canonical: evTurnStart, delivery: intercept, caps: promptCaps},
		&eventSpec{native: geminiBeforeModel, canonical: ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, delivery: intercept, caps: promptCaps},
		&eventSpec{native: geminiAfterTool, canonical: evToolAfter, delivery: observe, tool: true},
		&eventSpec{native: geminiAfterModel, canonical: ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER, delivery: observe},
		&eventSpec{native: geminiAfterAgent, canonical: ahpv1.EventType_EVENT_TYPE_TURN_END, delivery: observe},
		&eventSpec{native: geminiSession, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: geminiSessionEnd, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
		&eventSpec{native: geminiPreCompress, canonical: ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE, delivery: observe},
	)
	formats[Gemini] = &format{
		eventFields: []string{fieldEventName}, events: ev, order: order,
		toolNameField: fieldToolName, toolInputField: fieldToolInput,
		read: readGemini, write: writeGemini, stableCallIDs: true,
		kinds: kindTable(map[ahpv1.ToolKind][]string{
			kindShell:                           {"run_shell_command"},
			kindFileRead:                        {"read_many_files"},
			ahpv1.ToolKind_TOOL_KIND_FILE_EDIT:  {"replace"},
			ahpv1.ToolKind_TOOL_KIND_SEARCH:     {"search_file_content", "list_directory"},
			ahpv1.ToolKind_TOOL_KIND_FETCH:      {"google_web_search"},
			ahpv1.ToolKind_TOOL_KIND_FILE_WRITE: {"save_memory"},
		}),
	}
}

func readGemini(spec *eventSpec, rest fieldMap) (*fields, error) {
	fl := &fields{session: &ahpv1.Session{Id: rest.take(fieldSessionID), Cwd: rest.take(fieldCwd), Model: rest.take(fieldModel)}}
	if !spec.tool {
		return fl, nil
	}
	t := &fl.tool
	t.name = rest.take(fieldToolName)
	t.input, _ = rest.takeObject(fieldToolInput)
	if spec.canonical == evToolAfter {
		t.output, t.hasOutput = rest.takeAny(fieldToolResponse)
	}
	if mc, ok := rest["mcp_context"].(map[string]any); ok {
		server, _ := mc["server_name"].(string)
		tool, _ := mc["tool_name"].(string)
		if tool == "" {
			tool = t.name
		}
		if server != "" && tool != "" {
			delete(rest, "mcp_context")
			t.mcp = &ahpv1.McpTool{Server: server, Tool: tool}
			if len(mc) > 2 {
				rest["mcp_context"] = mc // the server's url or command stays visible
			}
		}
	}
	return fl, nil
}

// geminiOutput is a Gemini CLI hook answer.
type geminiOutput struct {
	Decision           string               `json:"decision,omitempty"`
	Reason             string               `json:"reason,omitempty"`
	SystemMessage      string               `json:"systemMessage,omitempty"`
	HookSpecificOutput *geminiSpecificOuput `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecificOuput struct {
	HookEventName string          `json:"hookEventName"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

func writeGemini(req *Request, a answer) (Output, error) {
	if a.verdict == verdictModify && !coversKeys(a.input, req.Event.GetTool().GetInput()) {
		// tool_input is merged over the arguments, so a change that removes one cannot be made.
		a.verdict, a.input = verdictDeny, nil
		a.reason = "input must be changed: " + orDefault(a.reason, "the policy changes this input") + " (Gemini CLI can only add or override arguments, not remove them)"
	}
	out := geminiOutput{SystemMessage: strings.Join(a.messages, "\n")}
	switch a.verdict {
	case verdictDeny, verdictAsk:
		out.Decision, out.Reason = "deny", a.reason
	case verdictAllow:
		out.Decision, out.Reason = "allow", a.reason
	case verdictModify:
		in, err := encodeInput(req, a.input)
		if err != nil {
			return Output{}, err
		}
		out.Decision, out.Reason = "allow", a.reason
		out.HookSpecificOutput = &geminiSpecificOuput{HookEventName: req.spec.native, ToolInput: in}
	}
	return jsonOutput(out, out.Decision == "" && out.SystemMessage == "")
}

// coversKeys reports whether every key of orig is in changed.
func coversKeys(changed, orig *structpb.Struct) bool {
	for k := range orig.GetFields() {
		if _, ok := changed.GetFields()[k]; !ok {
			return false
		}
	}
	return true
}
