package hooks

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

// Agent Hooks Protocol JSON-RPC methods.
const (
	// MethodIntercept asks for a decision; a request whose id equals params.event.id.
	MethodIntercept = "hooks/intercept"
	// MethodObserve reports an event; a notification, never answered.
	MethodObserve = "hooks/observe"
	// MethodCapabilities asks for the backend's capabilities (a "draft" addition).
	MethodCapabilities = "hooks/capabilities"
)

type idKind uint8

const (
	idAbsent idKind = iota
	idNull
	idString
	idInt
)

// ID is a JSON-RPC id as the Agent Hooks Protocol allows it: a non-empty string or an integer
// within ±(2^53-1) (the range every SDK represents exactly), and null on responses to requests
// whose id could not be read. The zero value is an absent id (a notification). HooksIDs are
// comparable with ==.
type ID struct {
	kind idKind
	str  string
	num  int64
}

// StringID returns a string id.
func StringID(s string) ID { return ID{kind: idString, str: s} }

// IntID returns an integer id.
func IntID(n int64) ID { return ID{kind: idInt, num: n} }

// NullID returns the null id of an error response to an unreadable request.
func NullID() ID { return ID{kind: idNull} }

// IsAbsent reports whether the message had no id (a notification).
func (id ID) IsAbsent() bool { return id.kind == idAbsent }

// IsNull reports whether the id is JSON null.
func (id ID) IsNull() bool { return id.kind == idNull }

// StringValue returns the id when it is a string.
func (id ID) StringValue() (string, bool) { return id.str, id.kind == idString }

// IntValue returns the id when it is an integer.
func (id ID) IntValue() (int64, bool) { return id.num, id.kind == idInt }

// jsonValue is the id as a JSON value; absent ids are not written at all.
func (id ID) jsonValue() any {
	switch id.kind {
	case idString:
		return id.str
	case idInt:
		return json.Number(strconv.FormatInt(id.num, 10))
	}
	return nil
}

// readID reads an id member; null is accepted only where responses allow it.
func readID(v any, allowNull bool) (ID, bool) {
	switch x := v.(type) {
	case string:
		return StringID(x), x != ""
	case json.Number:
		n, ok := safeInteger(x)
		return IntID(n), ok
	case nil:
		return NullID(), allowNull
	}
	return ID{}, false
}

// Message is one Agent Hooks Protocol JSON-RPC 2.0 message. Exactly one of Intercept,
// Observe, Capabilities, Result and Error is set; Method is set with the three params kinds.
// A result is always read as a hooks/intercept result: a response does not name its method, and
// v0.1 defines no other result.
type Message struct {
	// ID is the request or response id, exactly as sent; absent for hooks/observe.
	ID ID
	// Method is the method of a request or notification; empty for responses.
	Method string
	// Intercept holds the params of a hooks/intercept request.
	Intercept *InterceptParams
	// Observe holds the params of a hooks/observe notification.
	Observe *ObserveParams
	// Capabilities holds the params of a hooks/capabilities request.
	Capabilities *CapabilitiesParams
	// Result holds the result of a successful hooks/intercept response.
	Result *ahpv1.HooksInterceptResult
	// Discovery holds the result of a successful "draft" hooks/capabilities response.
	Discovery *DiscoveryResult
	// Error holds the error of an error response.
	Error *ahpv1.RpcError
	// UnknownFields keeps envelope members JSON-RPC 2.0 does not define, verbatim.
	UnknownFields *structpb.Struct
}

// InterceptParams are the params of a hooks/intercept request.
type InterceptParams struct {
	// ProtocolVersion is always ProtocolVersion once decoded.
	ProtocolVersion string
	// Request carries the event (always tool.before in v0.1) and the advertised capabilities.
	Request *ahpv1.InterceptRequest
	// Extensions are the request-level reverse-DNS keyed extensions; nil when absent.
	Extensions *structpb.Struct
	// State is the chain state of the "draft" snapshot, kept verbatim; nil when absent.
	State *structpb.Value
	// CapabilitiesUnknownFields keeps members of params.capabilities other than effects, which
	// ahpv1.Capabilities has no room for.
	CapabilitiesUnknownFields *structpb.Struct
	// Offer is the full "draft" advertisement (modify targets, flow, inject), nil for v0.1.
	Offer *Offer
	// UnknownFields keeps the other params members, verbatim.
	UnknownFields *structpb.Struct
}

// ObserveParams are the params of a hooks/observe notification.
type ObserveParams struct {
	// ProtocolVersion is always ProtocolVersion once decoded.
	ProtocolVersion string
	// Request carries the event (any of the five v0.1 types).
	Request *ahpv1.ObserveRequest
	// UnknownFields keeps the other params members, verbatim.
	UnknownFields *structpb.Struct
}

// CapabilitiesParams are the params of a hooks/capabilities request.
type CapabilitiesParams struct {
	// ProtocolVersion is always ProtocolVersion once decoded.
	ProtocolVersion string
	// UnknownFields keeps the other params members, verbatim.
	UnknownFields *structpb.Struct
}

// DecodeMessage parses and validates one Agent Hooks Protocol v0.1 JSON-RPC message: a
// hooks/intercept or hooks/capabilities request, a hooks/observe notification, or a response.
//
// Rules beyond the schemas: jsonrpc is "2.0"; duplicate object keys are refused; hooks/intercept
// needs an id equal to params.event.id and a tool.before event; hooks/observe must not carry an
// id; ids are non-empty strings or safe integers; protocolVersion is exactly "0.1".
//
// Errors are *FieldError values (AsFieldError) naming the JSON path; errorCode maps them to
// the JSON-RPC code to answer with and ErrorResponse builds that answer, addressed to the
// request's id, or reports that none is due.
func DecodeMessage(data []byte) (*Message, error) {
	return DecodeParsed(jsonwire.Parse(data))
}

// DecodeParsed is DecodeMessage for a message already parsed: doc and parseErr are what
// jsonwire.Parse returned for it (internal/jsonrpc.Read keeps both), so the bridge reads each
// message once. Its errors and their codes are DecodeMessage's.
func DecodeParsed(doc any, parseErr error) (*Message, error) {
	v, err := parsed(doc, parseErr)
	env, isObject := v.(map[string]any)
	switch {
	case err != nil && !isObject:
		return nil, &rejection{err: err, id: NullID(), reply: true}
	case !isObject: // includes the valid JSON document null
		err := badEnvelope("", "must be a JSON-RPC 2.0 object (batches are not used)")
		return nil, &rejection{err: err, id: NullID(), reply: true}
	case err != nil:
		return nil, reject(env, err)
	}
	msg, err := decodeEnvelope(env)
	if err != nil {
		return nil, reject(env, err)
	}
	return msg, nil
}

// reject decides how a rejected envelope is answered. Notifications and responses never are;
// everything else is answered to its id when that id is usable, and to null otherwise.
func reject(env map[string]any, err error) error {
	method, hasMethod := env["method"]
	_, hasID := env["id"]
	_, hasResult := env["result"]
	_, hasError := env["error"]
	if _, isString := method.(string); isString && !hasID {
		return &rejection{err: err, reply: false}
	}
	if !hasMethod && (hasResult || hasError) {
		return &rejection{err: err, reply: false}
	}
	id := NullID()
	// A repeated id member has no trustworthy value; answer such a request to null.
	if fe, ok := jsonwire.AsFieldError(err); !ok || fe.Path != "id" || !errors.Is(err, jsonwire.ErrDuplicateKey) {
		if read, ok := readID(env["id"], false); ok {
			id = read
		}
	}
	return &rejection{err: err, id: id, reply: true}
}

func decodeEnvelope(env map[string]any) (*Message, error) {
	return decodeEnvelopeOf(env, decodeCall, decodeResponse)
}

// decodeEnvelopeOf reads the JSON-RPC envelope both versions share, with the version's own
// readers of a call (request or notification) and of a response.
func decodeEnvelopeOf(env map[string]any, call, response func(*object, *Message) error) (*Message, error) {
	o := newObject("", env)
	version, ok := env["jsonrpc"]
	if !ok {
		return nil, badEnvelope("jsonrpc", "required")
	}
	if version != "2.0" {
		return nil, badEnvelope("jsonrpc", `must be "2.0"`)
	}
	o.claim("jsonrpc")

	msg := &Message{}
	var err error
	switch {
	case o.has("method"):
		err = call(o, msg)
	case o.has("result") || o.has("error"):
		err = response(o, msg)
	default:
		err = badEnvelope("", "not a request, notification or response; needs method, result or error")
	}
	if err != nil {
		return nil, err
	}
	if msg.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return msg, nil
}

// decodeCallHead reads what every request and notification of both versions has: the method
// (in msg.Method), no result or error, and the id when there is one.
func decodeCallHead(o *object, msg *Message) error {
	method, ok := o.m["method"].(string)
	if !ok || method == "" {
		return badEnvelope("method", "must be a non-empty string")
	}
	o.claim("method")
	msg.Method = method
	for _, key := range []string{"result", "error"} {
		if o.has(key) {
			return badEnvelope(key, "not allowed on a request or notification")
		}
	}
	if raw, ok := o.m["id"]; ok {
		if msg.ID, ok = readID(raw, false); !ok {
			return badEnvelope("id", "must be a non-empty string or an integer within ±(2^53-1)")
		}
		o.claim("id")
	}
	return nil
}

// decodeCall reads a request or notification.
func decodeCall(o *object, msg *Message) error {
	if err := decodeCallHead(o, msg); err != nil {
		return err
	}
	method := msg.Method

	switch method {
	case MethodIntercept:
		if msg.ID.IsAbsent() {
			return badEnvelope("id", "required; hooks/intercept is a request")
		}
	case MethodObserve:
		if !msg.ID.IsAbsent() {
			return badEnvelope("id", "not allowed; hooks/observe is a notification")
		}
	case MethodCapabilities:
		if msg.ID.IsAbsent() {
			return badEnvelope("id", "required; hooks/capabilities is a request")
		}
	default:
		return errorf(CodeMethodNotFound, nil, "method",
			"unknown method; expected %s, %s or %s", MethodIntercept, MethodObserve, MethodCapabilities)
	}

	raw, err := o.required("params")
	if err != nil {
		return err
	}
	params, err := objectAt("params", raw)
	if err != nil {
		return err
	}
	switch method {
	case MethodIntercept:
		if msg.Intercept, err = decodeInterceptParams(params); err != nil {
			return err
		}
		// Retries reuse both ids, so a mismatch means the harness mixed up two calls.
		if s, ok := msg.ID.StringValue(); !ok || s != msg.Intercept.Request.GetEvent().GetId() {
			return invalid("id", "must equal params.event.id")
		}
	case MethodObserve:
		msg.Observe, err = decodeObserveParams(params)
	case MethodCapabilities:
		msg.Capabilities, err = decodeCapabilitiesParams(params)
	}
	return err
}

func decodeInterceptParams(o *object) (*InterceptParams, error) {
	p := &InterceptParams{Request: &ahpv1.InterceptRequest{}}
	var raw any
	var err error
	if p.ProtocolVersion, raw, err = versionAndEvent(o); err != nil {
		return nil, err
	}
	// A v0.1 event that is simply not interceptable is unsupported (-32002), whatever its shape.
	if m, ok := raw.(map[string]any); ok {
		if t, ok := m["type"].(string); ok && t != "tool.before" {
			if _, known := eventTypes[t]; known {
				return nil, errorf(CodeUnsupportedEvent, ErrUnsupportedEvent, o.at("event.type"),
					"event type cannot be intercepted; hooks/intercept accepts only tool.before")
			}
		}
	}
	if p.Request.Event, err = DecodeEvent(o.at("event"), raw); err != nil {
		return nil, err
	}
	if raw, err = o.required("capabilities"); err != nil {
		return nil, err
	}
	if p.Request.Capabilities, p.CapabilitiesUnknownFields, err = decodeCapabilities(o.at("capabilities"), raw); err != nil {
		return nil, err
	}
	if !hasDeny(p.Request.Capabilities) {
		return nil, invalid(o.at("capabilities.effects"), "must contain deny for hooks/intercept")
	}
	if p.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if p.State, err = o.optionalValue("state"); err != nil {
		return nil, err
	}
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

func decodeObserveParams(o *object) (*ObserveParams, error) {
	p := &ObserveParams{Request: &ahpv1.ObserveRequest{}}
	var raw any
	var err error
	if p.ProtocolVersion, raw, err = versionAndEvent(o); err != nil {
		return nil, err
	}
	if p.Request.Event, err = DecodeEvent(o.at("event"), raw); err != nil {
		return nil, err
	}
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

// versionAndEvent reads the two members both event-carrying params start with: protocolVersion
// (checkVersion) and the required event, still undecoded.
func versionAndEvent(o *object) (version string, event any, err error) {
	if version, err = checkVersion(o); err != nil {
		return "", nil, err
	}
	if event, err = o.required("event"); err != nil {
		return "", nil, err
	}
	return version, event, nil
}

func decodeCapabilitiesParams(o *object) (*CapabilitiesParams, error) {
	p := &CapabilitiesParams{}
	var err error
	if p.ProtocolVersion, err = checkVersion(o); err != nil {
		return nil, err
	}
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeResponse reads a success or error response.
func decodeResponse(o *object, msg *Message) error {
	if o.has("result") && o.has("error") {
		return badEnvelope("error", "not allowed together with result")
	}
	raw, ok := o.m["id"]
	if !ok {
		return badEnvelope("id", "required on a response (null when the request id was unreadable)")
	}
	if msg.ID, ok = readID(raw, true); !ok {
		return badEnvelope("id", "must be a non-empty string, an integer within ±(2^53-1) or null")
	}
	o.claim("id")
	var err error
	if raw, ok := o.m["result"]; ok {
		o.claim("result")
		msg.Result, err = DecodeInterceptResult("result", raw)
		return err
	}
	o.claim("error")
	msg.Error, err = decodeRPCError("error", o.m["error"])
	return err
}

// decodeRPCError converts a decoded JSON-RPC error object ({"code", "message", "data"?}) into
// an RpcError. code must be an integer in the int32 range and message a string; data may be any
// JSON and is kept as sent (null included). Other members have no place in RpcError and are
// dropped.
func decodeRPCError(path string, v any) (*ahpv1.RpcError, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	raw, err := o.required("code")
	if err != nil {
		return nil, err
	}
	code, ok := safeInteger(raw)
	if !ok || code < math.MinInt32 || code > math.MaxInt32 {
		return nil, invalid(o.at("code"), "must be an integer in the 32-bit range")
	}
	e := &ahpv1.RpcError{Code: int32(code)}
	if e.Message, err = o.requiredString("message", false); err != nil {
		return nil, err
	}
	if e.Data, err = o.optionalValue("data"); err != nil {
		return nil, err
	}
	return e, nil
}

func (enc encoder) rpcError(e *ahpv1.RpcError) map[string]any {
	out := map[string]any{
		"code":    json.Number(strconv.FormatInt(int64(e.GetCode()), 10)),
		"message": e.GetMessage(),
	}
	if e.GetData() != nil {
		out["data"] = enc.value(e.GetData())
	}
	return out
}

// EncodeMessage writes m as one compact JSON-RPC object without a trailing newline (stdio
// framing adds the LF). The result is checked with the rules of DecodeMessage first, so an
// invalid message (two denies, an empty reason, a mismatched intercept id, ...) is refused rather
// than sent. A message from DecodeMessage always encodes, and decodes back to an equal one.
func EncodeMessage(m *Message) ([]byte, error) {
	if err := checkShape(m); err != nil {
		return nil, err
	}
	// The check is what decoding the encoded message would say. responseValid settles the
	// common case, a response, from the typed fields alone; everything else is decoded for real.
	if !responseValid(m) {
		decode := decodeEnvelope
		if VersionOf(m) == Draft {
			decode = decodeDraftEnvelope
		}
		if _, err := decode(plainEncoder.envelope(m)); err != nil {
			return nil, encodeError("message", err)
		}
	}
	// The direct tree holds only values jsonwire.Append writes, so the fallback is a safety net only.
	if out, ok := jsonwire.Append(make([]byte, 0, 512), directEncoder.envelope(m)); ok {
		return out, nil
	}
	return jsonwire.Marshal(plainEncoder.envelope(m))
}

// methodOf names the method a message's params kind belongs to; "" for responses.
func methodOf(m *Message) string {
	switch {
	case m.Intercept != nil:
		return MethodIntercept
	case m.Observe != nil:
		return MethodObserve
	case m.Capabilities != nil:
		return MethodCapabilities
	}
	return ""
}

// checkShape refuses a message that cannot be written at all: nil, not exactly one of the
// five kinds, or a Method that contradicts its params.
func checkShape(m *Message) error {
	if m == nil {
		return errors.New("convert: nil HooksMessage")
	}
	set := 0
	for _, isSet := range [...]bool{m.Intercept != nil, m.Observe != nil, m.Capabilities != nil, m.Result != nil, m.Error != nil, m.Discovery != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return errors.New("convert: a HooksMessage needs exactly one of Intercept, Observe, Capabilities, Result, Discovery and Error")
	}
	if m.Method != "" && m.Method != methodOf(m) {
		return errors.New("convert: HooksMessage.Method does not match its params")
	}
	return nil
}

// responseValid reports whether a response certainly passes decodeEnvelope once encoded,
// judged from the typed fields: a usable id, and for a result exactly what
// DecodeInterceptResult demands (version "0.1", at most one deny with a reason, a
// reverse-DNS code, reverse-DNS extension keys). An error object always decodes: its code is an
// int32 and its message a string. Unknown fields that would land on a member the decoder reads
// make the answer false, and so does everything that is not a response; the caller then runs the
// real decoder, which gives the exact error. False never means invalid, only "not sure".
func responseValid(m *Message) bool {
	if m.Result == nil && m.Error == nil {
		return false
	}
	if hasAnyField(m.UnknownFields, "jsonrpc", "id", "method", "params", "result", "error") {
		return false
	}
	switch m.ID.kind {
	case idNull:
	case idString:
		if m.ID.str == "" {
			return false
		}
	case idInt:
		if m.ID.num < -maxSafeInteger || m.ID.num > maxSafeInteger {
			return false
		}
	default:
		return false // a response needs an id
	}
	if m.Error != nil {
		return true
	}
	r := m.Result
	if r.GetProtocolVersion() != ProtocolVersion || len(r.GetEffects()) > 1 ||
		hasAnyField(r.GetUnknownFields(), "protocolVersion", "effects", "extensions") ||
		!extensionKeysValid(r.GetExtensions()) {
		return false
	}
	for _, e := range r.GetEffects() {
		if e.GetType() != effectDeny || e.GetReason() == "" ||
			(e.GetCode() != "" && !isReverseDNS(e.GetCode())) ||
			hasAnyField(e.GetUnknownFields(), "type", "reason", "code", "extensions") ||
			!extensionKeysValid(e.GetExtensions()) {
			return false
		}
	}
	return true
}

// hasAnyField reports whether s has any of the keys.
func hasAnyField(s *structpb.Struct, keys ...string) bool {
	fields := s.GetFields()
	if len(fields) == 0 {
		return false
	}
	for _, k := range keys {
		if _, ok := fields[k]; ok {
			return true
		}
	}
	return false
}

// extensionKeysValid reports whether every key of an extensions object is reverse-DNS; nil
// (absent) passes.
func extensionKeysValid(s *structpb.Struct) bool {
	for k := range s.GetFields() {
		if !isReverseDNS(k) {
			return false
		}
	}
	return true
}

// envelope builds the JSON tree of m, which checkShape has accepted.
func (e encoder) envelope(m *Message) map[string]any {
	method := methodOf(m)
	out := e.base(m.UnknownFields)
	out["jsonrpc"] = "2.0"
	if !m.ID.IsAbsent() {
		out["id"] = m.ID.jsonValue()
	}
	if method != "" {
		out["method"] = method
	}
	switch {
	case m.Intercept != nil:
		out["params"] = e.interceptParams(m.Intercept)
	case m.Observe != nil:
		p := e.base(m.Observe.UnknownFields)
		p["protocolVersion"] = m.Observe.ProtocolVersion
		if ev := m.Observe.Request.GetEvent(); ev != nil {
			p["event"] = e.eventAt(Version(m.Observe.ProtocolVersion), ev)
		}
		out["params"] = p
	case m.Capabilities != nil:
		p := e.base(m.Capabilities.UnknownFields)
		p["protocolVersion"] = m.Capabilities.ProtocolVersion
		out["params"] = p
	case m.Result != nil:
		out["result"] = e.result(m.Result)
	case m.Discovery != nil:
		out["result"] = e.discovery(m.Discovery)
	case m.Error != nil:
		out["error"] = e.rpcError(m.Error)
	}
	return out
}

func (e encoder) interceptParams(p *InterceptParams) map[string]any {
	out := e.base(p.UnknownFields)
	out["protocolVersion"] = p.ProtocolVersion
	if ev := p.Request.GetEvent(); ev != nil {
		out["event"] = e.eventAt(Version(p.ProtocolVersion), ev)
	}
	if p.Offer != nil {
		out["capabilities"] = p.Offer.raw
	} else if c := p.Request.GetCapabilities(); c != nil {
		caps := e.base(p.CapabilitiesUnknownFields)
		caps["effects"] = encodeCapabilities(c)["effects"]
		out["capabilities"] = caps
	}
	if p.Extensions != nil {
		out["extensions"] = e.object(p.Extensions)
	}
	if p.State != nil {
		out["state"] = e.value(p.State)
	}
	return out
}
