package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// HarnessEventParams is one AhpEvent (ahp/event params, or one entry of ahp/batch) read the way the
// reference server reads it, with what its later checks need. Its methods are those checks, to be
// called in the reference's order: ValidateShape, then CheckDelivery (or CheckBatchable in a batch),
// then ParseTypedPayload.
type HarnessEventParams struct {
	// Event is the canonical event (see DecodeHarnessEvent).
	Event *ahpv1.Event

	path       string // JSON path of the params object
	name       string // wire event type
	payloadErr error  // why a typed or contract payload did not parse, from the exact input
}

// DecodeHarnessEvent reads one AhpEvent params object into the canonical event. It is
// ReadHarnessEvent without the later checks; see there for errors.
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
// EncodeHarnessEvent inverts this: the same keys and values come back. Numbers held as
// google.protobuf.Value (free-form fields, overlays, verbatim payloads) are doubles, so integers
// beyond 2^53 there come back rounded, and a payload that failed to parse because an integer field
// held 30000.0 comes back with 30000. Serde's sequence form (a struct written as an array) is
// accepted as the reference accepts it; at the top level it comes back as an object.
func DecodeHarnessEvent(path string, v any, requestID string) (*ahpv1.Event, error) {
	p, err := ReadHarnessEvent(path, v, requestID)
	if err != nil {
		return nil, err
	}
	return p.Event, nil
}

// ReadHarnessEvent reads one AhpEvent params object the way serde reads the reference's AhpEvent:
// event_type, session_id, agent_id, timestamp, depth (u32) and payload (any JSON, null too) are
// required; context is checked strictly; metadata must be an object; unknown fields are ignored.
// Errors carry serde's text for the first problem the reference meets, e.g. "missing field
// `payload`", "invalid value: integer `-1`, expected u32", "unknown variant `pre_tool_use`,
// expected one of `handshake`, ..." (the bridge answers -32602 "Invalid params: " + message).
//
// The payload of typed and contract events is parsed here already, from the exact input, but a
// payload that does not parse is not an error yet: the reference reports it later, after checks
// that come first (ValidateShape, CheckDelivery, ParseTypedPayload).
func ReadHarnessEvent(path string, v any, requestID string) (*HarnessEventParams, error) {
	if err := harnessCheckNumbers(path, v); err != nil {
		return nil, err
	}
	return harnessReadEvent(path, v, requestID, -1)
}

// harnessRawEvent is AhpEvent as serde reads it.
type harnessRawEvent struct {
	eventType, sessionID, agentID, timestamp string
	depth                                    uint32
	payload                                  any
	context                                  *ahpv1.EventContext
	metadata                                 *structpb.Struct
}

// harnessReadEvent reads an event; index >= 0 marks a batch entry, whose synthesized id includes it.
func harnessReadEvent(path string, v any, requestID string, index int) (*HarnessEventParams, error) {
	var raw harnessRawEvent
	err := harnessStruct(path, v, "AhpEvent", []harnessField{
		{name: "event_type", decode: func(p string, v any) (err error) {
			raw.eventType, err = harnessUnitEnum(p, v, harnessEventTypeNames)
			return err
		}},
		harnessReqString("session_id", &raw.sessionID),
		harnessReqString("agent_id", &raw.agentID),
		harnessReqString("timestamp", &raw.timestamp),
		{name: "depth", decode: func(p string, v any) error {
			d, err := harnessUint(p, v, harnessU32)
			raw.depth = uint32(d) // in range: harnessUint checked u32
			return err
		}},
		{name: "payload", decode: func(_ string, v any) error {
			raw.payload = v
			return nil
		}},
		{name: "context", optional: true, decode: func(p string, v any) (err error) {
			if v != nil {
				raw.context, err = harnessDecodeContext(p, v)
			}
			return err
		}},
		harnessOptMap("metadata", &raw.metadata),
	})
	if err != nil {
		return nil, err
	}
	t, _ := harnessLookupType(raw.eventType) // harnessUnitEnum accepted only known names

	ev := &ahpv1.Event{
		Id:      requestID,
		Type:    t.canon,
		Time:    raw.timestamp,
		Session: &ahpv1.Session{Id: raw.sessionID, Agent: &ahpv1.Agent{Id: raw.agentID}},
		Harness: &ahpv1.HarnessEnvelope{
			AgentId:  raw.agentID,
			Depth:    raw.depth,
			Context:  raw.context,
			Metadata: raw.metadata,
		},
		Origin: &ahpv1.Origin{
			Dialect:         ahpv1.Dialect_DIALECT_HARNESS,
			ProtocolVersion: HarnessProtocolVersion,
			EventType:       raw.eventType,
		},
	}
	if ev.Id == "" {
		ev.Id = harnessSynthesizeID(v, index)
		ev.Origin.SynthesizedId = true
	}
	if obj, ok := v.(map[string]any); ok {
		if res := harnessResidue(obj, harnessEnvelopeJSON(ev, raw.eventType), "payload"); res != nil {
			ev.UnknownFields = harnessToStruct(res)
		}
	}

	p := &HarnessEventParams{Event: ev, path: path, name: raw.eventType}
	payloadPath := joinPath(path, "payload")
	switch codec, hasSchema := harnessPayloadCodecs[raw.eventType]; {
	case hasSchema:
		m, err := codec.decode(payloadPath, raw.payload)
		var enc map[string]any
		if err == nil {
			enc, err = codec.encode(m, harnessLossless)
		}
		if err != nil {
			p.payloadErr = err
			ev.Payload = harnessToValue(raw.payload)
			break
		}
		harnessSetBody(ev, raw.eventType, m)
		ev.Payload = harnessLeftover(raw.payload, enc)
	case t.canon == ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		t.canon == ahpv1.EventType_EVENT_TYPE_TOOL_AFTER,
		t.canon == ahpv1.EventType_EVENT_TYPE_ERROR:
		if !harnessExtractTool(ev, raw.payload) {
			ev.Payload = harnessToValue(raw.payload)
		}
	default:
		ev.Payload = harnessToValue(raw.payload)
	}
	return p, nil
}

// harnessSynthesizeID derives a stable event id from the params JSON (keys sorted, numbers in the
// form they keep after a round trip), so that retries of the same event get the same id.
func harnessSynthesizeID(v any, index int) string {
	b, _ := marshalJSON(harnessCanonical(v)) // plain JSON values always marshal
	sum := sha256.Sum256(b)
	id := "ahp-" + hex.EncodeToString(sum[:16])
	if index >= 0 {
		id += "-" + strconv.Itoa(index)
	}
	return id
}

// harnessExtractTool moves the tool of a tool event's payload into ev.Tool. It reports false, and
// changes nothing, when the payload does not name a tool.
func harnessExtractTool(ev *ahpv1.Event, payload any) bool {
	obj, ok := payload.(map[string]any)
	if !ok {
		return false
	}
	name, _ := obj["tool_name"].(string)
	if name == "" {
		return false
	}
	tool := &ahpv1.Tool{Name: name, Kind: ToolKindFor(name)}
	if server, mcpTool, ok := SplitMCPToolName(name); ok {
		tool.Mcp = &ahpv1.McpTool{Server: server, Tool: mcpTool}
	}
	left := maps.Clone(obj)
	delete(left, "tool_name")
	if args, ok := obj["arguments"].(map[string]any); ok {
		tool.Input = harnessToStruct(args)
		delete(left, "arguments")
	}
	// Copies: the payload keeps these keys, so encoding restores whichever spelling was sent.
	if id := harnessFirstString(obj, "call_id", "tool_call_id"); id != "" {
		tool.CallId = id
	} else {
		tool.CallId = "call-" + ev.GetId()
		ev.Origin.SynthesizedCallId = true
	}
	switch ev.GetType() {
	case ahpv1.EventType_EVENT_TYPE_TOOL_AFTER:
		for _, k := range []string{"output", "result"} {
			if out, ok := obj[k]; ok {
				tool.Output = harnessToValue(out)
				break
			}
		}
	case ahpv1.EventType_EVENT_TYPE_ERROR:
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR
		if msg := harnessFirstString(obj, "error", "message"); msg != "" {
			tool.Error = &ahpv1.ToolError{Message: msg}
		}
	}
	ev.Tool = tool
	if len(left) > 0 {
		ev.Payload = structpb.NewStructValue(harnessToStruct(left))
	}
	return true
}

func harnessFirstString(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// harnessLeftover is what of a parsed payload its body does not reproduce: the residue object
// (unset when empty), or the whole payload when it was not an object (serde's sequence form).
func harnessLeftover(payload any, enc map[string]any) *structpb.Value {
	obj, ok := payload.(map[string]any)
	if !ok {
		return harnessToValue(payload)
	}
	res := harnessResidue(obj, enc)
	if res == nil {
		return nil
	}
	return structpb.NewStructValue(harnessToStruct(res))
}

// harnessToValue and harnessToStruct convert input already checked by harnessCheckNumbers, which
// is the only way toValue fails.
func harnessToValue(v any) *structpb.Value {
	pv, err := toValue(v)
	if err != nil {
		return structpb.NewNullValue()
	}
	return pv
}

func harnessToStruct(m map[string]any) *structpb.Struct {
	s, err := toStruct(m)
	if err != nil {
		return &structpb.Struct{}
	}
	return s
}

// ---- encoding ----

// EncodeHarnessEvent writes a canonical event as an AhpEvent params object (compact, keys sorted,
// as the Rust client sends it). For an event read by DecodeHarnessEvent it reproduces the original
// JSON: same keys, same values.
func EncodeHarnessEvent(ev *ahpv1.Event) ([]byte, error) {
	obj, err := EncodeHarnessEventValue(ev)
	if err != nil {
		return nil, err
	}
	return marshalJSON(obj)
}

// EncodeHarnessEventValue is EncodeHarnessEvent returning the generic JSON value, for embedding in
// a larger message. Numbers are json.Number.
//
// Events from other dialects are written too: the wire type comes from the canonical type
// (tool.before -> pre_action, ...), and the payload of a tool event is {tool_name, arguments,
// call_id} plus payload fields. Canonical types with no Harness name are an error matching
// ErrUnsupportedEvent.
func EncodeHarnessEventValue(ev *ahpv1.Event) (map[string]any, error) {
	name, err := harnessWireName(ev)
	if err != nil {
		return nil, err
	}
	payload, err := harnessPayloadJSON(ev, name)
	if err != nil {
		return nil, err
	}
	out := harnessEnvelopeJSON(ev, name)
	out["payload"] = payload
	for k, v := range ev.GetUnknownFields().GetFields() {
		out[k] = harnessMerge(out[k], fromValue(v))
	}
	return out, nil
}

// harnessEnvelopeJSON writes every envelope field except payload and unknown fields.
func harnessEnvelopeJSON(ev *ahpv1.Event, name string) map[string]any {
	agentID := ev.GetHarness().GetAgentId()
	if agentID == "" {
		agentID = ev.GetSession().GetAgent().GetId()
	}
	out := map[string]any{
		"event_type": name,
		"session_id": ev.GetSession().GetId(),
		"agent_id":   agentID,
		"timestamp":  ev.GetTime(),
		"depth":      harnessU64JSON(uint64(ev.GetHarness().GetDepth())),
	}
	if c := ev.GetHarness().GetContext(); c != nil {
		out["context"] = harnessContextJSON(c, harnessLossless)
	}
	harnessPutMap(out, "metadata", ev.GetHarness().GetMetadata())
	return out
}

// harnessWireName is the Harness event type of ev: its original name when it came from Harness and
// still matches its canonical type, else the name for the canonical type.
func harnessWireName(ev *ahpv1.Event) (string, error) {
	if o := ev.GetOrigin(); o.GetDialect() == ahpv1.Dialect_DIALECT_HARNESS {
		if t, ok := harnessLookupType(o.GetEventType()); ok && harnessTypeMatches(t, ev.GetType()) {
			return t.name, nil
		}
	}
	for _, t := range harnessEventTypeTable {
		if harnessTypeMatches(t, ev.GetType()) {
			return t.name, nil
		}
	}
	return "", &FieldError{
		Path:    "type",
		Message: fmt.Sprintf("event type %s has no Agent Harness Protocol equivalent", ev.GetType()),
		Err:     ErrUnsupportedEvent,
	}
}

func harnessTypeMatches(t harnessEventType, canon ahpv1.EventType) bool {
	return t.canon == canon || (t.name == "error" && canon == ahpv1.EventType_EVENT_TYPE_TOOL_ERROR)
}

// harnessPayloadJSON rebuilds the payload from body, tool and leftover payload.
func harnessPayloadJSON(ev *ahpv1.Event, name string) (any, error) {
	if bodyName, m := harnessBody(ev); m != nil {
		if bodyName != name {
			return nil, &FieldError{Path: "payload", Message: fmt.Sprintf("body %s does not belong to event type %s", bodyName, name)}
		}
		if p := ev.GetPayload(); p != nil && p.GetStructValue() == nil {
			return fromValue(p), nil // the payload was not an object; it is kept whole
		}
		obj, err := harnessPayloadCodecs[name].encode(m, harnessLossless)
		if err != nil {
			return nil, harnessPrefixPath("payload", err)
		}
		return harnessMerge(obj, fromStruct(ev.GetPayload().GetStructValue())), nil
	}
	if t := ev.GetTool(); t != nil {
		obj := fromStruct(ev.GetPayload().GetStructValue())
		obj["tool_name"] = t.GetName()
		if t.GetInput() != nil {
			obj["arguments"] = fromStruct(t.GetInput())
		}
		if t.GetCallId() != "" && !ev.GetOrigin().GetSynthesizedCallId() && !harnessHasAny(obj, "call_id", "tool_call_id") {
			obj["call_id"] = t.GetCallId()
		}
		if t.GetOutput() != nil && !harnessHasAny(obj, "output", "result") {
			obj["output"] = fromValue(t.GetOutput())
		}
		if msg := t.GetError().GetMessage(); msg != "" && !harnessHasAny(obj, "error", "message") {
			obj["error"] = msg
		}
		return obj, nil
	}
	return fromValue(ev.GetPayload()), nil
}

func harnessHasAny(obj map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// harnessPrefixPath puts prefix in front of the path of a *FieldError.
func harnessPrefixPath(prefix string, err error) error {
	if fe, ok := AsFieldError(err); ok {
		return &FieldError{Path: joinPath(prefix, fe.Path), Message: fe.Message}
	}
	return err
}

// ---- the reference's later checks ----

// EventType returns the wire event type ("pre_action").
func (p *HarnessEventParams) EventType() string { return p.name }

// ValidateShape is the reference's validate_event_shape: the depth limit first (skipped when cfg
// or cfg.max_depth is unset), then the run contract payload of run_lifecycle, task_list and
// verification. Messages: "Protocol error: Event depth 11 exceeds configured max depth 10",
// "Serialization error: missing field `run_id`" (the bridge answers -32602 "Invalid event: " +
// message). It applies to requests, notifications and batch entries alike.
func (p *HarnessEventParams) ValidateShape(cfg *ahpv1.HarnessConfig) error {
	if err := harnessCheckDepth(p.Event, p.path, cfg); err != nil {
		return err
	}
	if harnessIsContract(p.name) && p.payloadErr != nil {
		return harnessSerializationError(p.payloadErr)
	}
	return nil
}

// CheckDelivery checks that a blocking type came as a request and a fire-and-forget type as a
// notification. Messages: "Fire-and-forget event post_action must be sent as a notification" (a
// request; -32602 with no prefix) and "Protocol error: Blocking event pre_action must be sent as a
// request" (a notification; dropped on stdio and WebSocket, "Handler error: " + message on HTTP).
func (p *HarnessEventParams) CheckDelivery(notification bool) error {
	return harnessCheckDelivery(p.name, p.path, notification)
}

// ParseTypedPayload reports a typed event's payload that did not parse, as the reference's
// dispatch does: "Serialization error: missing field `idle_duration_ms`" (the bridge answers -32603
// "Handler error: " + message). On success the payload is already Event's body.
func (p *HarnessEventParams) ParseTypedPayload() error {
	if HarnessUsesTypedDecision(p.name) && p.payloadErr != nil {
		return harnessSerializationError(p.payloadErr)
	}
	return nil
}

// CheckBatchable rejects a batch entry whose type is not batchable: "Event type
// context_perception cannot be batched because it does not return a generic Decision" (-32602, no
// prefix). The reference checks it after ValidateShape, entry by entry.
func (p *HarnessEventParams) CheckBatchable() error {
	if HarnessIsBatchable(p.name) {
		return nil
	}
	return &FieldError{
		Path:    joinPath(p.path, "event_type"),
		Message: fmt.Sprintf("Event type %s cannot be batched because it does not return a generic Decision", p.name),
	}
}

// ValidateHarnessEventShape is HarnessEventParams.ValidateShape for an event that is already
// canonical. A contract payload that was not parsed into the body is parsed again from
// event.payload; that is exact unless the payload's numbers relied on their JSON text (1.0 for an
// integer field, integers beyond 2^53), which google.protobuf.Value does not keep. Prefer
// ReadHarnessEvent when the JSON is at hand.
func ValidateHarnessEventShape(ev *ahpv1.Event, cfg *ahpv1.HarnessConfig) error {
	if err := harnessCheckDepth(ev, "", cfg); err != nil {
		return err
	}
	name, err := harnessWireName(ev)
	if err != nil {
		return err
	}
	if !harnessIsContract(name) {
		return nil
	}
	if _, err := harnessReparse(ev, name); err != nil {
		return harnessSerializationError(err)
	}
	return nil
}

// ParseHarnessTypedPayload is HarnessEventParams.ParseTypedPayload for an event that is already
// canonical: a typed or contract payload not yet in the body is parsed from event.payload (with
// the caveat of ValidateHarnessEventShape) and, on success, becomes the body.
func ParseHarnessTypedPayload(ev *ahpv1.Event) error {
	name, err := harnessWireName(ev)
	if err != nil {
		return err
	}
	m, err := harnessReparse(ev, name)
	if err != nil {
		return harnessSerializationError(err)
	}
	if m == nil {
		return nil
	}
	enc, err := harnessPayloadCodecs[name].encode(m, harnessLossless)
	if err != nil {
		return harnessSerializationError(err)
	}
	harnessSetBody(ev, name, m)
	ev.Payload = harnessLeftover(fromValue(ev.GetPayload()), enc)
	return nil
}

// harnessReparse parses ev's payload for a type with a payload schema when the body is not set
// yet. It returns nil without error when there is nothing to parse.
func harnessReparse(ev *ahpv1.Event, name string) (proto.Message, error) {
	codec, ok := harnessPayloadCodecs[name]
	if !ok {
		return nil, nil
	}
	if _, body := harnessBody(ev); body != nil {
		return nil, nil
	}
	return codec.decode("payload", fromValue(ev.GetPayload()))
}

func harnessCheckDepth(ev *ahpv1.Event, path string, cfg *ahpv1.HarnessConfig) error {
	if cfg == nil || cfg.MaxDepth == nil {
		return nil
	}
	if depth := ev.GetHarness().GetDepth(); depth > cfg.GetMaxDepth() {
		return &FieldError{
			Path:    joinPath(path, "depth"),
			Message: fmt.Sprintf("Protocol error: Event depth %d exceeds configured max depth %d", depth, cfg.GetMaxDepth()),
		}
	}
	return nil
}

func harnessCheckDelivery(name, path string, notification bool) error {
	blocking := HarnessIsBlocking(name)
	switch {
	case !notification && !blocking:
		return &FieldError{Path: joinPath(path, "event_type"), Message: fmt.Sprintf("Fire-and-forget event %s must be sent as a notification", name)}
	case notification && blocking:
		return &FieldError{Path: joinPath(path, "event_type"), Message: fmt.Sprintf("Protocol error: Blocking event %s must be sent as a request", name)}
	}
	return nil
}

// harnessSerializationError is the reference's AhpError::Serialization around a serde message.
func harnessSerializationError(err error) error {
	if fe, ok := AsFieldError(err); ok {
		return &FieldError{Path: fe.Path, Message: "Serialization error: " + fe.Message}
	}
	return &FieldError{Message: "Serialization error: " + err.Error()}
}
