package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// Options are what the mapping needs beyond the hook input itself.
type Options struct {
	// ID is the event id. The native formats carry none, so every event gets a fresh one and
	// origin.synthesized_id is set. Empty means a new UUIDv7.
	ID string
	// Now is the event time (written RFC 3339, UTC, with nanoseconds). Zero means time.Now().
	Now time.Time
	// IncludeNative copies the whole hook input into Event.native (provider, event name,
	// payload), for policies that need a field the canonical event does not model.
	IncludeNative bool
	// Event names the hook event when the input does not (Copilot's camelCase payloads carry no
	// event name; the hook command says which event it is registered for, with --event).
	Event string
	// MCP is what the runtime's MCP configuration says about its servers, for runtimes whose hook
	// input does not name the server plainly.
	MCP MCPConfig
}

// MCPConfig is what a runtime's MCP configuration says about its servers.
type MCPConfig struct {
	// Servers are the configured server names, for runtimes that name an MCP tool
	// "<server>-<tool>" (Copilot), where the split needs to know them.
	Servers []string
	// Endpoints maps how a server is reached — its url, or its command line — to its name, for
	// runtimes whose hook input gives only that (Cursor).
	Endpoints map[string]string
}

// Request is one native hook input mapped onto the canonical API.
type Request struct {
	// Provider is the runtime the input came from.
	Provider Provider
	// HookEvent is hook_event_name exactly as the runtime wrote it.
	HookEvent string
	// Event is the canonical event; nil when HookEvent is not one the adapter maps.
	Event *ahpv1.Event
	// Capabilities are the effects the runtime can act on, for intercepted events; nil otherwise.
	Capabilities *ahpv1.Capabilities

	spec *eventSpec
	// renamed is the tool input key the mapping renamed to its canonical name, as
	// {native, canonical}; Render renames it back in updatedInput.
	renamed [2]string
}

// Adapted reports whether the adapter maps this hook event at all.
func (r *Request) Adapted() bool { return r != nil && r.spec != nil }

// Intercepted reports whether the event is decided (Intercept) rather than recorded (Observe).
func (r *Request) Intercepted() bool { return r.Adapted() && r.spec.delivery == intercept }

// InputError reports a hook input that cannot be mapped. Its message names the offending field,
// never its value.
type InputError struct {
	// HookEvent is the hook_event_name, when it could be read.
	HookEvent string
	// Reason says what is wrong.
	Reason string
}

func (e *InputError) Error() string {
	if e.HookEvent != "" {
		return "hook input (" + e.HookEvent + "): " + e.Reason
	}
	return "hook input: " + e.Reason
}

// Field names of the hook input that have a canonical home. Everything else goes to
// Event.payload, where policies read it as payload.<name>.
const (
	fieldEventName    = "hook_event_name"
	fieldSessionID    = "session_id"
	fieldCwd          = "cwd"
	fieldModel        = "model"
	fieldAgentID      = "agent_id"
	fieldAgentType    = "agent_type"
	fieldToolName     = "tool_name"
	fieldToolInput    = "tool_input"
	fieldToolResponse = "tool_response"
	fieldToolUseID    = "tool_use_id"
)

// Map reads one hook input of provider p. The mapping (docs/adapters.md has one table per
// runtime):
//
//   - the runtime's event field (hook_event_name; hookEventName for Factory and Copilot,
//     agent_action_name for Windsurf, hookName for Cline — or opts.Event when the input names no
//     event, as Copilot's camelCase payloads do) picks the canonical type; a name the adapter does
//     not map gives a Request with a nil Event and no error;
//   - the session id (session_id, sessionId, conversation_id, trajectory_id, taskId), cwd and
//     model → session; agent_id and agent_type (subagent hooks) → session.agent;
//   - tool events: the tool name → tool.name (or the event's own, e.g. Cursor's
//     beforeShellExecution is tool "Shell"), its kind from the runtime's tool names, then the
//     documented table (names.ToolKindFor: Bash → shell, Read → file_read, mcp__server__tool →
//     mcp with tool.mcp set, …, anything else other); MCP identity from the runtime's own fields
//     where it has them (Gemini's mcp_context, Windsurf's mcp_server_name, Cline's use_mcp_tool);
//     the arguments → tool.input, the result → tool.output; the runtime's call id → tool.call_id,
//     else a stable one derived from the session, the tool and its input (so a before and an
//     after event of one call agree), with origin.synthesized_call_id;
//   - Codex's apply_patch carries its patch as tool_input.command; it becomes tool.input.patch, the
//     key patch-style tools use elsewhere, so one rule sees patches from every runtime (Render
//     renames it back in updatedInput);
//   - every other field (transcript_path, permission_mode, prompt, source, reason, …), and a known
//     field of an unexpected JSON type, stays in Event.payload under its own name;
//   - origin: dialect NATIVE, provider p, event_type the native name, synthesized_id true;
//     session.end's outcome is UNKNOWN (the native reason stays in payload.reason);
//   - native {provider, event_name, payload: the whole input} only with opts.IncludeNative.
//
// The input must be one JSON object naming its event with a string, and tool events need a
// non-empty tool name; anything else is an *InputError.
func Map(p Provider, body []byte, opts Options) (*Request, error) {
	f := formats[p]
	if f == nil {
		return nil, fmt.Errorf("adapter: unknown provider %v", p)
	}
	obj, err := decodeObject(body)
	if err != nil {
		return nil, &InputError{Reason: err.Error()}
	}
	name, key := f.eventName(obj)
	if name == "" {
		if _, present := obj[key]; present || opts.Event == "" {
			return nil, &InputError{Reason: f.eventFields[0] + " must be a non-empty string"}
		}
		name, key = opts.Event, ""
	}
	req := &Request{Provider: p, HookEvent: name}
	spec := f.events[name]
	if spec == nil {
		return req, nil
	}
	req.spec = spec

	id := opts.ID
	if id == "" {
		id = newEventID()
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	ev := &ahpv1.Event{
		Id:   id,
		Type: spec.canonical,
		Time: now.UTC().Format(time.RFC3339Nano),
		Origin: &ahpv1.Origin{
			Dialect:       ahpv1.Dialect_DIALECT_NATIVE,
			EventType:     name,
			Provider:      p.String(),
			SynthesizedId: true,
		},
	}
	rest := make(fieldMap, len(obj))
	for k, v := range obj {
		if k != key {
			rest[k] = v
		}
	}
	fl, err := f.read(spec, rest)
	if err != nil {
		return nil, &InputError{HookEvent: name, Reason: err.Error()}
	}
	ev.Session = fl.session
	ev.Catalogue = fl.catalogue
	if spec.tool {
		t := fl.tool
		if t.name == "" {
			t.name = spec.toolName
		}
		if t.name == "" {
			return nil, &InputError{HookEvent: name, Reason: f.toolNameField + " must be a non-empty string"}
		}
		tool := &ahpv1.Tool{Name: t.name, Kind: spec.kind, Mcp: t.mcp}
		if tool.Kind == ahpv1.ToolKind_TOOL_KIND_UNSPECIFIED {
			tool.Kind = f.toolKind(t.name)
		}
		if tool.Mcp == nil {
			if server, mcpTool, ok := names.SplitMCPToolName(t.name); ok {
				tool.Mcp = &ahpv1.McpTool{Server: server, Tool: mcpTool}
			} else if f.mcpPrefixed {
				if server, mcpTool, ok := splitServerPrefix(t.name, opts.MCP.Servers); ok {
					tool.Mcp = &ahpv1.McpTool{Server: server, Tool: mcpTool}
				}
			}
		}
		if tool.Mcp != nil {
			tool.Kind = ahpv1.ToolKind_TOOL_KIND_MCP
			if name, ok := opts.MCP.Endpoints[tool.Mcp.Server]; ok && name != "" {
				tool.Mcp.Server = name // the endpoint stays in the payload (url, command)
			}
		}
		if t.input != nil {
			if tool.Input, err = structpb.NewStruct(t.input); err != nil {
				return nil, &InputError{HookEvent: name, Reason: f.toolInputField + ": " + err.Error()}
			}
		}
		if t.hasOutput {
			if tool.Output, err = structpb.NewValue(t.output); err != nil {
				return nil, &InputError{HookEvent: name, Reason: "tool output: " + err.Error()}
			}
		}
		switch tool.CallId = t.callID; {
		case tool.CallId != "":
		case f.stableCallIDs:
			tool.CallId = stableCallID(p, fl.session.GetId(), t.callScope, t.name, t.input)
			ev.Origin.SynthesizedCallId = true
		default:
			tool.CallId = "call-" + id
			ev.Origin.SynthesizedCallId = true
		}
		req.renamed = t.renamed
		ev.Tool = tool
	}
	if spec.canonical == ahpv1.EventType_EVENT_TYPE_SESSION_END {
		ev.Outcome = ahpv1.SessionOutcome_SESSION_OUTCOME_UNKNOWN
	}
	if len(rest) > 0 {
		payload, err := structpb.NewStruct(rest)
		if err != nil {
			return nil, &InputError{HookEvent: name, Reason: err.Error()}
		}
		ev.Payload = structpb.NewStructValue(payload)
	}
	if opts.IncludeNative {
		whole, err := structpb.NewStruct(obj)
		if err != nil {
			return nil, &InputError{HookEvent: name, Reason: err.Error()}
		}
		ev.Native = &ahpv1.Native{Provider: p.String(), EventName: name, Payload: whole}
	}
	req.Event = ev
	if spec.delivery == intercept {
		req.Capabilities = spec.capabilities(p)
	}
	return req, nil
}

// readClaude reads Claude Code's hook input (Codex's is the same): the fields of the package doc,
// under the names keys gives (Factory and Copilot's VS Code format spell some in camelCase).
func readClaude(p Provider, keys claudeKeys) func(*eventSpec, fieldMap) (*fields, error) {
	return func(spec *eventSpec, rest fieldMap) (*fields, error) {
		fl := &fields{session: &ahpv1.Session{
			Id: rest.take(keys.session...), Cwd: rest.take(fieldCwd), Model: rest.take(fieldModel),
		}}
		if agentID, agentType := rest.take(fieldAgentID), rest.take(fieldAgentType); agentID != "" || agentType != "" {
			fl.session.Agent = &ahpv1.Agent{Id: agentID, Type: agentType}
		}
		if !spec.tool {
			fl.catalogue = draftCatalogue(spec.canonical, rest)
			return fl, nil
		}
		t := &fl.tool
		t.name = rest.take(fieldToolName)
		t.input, _ = rest.takeObject(fieldToolInput)
		if p == Codex && t.name == "apply_patch" && t.input != nil {
			if renamed := renameKey(t.input, "command", "patch"); renamed != nil {
				t.input, t.renamed = renamed, [2]string{"command", "patch"}
			}
		}
		if spec.canonical == ahpv1.EventType_EVENT_TYPE_TOOL_AFTER {
			out := keys.output
			if out == nil {
				out = []string{fieldToolResponse}
			}
			t.output, t.hasOutput = rest.takeAny(out...)
		}
		t.callID = rest.take(keys.callID...)
		return fl, nil
	}
}

// decodeObject parses exactly one JSON object, numbers kept as json.Number so that integers keep
// their text until structpb stores them.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty input, want one JSON object")
		}
		// The offset, not the decoder's text, which quotes a character of the input.
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, fmt.Errorf("not valid JSON (at byte %d)", se.Offset)
		}
		return nil, errors.New("not valid JSON (truncated)")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("want one JSON object")
	}
	return obj, nil
}

// renameKey returns a copy of m with key from renamed to, when from holds a string and to is
// absent; otherwise nil.
func renameKey(m map[string]any, from, to string) map[string]any {
	s, ok := m[from].(string)
	if _, taken := m[to]; !ok || taken {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	delete(out, from)
	out[to] = s
	return out
}

// newEventID gives an event id like the server's decision ids (UUIDv7: unique, time-ordered).
func newEventID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}
