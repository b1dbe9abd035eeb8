package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/limits"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// EventParams is one AhpEvent (ahp/event params, or one entry of ahp/batch) read the way the
// reference server reads it, with what its later checks need. Its methods are those checks, to be
// called in the reference's order: ValidateShape, then CheckDelivery (or CheckBatchable in a batch),
// then ParseTypedPayload.
type EventParams struct {
	// Event is the canonical event (see DecodeEvent).
	Event *ahpv1.Event

	path       string // JSON path of the params object
	name       string // wire event type
	payloadErr error  // why a typed or contract payload did not parse, from the exact input
}

// readEventParams reads one AhpEvent params object the way serde reads the reference's AhpEvent:
// event_type, session_id, agent_id, timestamp, depth (u32) and payload (any JSON, null too) are
// required; context is checked strictly; metadata must be an object; unknown fields are ignored.
// Errors carry serde's text for the first problem the reference meets, e.g. "missing field
// `payload`", "invalid value: integer `-1`, expected u32", "unknown variant `pre_tool_use`,
// expected one of `handshake`, ..." (the bridge answers -32602 "Invalid params: " + message).
//
// The payload of typed and contract events is parsed here already, from the exact input, but a
// payload that does not parse is not an error yet: the reference reports it later, after checks
// that come first (ValidateShape, CheckDelivery, ParseTypedPayload).
func readEventParams(path string, v any, requestID string) (*EventParams, error) {
	if err := checkNumbers(path, v); err != nil {
		return nil, err
	}
	return readEvent(path, v, requestID, -1)
}

// rawEvent is AhpEvent as serde reads it.
type rawEvent struct {
	eventType, sessionID, agentID, timestamp string
	depth                                    uint32
	payload                                  any
	context                                  *ahpv1.EventContext
	metadata                                 *structpb.Struct
}

// readEvent reads an event; index >= 0 marks a batch entry, whose synthesized id includes it.
func readEvent(path string, v any, requestID string, index int) (*EventParams, error) {
	var raw rawEvent
	err := readStruct(path, v, "AhpEvent", []structField{
		{name: "event_type", decode: func(p string, v any) (err error) {
			raw.eventType, err = readUnitEnum(p, v, eventTypeNames)
			return err
		}},
		reqBounded("session_id", limits.ID, &raw.sessionID),
		reqBounded("agent_id", limits.ID, &raw.agentID),
		reqBounded("timestamp", limits.Time, &raw.timestamp),
		{name: "depth", decode: func(p string, v any) error {
			d, err := readUint(p, v, u32Type)
			raw.depth = uint32(d) // in range: readUint checked u32
			return err
		}},
		{name: "payload", decode: func(_ string, v any) error {
			raw.payload = v
			return nil
		}},
		opt("context", &raw.context, decodeContext),
		optMap("metadata", &raw.metadata),
	})
	if err != nil {
		return nil, err
	}
	if err := checkLength("id", requestID, limits.ID); err != nil {
		return nil, err
	}
	t, _ := lookupType(raw.eventType) // readUnitEnum accepted only known names

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
			ProtocolVersion: ProtocolVersion,
			EventType:       raw.eventType,
		},
	}
	if ev.Id == "" {
		ev.Id = synthesizeID(v, index)
		ev.Origin.SynthesizedId = true
	}
	if obj, ok := v.(map[string]any); ok {
		if res := residue(obj, envelopeJSON(ev, raw.eventType), "payload"); res != nil {
			ev.UnknownFields = mustStruct(res)
		}
	}

	p := &EventParams{Event: ev, path: path, name: raw.eventType}
	payloadPath := jsonwire.JoinPath(path, "payload")
	switch codec, hasSchema := payloadCodecs[raw.eventType]; {
	case hasSchema:
		m, err := codec.decode(payloadPath, raw.payload)
		var enc map[string]any
		if err == nil {
			enc, err = codec.encode(m, lossless)
		}
		if err != nil {
			p.payloadErr = err
			ev.Payload = mustValue(raw.payload)
			break
		}
		setBody(ev, raw.eventType, m)
		ev.Payload = leftover(raw.payload, enc)
	case t.canon == ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		t.canon == ahpv1.EventType_EVENT_TYPE_TOOL_AFTER,
		t.canon == ahpv1.EventType_EVENT_TYPE_ERROR:
		if !extractTool(ev, raw.payload) {
			ev.Payload = mustValue(raw.payload)
		}
		if err := checkToolLengths(payloadPath, raw.payload, ev.GetTool()); err != nil {
			return nil, err
		}
	default:
		ev.Payload = mustValue(raw.payload)
	}
	return p, nil
}

// synthesizeID derives a stable event id from the params JSON (keys sorted, numbers in the
// form they keep after a round trip), so that retries of the same event get the same id.
func synthesizeID(v any, index int) string {
	b, _ := jsonwire.Marshal(canonical(v)) // plain JSON values always marshal
	sum := sha256.Sum256(b)
	id := "ahp-" + hex.EncodeToString(sum[:16])
	if index >= 0 {
		id += "-" + strconv.Itoa(index)
	}
	return id
}

// checkToolLengths refuses a tool whose name or call id is longer than the schema allows,
// naming the payload member it came from.
func checkToolLengths(path string, payload any, tool *ahpv1.Tool) error {
	if tool == nil {
		return nil
	}
	if err := checkLength(jsonwire.JoinPath(path, "tool_name"), tool.GetName(), limits.Name); err != nil {
		return err
	}
	key := "call_id"
	if obj, _ := payload.(map[string]any); firstString(obj, "call_id") == "" {
		key = "tool_call_id"
	}
	return checkLength(jsonwire.JoinPath(path, key), tool.GetCallId(), limits.CallID)
}

// extractTool moves the tool of a tool event's payload into ev.Tool. It reports false, and
// changes nothing, when the payload does not name a tool.
func extractTool(ev *ahpv1.Event, payload any) bool {
	obj, ok := payload.(map[string]any)
	if !ok {
		return false
	}
	name, _ := obj["tool_name"].(string)
	if name == "" {
		return false
	}
	tool := &ahpv1.Tool{Name: name, Kind: names.ToolKindFor(name)}
	if server, mcpTool, ok := names.SplitMCPToolName(name); ok {
		tool.Mcp = &ahpv1.McpTool{Server: server, Tool: mcpTool}
	}
	left := maps.Clone(obj)
	delete(left, "tool_name")
	if args, ok := obj["arguments"].(map[string]any); ok {
		tool.Input = mustStruct(args)
		delete(left, "arguments")
	}
	// Copies: the payload keeps these keys, so encoding restores whichever spelling was sent.
	if id := firstString(obj, "call_id", "tool_call_id"); id != "" {
		tool.CallId = id
	} else {
		tool.CallId = "call-" + ev.GetId()
		ev.Origin.SynthesizedCallId = true
	}
	switch ev.GetType() {
	case ahpv1.EventType_EVENT_TYPE_TOOL_AFTER:
		for _, k := range []string{"output", "result"} {
			if out, ok := obj[k]; ok {
				tool.Output = mustValue(out)
				break
			}
		}
	case ahpv1.EventType_EVENT_TYPE_ERROR:
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_ERROR
		if msg := firstString(obj, "error", "message"); msg != "" {
			tool.Error = &ahpv1.ToolError{Message: msg}
		}
	}
	ev.Tool = tool
	if len(left) > 0 {
		ev.Payload = structpb.NewStructValue(mustStruct(left))
	}
	return true
}

func firstString(obj map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// leftover is what of a parsed payload its body does not reproduce: the residue object
// (unset when empty), or the whole payload when it was not an object (serde's sequence form).
func leftover(payload any, enc map[string]any) *structpb.Value {
	obj, ok := payload.(map[string]any)
	if !ok {
		return mustValue(payload)
	}
	res := residue(obj, enc)
	if res == nil {
		return nil
	}
	return structpb.NewStructValue(mustStruct(res))
}

// mustValue and mustStruct convert input already checked by checkNumbers, which
// is the only way toValue fails.
func mustValue(v any) *structpb.Value {
	pv, err := jsonwire.ToValue(v)
	if err != nil {
		return structpb.NewNullValue()
	}
	return pv
}

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := jsonwire.ToStruct(m)
	if err != nil {
		return &structpb.Struct{}
	}
	return s
}

// ---- encoding ----

// ErrUnsupportedEvent is matched (errors.Is) by errors for a canonical event type that has no
// Agent Harness Protocol wire name.
var ErrUnsupportedEvent = errors.New("unsupported event type")

// encodeEventValue is EncodeEvent returning the generic JSON value, for embedding in
// a larger message. Numbers are json.Number.
//
// Events from other dialects are written too: the wire type comes from the canonical type
// (tool.before -> pre_action, ...), and the payload of a tool event is {tool_name, arguments,
// call_id} plus payload fields. Canonical types with no Harness name are an error matching
// ErrUnsupportedEvent.
func encodeEventValue(ev *ahpv1.Event) (map[string]any, error) {
	name, err := wireName(ev)
	if err != nil {
		return nil, err
	}
	payload, err := payloadJSON(ev, name)
	if err != nil {
		return nil, err
	}
	out := envelopeJSON(ev, name)
	out["payload"] = payload
	for k, v := range ev.GetUnknownFields().GetFields() {
		out[k] = merge(out[k], jsonwire.FromValue(v))
	}
	return out, nil
}

// envelopeJSON writes every envelope field except payload and unknown fields.
func envelopeJSON(ev *ahpv1.Event, name string) map[string]any {
	agentID := ev.GetHarness().GetAgentId()
	if agentID == "" {
		agentID = ev.GetSession().GetAgent().GetId()
	}
	out := map[string]any{
		"event_type": name,
		"session_id": ev.GetSession().GetId(),
		"agent_id":   agentID,
		"timestamp":  ev.GetTime(),
		"depth":      u64JSON(uint64(ev.GetHarness().GetDepth())),
	}
	if c := ev.GetHarness().GetContext(); c != nil {
		out["context"] = contextJSON(c, lossless)
	}
	putMap(out, "metadata", ev.GetHarness().GetMetadata())
	return out
}

// wireName is the Harness event type of ev: its original name when it came from Harness and
// still matches its canonical type, else the name for the canonical type.
func wireName(ev *ahpv1.Event) (string, error) {
	if o := ev.GetOrigin(); o.GetDialect() == ahpv1.Dialect_DIALECT_HARNESS {
		if t, ok := lookupType(o.GetEventType()); ok && typeMatches(t, ev.GetType()) {
			return t.name, nil
		}
	}
	for _, t := range eventTypeTable {
		if typeMatches(t, ev.GetType()) {
			return t.name, nil
		}
	}
	return "", &jsonwire.FieldError{
		Path:    "type",
		Message: fmt.Sprintf("event type %s has no Agent Harness Protocol equivalent", ev.GetType()),
		Err:     ErrUnsupportedEvent,
	}
}

func typeMatches(t eventTypeInfo, canon ahpv1.EventType) bool {
	return t.canon == canon || (t.name == "error" && canon == ahpv1.EventType_EVENT_TYPE_TOOL_ERROR)
}

// payloadJSON rebuilds the payload from body, tool and leftover payload.
func payloadJSON(ev *ahpv1.Event, name string) (any, error) {
	if bodyName, m := payloadBody(ev); m != nil {
		if bodyName != name {
			return nil, &jsonwire.FieldError{Path: "payload", Message: fmt.Sprintf("body %s does not belong to event type %s", bodyName, name)}
		}
		if p := ev.GetPayload(); p != nil && p.GetStructValue() == nil {
			return jsonwire.FromValue(p), nil // the payload was not an object; it is kept whole
		}
		obj, err := payloadCodecs[name].encode(m, lossless)
		if err != nil {
			return nil, prefixPath("payload", err)
		}
		return merge(obj, jsonwire.FromStruct(ev.GetPayload().GetStructValue())), nil
	}
	if t := ev.GetTool(); t != nil {
		obj := jsonwire.FromStruct(ev.GetPayload().GetStructValue())
		obj["tool_name"] = t.GetName()
		if t.GetInput() != nil {
			obj["arguments"] = jsonwire.FromStruct(t.GetInput())
		}
		if t.GetCallId() != "" && !ev.GetOrigin().GetSynthesizedCallId() && !hasAny(obj, "call_id", "tool_call_id") {
			obj["call_id"] = t.GetCallId()
		}
		if t.GetOutput() != nil && !hasAny(obj, "output", "result") {
			obj["output"] = jsonwire.FromValue(t.GetOutput())
		}
		if msg := t.GetError().GetMessage(); msg != "" && !hasAny(obj, "error", "message") {
			obj["error"] = msg
		}
		return obj, nil
	}
	return jsonwire.FromValue(ev.GetPayload()), nil
}

func hasAny(obj map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// prefixPath puts prefix in front of the path of a *FieldError.
func prefixPath(prefix string, err error) error {
	if fe, ok := jsonwire.AsFieldError(err); ok {
		return &jsonwire.FieldError{Path: jsonwire.JoinPath(prefix, fe.Path), Message: fe.Message}
	}
	return err
}

// ---- the reference's later checks ----

// EventType returns the wire event type ("pre_action").
func (p *EventParams) EventType() string { return p.name }

// ValidateShape is the reference's validate_event_shape: the depth limit first (skipped when cfg
// or cfg.max_depth is unset), then the run contract payload of run_lifecycle, task_list and
// verification. Messages: "Protocol error: Event depth 11 exceeds configured max depth 10",
// "Serialization error: missing field `run_id`" (the bridge answers -32602 "Invalid event: " +
// message). It applies to requests, notifications and batch entries alike.
func (p *EventParams) ValidateShape(cfg *ahpv1.HarnessConfig) error {
	if err := checkDepth(p.Event, p.path, cfg); err != nil {
		return err
	}
	if isContract(p.name) && p.payloadErr != nil {
		return serializationError(p.payloadErr)
	}
	return nil
}

// CheckDelivery checks that a blocking type came as a request and a fire-and-forget type as a
// notification. Messages: "Fire-and-forget event post_action must be sent as a notification" (a
// request; -32602 with no prefix) and "Protocol error: Blocking event pre_action must be sent as a
// request" (a notification; dropped on stdio and WebSocket, "Handler error: " + message on HTTP).
func (p *EventParams) CheckDelivery(notification bool) error {
	return checkDelivery(p.name, p.path, notification)
}

// ParseTypedPayload reports a typed event's payload that did not parse, as the reference's
// dispatch does: "Serialization error: missing field `idle_duration_ms`" (the bridge answers -32603
// "Handler error: " + message). On success the payload is already Event's body.
func (p *EventParams) ParseTypedPayload() error {
	if UsesTypedDecision(p.name) && p.payloadErr != nil {
		return serializationError(p.payloadErr)
	}
	return nil
}

// CheckBatchable rejects a batch entry whose type is not batchable: "Event type
// context_perception cannot be batched because it does not return a generic Decision" (-32602, no
// prefix). The reference checks it after ValidateShape, entry by entry.
func (p *EventParams) CheckBatchable() error {
	if isBatchable(p.name) {
		return nil
	}
	return &jsonwire.FieldError{
		Path:    jsonwire.JoinPath(p.path, "event_type"),
		Message: fmt.Sprintf("Event type %s cannot be batched because it does not return a generic Decision", p.name),
	}
}

// reparse parses ev's payload for a type with a payload schema when the body is not set
// yet. It returns nil without error when there is nothing to parse.
func reparse(ev *ahpv1.Event, name string) (proto.Message, error) {
	codec, ok := payloadCodecs[name]
	if !ok {
		return nil, nil
	}
	if _, body := payloadBody(ev); body != nil {
		return nil, nil
	}
	return codec.decode("payload", jsonwire.FromValue(ev.GetPayload()))
}

func checkDepth(ev *ahpv1.Event, path string, cfg *ahpv1.HarnessConfig) error {
	if cfg == nil || cfg.MaxDepth == nil {
		return nil
	}
	if depth := ev.GetHarness().GetDepth(); depth > cfg.GetMaxDepth() {
		return &jsonwire.FieldError{
			Path:    jsonwire.JoinPath(path, "depth"),
			Message: fmt.Sprintf("Protocol error: Event depth %d exceeds configured max depth %d", depth, cfg.GetMaxDepth()),
		}
	}
	return nil
}

func checkDelivery(name, path string, notification bool) error {
	blocking := isBlocking(name)
	switch {
	case !notification && !blocking:
		return &jsonwire.FieldError{Path: jsonwire.JoinPath(path, "event_type"), Message: fmt.Sprintf("Fire-and-forget event %s must be sent as a notification", name)}
	case notification && blocking:
		return &jsonwire.FieldError{Path: jsonwire.JoinPath(path, "event_type"), Message: fmt.Sprintf("Protocol error: Blocking event %s must be sent as a request", name)}
	}
	return nil
}

// serializationError is the reference's AhpError::Serialization around a serde message.
func serializationError(err error) error {
	if fe, ok := jsonwire.AsFieldError(err); ok {
		return &jsonwire.FieldError{Path: fe.Path, Message: "Serialization error: " + fe.Message}
	}
	return &jsonwire.FieldError{Message: "Serialization error: " + err.Error()}
}
