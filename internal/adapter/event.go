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

// Map reads one hook input of provider p. The mapping:
//
//   - hook_event_name picks the canonical type (package doc); a name the adapter does not map
//     gives a Request with a nil Event and no error;
//   - session_id → session.id, cwd → session.cwd, model → session.model, agent_id and agent_type
//     (subagent hooks) → session.agent;
//   - tool events: tool_name → tool.name, its kind from the documented table (names.ToolKindFor:
//     Bash → shell, Read → file_read, Write → file_write, Edit/MultiEdit → file_edit, Grep/Glob →
//     search, WebFetch/WebSearch → fetch, Task → task, mcp__server__tool → mcp with tool.mcp set,
//     anything else other), tool_input → tool.input, tool_response → tool.output, tool_use_id →
//     tool.call_id (or "call-" + the event id, with origin.synthesized_call_id, when absent);
//   - Codex's apply_patch carries its patch as tool_input.command; it becomes tool.input.patch, the
//     key patch-style tools use elsewhere, so one rule sees patches from every runtime (Render
//     renames it back in updatedInput);
//   - every other field (transcript_path, permission_mode, prompt, source, reason,
//     stop_hook_active, turn_id, permission_suggestions, …), and a known field of an unexpected
//     JSON type, stays in Event.payload under its own name;
//   - origin: dialect NATIVE, provider p, event_type hook_event_name, synthesized_id true;
//     session.end's outcome is UNKNOWN (the native reason stays in payload.reason);
//   - native {provider, event_name, payload: the whole input} only with opts.IncludeNative.
//
// The input must be one JSON object with a string hook_event_name, and tool events need a
// non-empty string tool_name; anything else is an *InputError.
func Map(p Provider, body []byte, opts Options) (*Request, error) {
	if p != ClaudeCode && p != Codex {
		return nil, fmt.Errorf("adapter: unknown provider %v", p)
	}
	obj, err := decodeObject(body)
	if err != nil {
		return nil, &InputError{Reason: err.Error()}
	}
	name, ok := obj[fieldEventName].(string)
	if !ok || name == "" {
		return nil, &InputError{Reason: fieldEventName + " must be a non-empty string"}
	}
	req := &Request{Provider: p, HookEvent: name}
	spec := events[name]
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
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != fieldEventName {
			rest[k] = v
		}
	}
	// take removes a string field from rest when it has that type, so a field of another type
	// stays visible in the payload instead of vanishing.
	take := func(key string) string {
		s, ok := rest[key].(string)
		if ok {
			delete(rest, key)
		}
		return s
	}
	session := &ahpv1.Session{Id: take(fieldSessionID), Cwd: take(fieldCwd), Model: take(fieldModel)}
	if agentID, agentType := take(fieldAgentID), take(fieldAgentType); agentID != "" || agentType != "" {
		session.Agent = &ahpv1.Agent{Id: agentID, Type: agentType}
	}
	ev.Session = session

	if spec.tool {
		toolName := take(fieldToolName)
		if toolName == "" {
			return nil, &InputError{HookEvent: name, Reason: fieldToolName + " must be a non-empty string"}
		}
		tool := &ahpv1.Tool{Name: toolName, Kind: names.ToolKindFor(toolName)}
		if server, mcpTool, ok := names.SplitMCPToolName(toolName); ok {
			tool.Mcp = &ahpv1.McpTool{Server: server, Tool: mcpTool}
		}
		if in, ok := rest[fieldToolInput].(map[string]any); ok {
			delete(rest, fieldToolInput)
			if p == Codex && toolName == "apply_patch" {
				if renamed := renameKey(in, "command", "patch"); renamed != nil {
					in = renamed
					req.renamed = [2]string{"command", "patch"}
				}
			}
			if tool.Input, err = structpb.NewStruct(in); err != nil {
				return nil, &InputError{HookEvent: name, Reason: fieldToolInput + ": " + err.Error()}
			}
		}
		if spec.canonical == ahpv1.EventType_EVENT_TYPE_TOOL_AFTER {
			if out, present := rest[fieldToolResponse]; present {
				delete(rest, fieldToolResponse)
				if tool.Output, err = structpb.NewValue(out); err != nil {
					return nil, &InputError{HookEvent: name, Reason: fieldToolResponse + ": " + err.Error()}
				}
			}
		}
		if tool.CallId = take(fieldToolUseID); tool.CallId == "" {
			tool.CallId = "call-" + id
			ev.Origin.SynthesizedCallId = true
		}
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
