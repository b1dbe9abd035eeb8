package harness

import (
	"fmt"
	"slices"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/proto"
)

// Test-only entry points: parts of the codec no production code calls, for the black-box tests.

var (
	ReadEvent              = readEventParams
	ReadBatch              = readBatch
	CheckBatchSize         = checkBatchSize
	DecodeHandshakeRequest = decodeHandshakeRequest
	DecodeQueryRequest     = decodeQueryRequest
	EncodeEventValue       = encodeEventValue
	IsBlocking             = isBlocking
	IsBatchable            = isBatchable
)

// DecodeEventContext reads an AhpEvent context object (EventContext) strictly: every inner
// struct needs its required fields, unknown fields are ignored. Errors carry serde's wording
// ("missing field `total_tokens`") and the JSON path below path.
func DecodeEventContext(path string, v any) (*ahpv1.EventContext, error) {
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	return decodeContext(path, v)
}

// EncodeEventContext writes an EventContext as the reference serializes it: keys sorted,
// absent fields omitted, f32 confidences widened to f64.
func EncodeEventContext(c *ahpv1.EventContext) ([]byte, error) {
	return jsonwire.Marshal(contextJSON(c, serde))
}

// DecodeDecision reads a generic Decision with serde's rules: the tag is required and
// case-sensitive, required fields must be present, unknown fields are ignored.
func DecodeDecision(path string, v any) (*ahpv1.HarnessDecision, error) {
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	return decodeDecision(path, v)
}

// DecodeEvent reads one AhpEvent params object into the canonical event. It is
// ReadEvent without the later checks; see there for errors.
//
// Mapping (docs: DESIGN.md, "One canonical event"):
//   - id is requestID, or when empty a stable "ahp-" + hex of the first 16 bytes of the SHA-256 of
//     the params JSON (keys sorted, numbers canonical), with origin.synthesized_id set;
//   - session_id -> session.id; agent_id -> harness.agent_id and session.agent.id; timestamp ->
//     time, verbatim; depth, context and metadata -> harness;
//   - type: pre_action -> tool.before, post_action -> tool.after, error -> tool.error when the
//     payload names a tool (else error), session_start/end -> session.start/end, pre_prompt ->
//     model.request.before, post_response -> model.response.after, everything else its own type;
//   - origin: dialect HARNESS, protocol_version "2.4", event_type the wire name;
//   - for pre_action, post_action and error whose payload is an object with a non-empty string
//     tool_name: tool.name, tool.kind (ToolKindFor), tool.mcp for mcp__server__tool names, and
//     tool.input from an object-valued arguments; tool_name and arguments leave the payload.
//     tool.call_id copies call_id (else tool_call_id), or is "call-" + id with
//     origin.synthesized_call_id set; for post_action tool.output copies output (else result), for
//     error tool.error.message copies error (else message). Copied fields stay in the payload, so
//     their original key survives;
//   - typed and run contract payloads that parse become the body oneof, and payload keeps only
//     what the body cannot reproduce (unknown fields, explicit nulls, explicit [] that serde
//     skips, ...) as a sparse overlay: objects hold the differing keys, equal-length arrays are
//     overlaid element by element, anything else replaces; payload is unset when nothing is left;
//   - any other payload, a payload that does not parse, or a non-object one, stays in payload
//     verbatim (null included);
//   - envelope fields the schema does not model are kept in unknown_fields, and so are, as the
//     same kind of overlay, the parts of modelled ones the typed form cannot reproduce
//     ("metadata": null, a context with unknown fields, an f32 with more digits than f32 keeps).
//
// EncodeEvent inverts this: the same keys and values come back. Numbers held as
// google.protobuf.Value (free-form fields, overlays, verbatim payloads) are doubles, so integers
// beyond 2^53 there come back rounded, and a payload that failed to parse because an integer field
// held 30000.0 comes back with 30000. Serde's sequence form (a struct written as an array) is
// accepted as the reference accepts it; at the top level it comes back as an object.
func DecodeEvent(path string, v any, requestID string) (*ahpv1.Event, error) {
	p, err := ReadEvent(path, v, requestID)
	if err != nil {
		return nil, err
	}
	return p.Event, nil
}

// EncodeEvent writes a canonical event as an AhpEvent params object (compact, keys sorted,
// as the Rust client sends it). For an event read by DecodeEvent it reproduces the original
// JSON: same keys, same values.
func EncodeEvent(ev *ahpv1.Event) ([]byte, error) {
	obj, err := EncodeEventValue(ev)
	if err != nil {
		return nil, err
	}
	return jsonwire.Marshal(obj)
}

// ValidateEventShape is EventParams.ValidateShape for an event that is already
// canonical. A contract payload that was not parsed into the body is parsed again from
// event.payload; that is exact unless the payload's numbers relied on their JSON text (1.0 for an
// integer field, integers beyond 2^53), which google.protobuf.Value does not keep. Prefer
// ReadEvent when the JSON is at hand.
func ValidateEventShape(ev *ahpv1.Event, cfg *ahpv1.HarnessConfig) error {
	if err := checkDepth(ev, "", cfg); err != nil {
		return err
	}
	name, err := wireName(ev)
	if err != nil {
		return err
	}
	if !isContract(name) {
		return nil
	}
	if _, err := reparse(ev, name); err != nil {
		return serializationError(err)
	}
	return nil
}

// ParseTypedPayload is EventParams.ParseTypedPayload for an event that is already
// canonical: a typed or contract payload not yet in the body is parsed from event.payload (with
// the caveat of ValidateEventShape) and, on success, becomes the body.
func ParseTypedPayload(ev *ahpv1.Event) error {
	name, err := wireName(ev)
	if err != nil {
		return err
	}
	m, err := reparse(ev, name)
	if err != nil {
		return serializationError(err)
	}
	if m == nil {
		return nil
	}
	enc, err := payloadCodecs[name].encode(m, lossless)
	if err != nil {
		return serializationError(err)
	}
	setBody(ev, name, m)
	ev.Payload = leftover(jsonwire.FromValue(ev.GetPayload()), enc)
	return nil
}

// EventTypes returns the 22 Harness event type names in the reference's order.
func EventTypes() []string { return slices.Clone(eventTypeNames) }

// DecodePayload reads the payload of a typed event (idle, intent_detection,
// context_perception, memory_recall, planning, reasoning, rate_limit, confirmation) or a run
// contract event (run_lifecycle, task_list, verification) into its message (*ahpv1.IdlePayload,
// ..., *ahpv1.RunLifecycle, ...). Errors carry serde's message without the reference's
// "Serialization error: " prefix. Serde defaults are not filled in.
func DecodePayload(eventType, path string, v any) (proto.Message, error) {
	c, ok := payloadCodecs[eventType]
	if !ok {
		return nil, fmt.Errorf("convert: harness event type %q has no payload schema", eventType)
	}
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	return c.decode(path, v)
}

// EncodePayload writes a typed or run contract payload message the way the reference
// re-serializes it: keys sorted, serde defaults filled in (domain "general", constraints
// {"include_sources":true,"max_context_length":null,"max_results":null}, ...), Options written or
// skipped exactly as serde does.
func EncodePayload(m proto.Message) ([]byte, error) {
	name, ok := oneofFieldOf(&ahpv1.Event{}, "body", m)
	if !ok {
		return nil, fmt.Errorf("convert: %T is not a Harness payload message", m)
	}
	obj, err := payloadCodecs[name].encode(m, serde)
	if err != nil {
		return nil, err
	}
	return jsonwire.Marshal(obj)
}

// EncodeHandshakeRequest writes ahp/handshake params.
func EncodeHandshakeRequest(r *ahpv1.HandshakeRequest) ([]byte, error) {
	return jsonwire.Marshal(map[string]any{
		"protocol_version": r.GetProtocolVersion(),
		"agent_info": map[string]any{
			"framework":    r.GetAgentInfo().GetFramework(),
			"version":      r.GetAgentInfo().GetVersion(),
			"capabilities": stringsJSON(r.GetAgentInfo().GetCapabilities()),
		},
		"session_id": r.GetSessionId(),
		"agent_id":   r.GetAgentId(),
	})
}

// EncodeQueryRequest writes ahp/query params; source is not on the Harness wire.
func EncodeQueryRequest(r *ahpv1.QueryRequest) ([]byte, error) {
	return jsonwire.Marshal(map[string]any{
		"session_id": r.GetSessionId(),
		"agent_id":   r.GetAgentId(),
		"query_type": r.GetQueryType(),
		"payload":    valueJSON(r.GetPayload()),
	})
}

// DecodeBatch is ReadBatch returning the canonical events only.
func DecodeBatch(path string, v any) ([]*ahpv1.Event, error) {
	params, err := ReadBatch(path, v)
	if err != nil {
		return nil, err
	}
	events := make([]*ahpv1.Event, len(params))
	for i, p := range params {
		events[i] = p.Event
	}
	return events, nil
}

// EncodeBatch writes ahp/batch params for the events, each as EncodeEvent does.
func EncodeBatch(events []*ahpv1.Event) ([]byte, error) {
	list := make([]any, len(events))
	for i, ev := range events {
		obj, err := EncodeEventValue(ev)
		if err != nil {
			return nil, prefixPath(jsonwire.IndexPath("events", i), err)
		}
		list[i] = obj
	}
	return jsonwire.Marshal(map[string]any{"events": list})
}
