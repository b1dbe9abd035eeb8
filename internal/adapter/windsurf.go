package adapter

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Windsurf Cascade's hooks (docs.windsurf.com/windsurf/cascade/hooks): hooks.json merged from the
// system, user (~/.codeium/windsurf) and workspace (.windsurf) levels; the input is
// {agent_action_name, trajectory_id, execution_id, timestamp, tool_info: {…}}. A pre-hook can only
// block, by exiting with status 2 (stderr is the reason shown); there is no ask and no input
// rewrite, and every other exit lets the action run (fail-open). With show_output, the hook's
// stdout is shown to the user.
const (
	windsurfPreRunCommand   = "pre_run_command"
	windsurfPostRunCommand  = "post_run_command"
	windsurfPreReadCode     = "pre_read_code"
	windsurfPostReadCode    = "post_read_code"
	windsurfPreWriteCode    = "pre_write_code"
	windsurfPostWriteCode   = "post_write_code"
	windsurfPreMCPToolUse   = "pre_mcp_tool_use"
	windsurfPostMCPToolUse  = "post_mcp_tool_use"
	windsurfPreUserPrompt   = "pre_user_prompt"
	windsurfPostCascadeResp = "post_cascade_response"
	windsurfPostWorktree    = "post_setup_worktree"
	windsurfToolInfo        = "tool_info"
)

func init() {
	caps := capsFor(Windsurf, effDeny, effMessage)
	fileEdit := ahpv1.ToolKind_TOOL_KIND_FILE_EDIT
	ev, order := specs(
		&eventSpec{native: windsurfPreRunCommand, canonical: evToolBefore, delivery: intercept, tool: true, caps: caps, toolName: "run_command", kind: kindShell},
		&eventSpec{native: windsurfPreReadCode, canonical: evToolBefore, delivery: intercept, tool: true, caps: caps, toolName: "read_code", kind: kindFileRead},
		&eventSpec{native: windsurfPreWriteCode, canonical: evToolBefore, delivery: intercept, tool: true, caps: caps, toolName: "write_code", kind: fileEdit},
		&eventSpec{native: windsurfPreMCPToolUse, canonical: evToolBefore, delivery: intercept, tool: true, caps: caps, kind: kindMCP},
		&eventSpec{native: windsurfPreUserPrompt, canonical: evTurnStart, delivery: intercept, caps: caps},
		&eventSpec{native: windsurfPostRunCommand, canonical: evToolAfter, delivery: observe, tool: true, toolName: "run_command", kind: kindShell},
		&eventSpec{native: windsurfPostReadCode, canonical: evToolAfter, delivery: observe, tool: true, toolName: "read_code", kind: kindFileRead},
		&eventSpec{native: windsurfPostWriteCode, canonical: evToolAfter, delivery: observe, tool: true, toolName: "write_code", kind: fileEdit},
		&eventSpec{native: windsurfPostMCPToolUse, canonical: evToolAfter, delivery: observe, tool: true, kind: kindMCP},
		&eventSpec{native: windsurfPostCascadeResp, canonical: ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER, delivery: observe},
		&eventSpec{native: windsurfPostWorktree, canonical: ahpv1.EventType_EVENT_TYPE_WORKSPACE_CHANGE_AFTER, delivery: observe},
	)
	formats[Windsurf] = &format{
		eventFields: []string{"agent_action_name"}, events: ev, order: order,
		toolNameField: windsurfToolInfo + ".mcp_tool_name", toolInputField: windsurfToolInfo,
		read: readWindsurf, write: writeWindsurf,
	}
}

func readWindsurf(spec *eventSpec, rest fieldMap) (*fields, error) {
	fl := &fields{session: &ahpv1.Session{Id: rest.take("trajectory_id")}}
	info, _ := rest[windsurfToolInfo].(map[string]any)
	if info == nil {
		return fl, nil
	}
	delete(rest, windsurfToolInfo)
	in := fieldMap{}
	for k, v := range info {
		in[k] = v
	}
	fl.session.Cwd = in.take(fieldCwd)
	if !spec.tool {
		// pre_user_prompt: the prompt goes where Claude-style prompts are, payload.prompt.
		if p, ok := in["user_prompt"]; ok {
			delete(in, "user_prompt")
			rest["prompt"] = p
		}
		for k, v := range in {
			rest[k] = v
		}
		return fl, nil
	}
	t := &fl.tool
	// execution_id is Windsurf's identifier of the action being executed.
	t.callID = rest.take("execution_id")
	switch spec.kind {
	case kindShell:
		if cmd, ok := in["command_line"]; ok {
			delete(in, "command_line")
			in["command"] = cmd
		}
	case kindMCP:
		server, tool := in.take("mcp_server_name"), in.take("mcp_tool_name")
		t.name = tool
		if server != "" && tool != "" {
			t.mcp = &ahpv1.McpTool{Server: server, Tool: tool}
		}
		if args, ok := in.takeObject("mcp_tool_arguments"); ok {
			if res, has := in.takeAny("mcp_result"); has {
				t.output, t.hasOutput = res, true
			}
			for k, v := range in { // anything else of tool_info stays visible
				rest[k] = v
			}
			t.input = args
			return fl, nil
		}
	}
	if spec.canonical == evToolAfter {
		// post_run_command's output, post_read_code's content.
		t.output, t.hasOutput = in.takeAny("output", "content", "mcp_result")
	}
	t.input = in
	return fl, nil
}

// writeWindsurf answers in exit statuses: a denial is exit 2 with the reason on stderr; anything
// else is exit 0, with the messages on stdout (shown when the hook has show_output).
func writeWindsurf(req *Request, a answer) (Output, error) {
	msg := strings.Join(a.messages, "\n")
	if a.verdict == verdictDeny || a.verdict == verdictAsk {
		return Output{Exit: 2, Stderr: joinNonEmpty(msg, a.reason)}, nil
	}
	if msg == "" {
		return Output{}, nil
	}
	return Output{Stdout: []byte(msg)}, nil
}
