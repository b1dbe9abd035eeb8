package adapter

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Cline's hooks (docs.cline.bot, "Hooks"): an executable named after the event in
// .clinerules/hooks/ (workspace) or ~/Documents/Cline/Hooks/ (global). The input is
// {clineVersion, hookName, timestamp, taskId, workspaceRoots, userId, <event>: {…}} with the
// event's own object under its camelCase name (preToolUse: {toolName, parameters}); the answer is
// {"cancel": bool, "errorMessage": …, "contextModification": …}. There is no ask and no input
// rewrite: the tool runs "with original parameters".
const (
	clinePreToolUse       = "PreToolUse"
	clinePostToolUse      = "PostToolUse"
	clineUserPromptSubmit = "UserPromptSubmit"
	clineTaskStart        = "TaskStart"
	clineTaskResume       = "TaskResume"
	clineTaskCancel       = "TaskCancel"
	clineTaskComplete     = "TaskComplete"
	clinePreCompact       = "PreCompact"
)

func init() {
	caps := capsFor(Cline, effDeny, effMessage)
	ev, order := specs(
		&eventSpec{native: clinePreToolUse, canonical: evToolBefore, delivery: intercept, tool: true, caps: caps},
		&eventSpec{native: clineUserPromptSubmit, canonical: evTurnStart, delivery: intercept, caps: caps},
		&eventSpec{native: clinePostToolUse, canonical: evToolAfter, delivery: observe, tool: true},
		&eventSpec{native: clineTaskStart, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: clineTaskResume, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: observe},
		&eventSpec{native: clineTaskCancel, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
		&eventSpec{native: clineTaskComplete, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
		&eventSpec{native: clinePreCompact, canonical: ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE, delivery: observe},
	)
	formats[Cline] = &format{
		eventFields: []string{"hookName"}, events: ev, order: order,
		toolNameField: "preToolUse.toolName", toolInputField: "preToolUse.parameters",
		read: readCline, write: writeCline, stableCallIDs: true,
		observed: []byte(`{"cancel":false}`),
		kinds: kindTable(map[ahpv1.ToolKind][]string{
			ahpv1.ToolKind_TOOL_KIND_FILE_WRITE: {"write_to_file"},
			ahpv1.ToolKind_TOOL_KIND_FILE_EDIT:  {"replace_in_file"},
			ahpv1.ToolKind_TOOL_KIND_SEARCH:     {"list_code_definition_names"},
			ahpv1.ToolKind_TOOL_KIND_FETCH:      {"browser_action"},
			kindMCP:                             {"use_mcp_tool", "access_mcp_resource"},
		}),
	}
}

// clineEventKey is the field holding an event's own object: the event name in lowerCamelCase.
func clineEventKey(native string) string {
	return strings.ToLower(native[:1]) + native[1:]
}

func readCline(spec *eventSpec, rest fieldMap) (*fields, error) {
	fl := &fields{session: &ahpv1.Session{Id: rest.take("taskId")}}
	key := clineEventKey(spec.native)
	body, ok := rest[key].(map[string]any)
	if !ok {
		return fl, nil
	}
	delete(rest, key)
	in := fieldMap{}
	for k, v := range body {
		in[k] = v
	}
	if spec.tool {
		t := &fl.tool
		t.name = in.take("toolName")
		t.input, _ = in.takeObject("parameters")
		if spec.canonical == evToolAfter {
			t.output, t.hasOutput = in.takeAny("result")
		}
		if t.name == "use_mcp_tool" || t.name == "access_mcp_resource" {
			server, _ := t.input["server_name"].(string)
			tool, _ := t.input["tool_name"].(string)
			if tool == "" {
				tool, _ = t.input["uri"].(string)
			}
			if server != "" && tool != "" {
				t.mcp = &ahpv1.McpTool{Server: server, Tool: tool}
			}
		}
	}
	for k, v := range in { // the event's other fields (prompt, success, …) join the payload
		rest[k] = v
	}
	return fl, nil
}

// clineOutput is Cline's hook answer.
type clineOutput struct {
	Cancel              bool   `json:"cancel"`
	ErrorMessage        string `json:"errorMessage,omitempty"`
	ContextModification string `json:"contextModification,omitempty"`
}

// writeCline always answers (Cline reads the JSON of every hook): cancel with the reason as
// errorMessage for a denial; the messages as contextModification, which Cline adds to what the
// model sees.
func writeCline(_ *Request, a answer) (Output, error) {
	out := clineOutput{ContextModification: strings.Join(a.messages, "\n")}
	if a.verdict == verdictDeny || a.verdict == verdictAsk {
		out.Cancel, out.ErrorMessage = true, a.reason
	}
	return jsonOutput(out, false)
}
