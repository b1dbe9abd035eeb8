package convert

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Agent Hooks Protocol JSON-RPC methods.
const (
	// HooksMethodIntercept asks for a decision; a request whose id equals params.event.id.
	HooksMethodIntercept = "hooks/intercept"
	// HooksMethodObserve reports an event; a notification, never answered.
	HooksMethodObserve = "hooks/observe"
	// HooksMethodCapabilities asks for the backend's capabilities (a "draft" addition).
	HooksMethodCapabilities = "hooks/capabilities"
)

type hooksIDKind uint8

const (
	hooksIDAbsent hooksIDKind = iota
	hooksIDNull
	hooksIDString
	hooksIDInt
)

// HooksID is a JSON-RPC id as the Agent Hooks Protocol allows it: a non-empty string or an integer
// within ±(2^53-1) (the range every SDK represents exactly), and null on responses to requests
// whose id could not be read. The zero value is an absent id (a notification). HooksIDs are
// comparable with ==.
type HooksID struct {
	kind hooksIDKind
	str  string
	num  int64
}

// HooksStringID returns a string id.
func HooksStringID(s string) HooksID { return HooksID{kind: hooksIDString, str: s} }

// HooksIntID returns an integer id.
func HooksIntID(n int64) HooksID { return HooksID{kind: hooksIDInt, num: n} }

// HooksNullID returns the null id of an error response to an unreadable request.
func HooksNullID() HooksID { return HooksID{kind: hooksIDNull} }

// IsAbsent reports whether the message had no id (a notification).
func (id HooksID) IsAbsent() bool { return id.kind == hooksIDAbsent }

// IsNull reports whether the id is JSON null.
func (id HooksID) IsNull() bool { return id.kind == hooksIDNull }

// StringValue returns the id when it is a string.
func (id HooksID) StringValue() (string, bool) { return id.str, id.kind == hooksIDString }

// IntValue returns the id when it is an integer.
func (id HooksID) IntValue() (int64, bool) { return id.num, id.kind == hooksIDInt }

// jsonValue is the id as a JSON value; absent ids are not written at all.
func (id HooksID) jsonValue() any {
	switch id.kind {
	case hooksIDString:
		return id.str
	case hooksIDInt:
		return json.Number(strconv.FormatInt(id.num, 10))
	}
	return nil
}

// hooksReadID reads an id member; null is accepted only where responses allow it.
func hooksReadID(v any, allowNull bool) (HooksID, bool) {
	switch x := v.(type) {
	case string:
		return HooksStringID(x), x != ""
	case json.Number:
		n, ok := hooksInteger(x)
		return HooksIntID(n), ok
	case nil:
		return HooksNullID(), allowNull
	}
	return HooksID{}, false
}

// HooksMessage is one Agent Hooks Protocol JSON-RPC 2.0 message. Exactly one of Intercept,
// Observe, Capabilities, Result and Error is set; Method is set with the three params kinds.
// A result is always read as a hooks/intercept result: a response does not name its method, and
// v0.1 defines no other result.
type HooksMessage struct {
	// ID is the request or response id, exactly as sent; absent for hooks/observe.
	ID HooksID
	// Method is the method of a request or notification; empty for responses.
	Method string
	// Intercept holds the params of a hooks/intercept request.
	Intercept *HooksInterceptParams
	// Observe holds the params of a hooks/observe notification.
	Observe *HooksObserveParams
	// Capabilities holds the params of a hooks/capabilities request.
	Capabilities *HooksCapabilitiesParams
	// Result holds the result of a successful hooks/intercept response.
	Result *ahpv1.HooksInterceptResult
	// Error holds the error of an error response.
	Error *ahpv1.RpcError
	// UnknownFields keeps envelope members JSON-RPC 2.0 does not define, verbatim.
	UnknownFields *structpb.Struct
}

// HooksInterceptParams are the params of a hooks/intercept request.
type HooksInterceptParams struct {
	// ProtocolVersion is always HooksProtocolVersion once decoded.
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
	// UnknownFields keeps the other params members, verbatim.
	UnknownFields *structpb.Struct
}

// HooksObserveParams are the params of a hooks/observe notification.
type HooksObserveParams struct {
	// ProtocolVersion is always HooksProtocolVersion once decoded.
	ProtocolVersion string
	// Request carries the event (any of the five v0.1 types).
	Request *ahpv1.ObserveRequest
	// UnknownFields keeps the other params members, verbatim.
	UnknownFields *structpb.Struct
}

// HooksCapabilitiesParams are the params of a hooks/capabilities request.
type HooksCapabilitiesParams struct {
	// ProtocolVersion is always HooksProtocolVersion once decoded.
	ProtocolVersion string
	// UnknownFields keeps the other params members, verbatim.
	UnknownFields *structpb.Struct
}

// DecodeHooksMessage parses and validates one Agent Hooks Protocol v0.1 JSON-RPC message: a
// hooks/intercept or hooks/capabilities request, a hooks/observe notification, or a response.
//
// Rules beyond the schemas: jsonrpc is "2.0"; duplicate object keys are refused; hooks/intercept
// needs an id equal to params.event.id and a tool.before event; hooks/observe must not carry an
// id; ids are non-empty strings or safe integers; protocolVersion is exactly "0.1".
//
// Errors are *FieldError values (AsFieldError) naming the JSON path; HooksErrorCode maps them to
// the JSON-RPC code to answer with and HooksErrorResponse builds that answer, addressed to the
// request's id, or reports that none is due.
func DecodeHooksMessage(data []byte) (*HooksMessage, error) {
	v, err := hooksParseJSON(data)
	env, isObject := v.(map[string]any)
	switch {
	case err != nil && !isObject:
		return nil, &hooksRejection{err: err, id: HooksNullID(), reply: true}
	case !isObject: // includes the valid JSON document null
		err := hooksBadEnvelope("", "must be a JSON-RPC 2.0 object (batches are not used)")
		return nil, &hooksRejection{err: err, id: HooksNullID(), reply: true}
	case err != nil:
		return nil, hooksReject(env, err)
	}
	msg, err := hooksDecodeEnvelope(env)
	if err != nil {
		return nil, hooksReject(env, err)
	}
	return msg, nil
}

// hooksReject decides how a rejected envelope is answered. Notifications and responses never are;
// everything else is answered to its id when that id is usable, and to null otherwise.
func hooksReject(env map[string]any, err error) error {
	method, hasMethod := env["method"]
	_, hasID := env["id"]
	_, hasResult := env["result"]
	_, hasError := env["error"]
	if _, isString := method.(string); isString && !hasID {
		return &hooksRejection{err: err, reply: false}
	}
	if !hasMethod && (hasResult || hasError) {
		return &hooksRejection{err: err, reply: false}
	}
	id := HooksNullID()
	// A repeated id member has no trustworthy value; answer such a request to null.
	if fe, ok := AsFieldError(err); !ok || fe.Path != "id" || fe.Message != hooksDuplicateKeyMessage {
		if read, ok := hooksReadID(env["id"], false); ok {
			id = read
		}
	}
	return &hooksRejection{err: err, id: id, reply: true}
}

func hooksDecodeEnvelope(env map[string]any) (*HooksMessage, error) {
	o := newHooksObject("", env)
	version, ok := env["jsonrpc"]
	if !ok {
		return nil, hooksBadEnvelope("jsonrpc", "required")
	}
	if version != "2.0" {
		return nil, hooksBadEnvelope("jsonrpc", `must be "2.0"`)
	}
	o.claim("jsonrpc")

	msg := &HooksMessage{}
	var err error
	switch {
	case o.has("method"):
		err = hooksDecodeCall(o, msg)
	case o.has("result") || o.has("error"):
		err = hooksDecodeResponse(o, msg)
	default:
		err = hooksBadEnvelope("", "not a request, notification or response; needs method, result or error")
	}
	if err != nil {
		return nil, err
	}
	if msg.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return msg, nil
}

// hooksDecodeCall reads a request or notification.
func hooksDecodeCall(o *hooksObject, msg *HooksMessage) error {
	method, ok := o.m["method"].(string)
	if !ok || method == "" {
		return hooksBadEnvelope("method", "must be a non-empty string")
	}
	o.claim("method")
	msg.Method = method
	for _, key := range []string{"result", "error"} {
		if o.has(key) {
			return hooksBadEnvelope(key, "not allowed on a request or notification")
		}
	}
	if raw, ok := o.m["id"]; ok {
		if msg.ID, ok = hooksReadID(raw, false); !ok {
			return hooksBadEnvelope("id", "must be a non-empty string or an integer within ±(2^53-1)")
		}
		o.claim("id")
	}

	switch method {
	case HooksMethodIntercept:
		if msg.ID.IsAbsent() {
			return hooksBadEnvelope("id", "required; hooks/intercept is a request")
		}
	case HooksMethodObserve:
		if !msg.ID.IsAbsent() {
			return hooksBadEnvelope("id", "not allowed; hooks/observe is a notification")
		}
	case HooksMethodCapabilities:
		if msg.ID.IsAbsent() {
			return hooksBadEnvelope("id", "required; hooks/capabilities is a request")
		}
	default:
		return hooksErrorf(HooksCodeMethodNotFound, nil, "method",
			"unknown method; expected %s, %s or %s", HooksMethodIntercept, HooksMethodObserve, HooksMethodCapabilities)
	}

	raw, err := o.required("params")
	if err != nil {
		return err
	}
	params, err := hooksObjectAt("params", raw)
	if err != nil {
		return err
	}
	switch method {
	case HooksMethodIntercept:
		if msg.Intercept, err = hooksDecodeInterceptParams(params); err != nil {
			return err
		}
		// Retries reuse both ids, so a mismatch means the harness mixed up two calls.
		if s, ok := msg.ID.StringValue(); !ok || s != msg.Intercept.Request.GetEvent().GetId() {
			return hooksInvalid("id", "must equal params.event.id")
		}
	case HooksMethodObserve:
		msg.Observe, err = hooksDecodeObserveParams(params)
	case HooksMethodCapabilities:
		msg.Capabilities, err = hooksDecodeCapabilitiesParams(params)
	}
	return err
}

func hooksDecodeInterceptParams(o *hooksObject) (*HooksInterceptParams, error) {
	p := &HooksInterceptParams{Request: &ahpv1.InterceptRequest{}}
	var err error
	if p.ProtocolVersion, err = hooksCheckVersion(o); err != nil {
		return nil, err
	}
	raw, err := o.required("event")
	if err != nil {
		return nil, err
	}
	// A v0.1 event that is simply not interceptable is unsupported (-32002), whatever its shape.
	if m, ok := raw.(map[string]any); ok {
		if t, ok := m["type"].(string); ok && t != "tool.before" {
			if _, known := hooksEventTypes[t]; known {
				return nil, hooksErrorf(HooksCodeUnsupportedEvent, ErrUnsupportedEvent, o.at("event.type"),
					"event type cannot be intercepted; hooks/intercept accepts only tool.before")
			}
		}
	}
	if p.Request.Event, err = DecodeHooksEvent(o.at("event"), raw); err != nil {
		return nil, err
	}
	if raw, err = o.required("capabilities"); err != nil {
		return nil, err
	}
	if p.Request.Capabilities, p.CapabilitiesUnknownFields, err = hooksDecodeCapabilities(o.at("capabilities"), raw); err != nil {
		return nil, err
	}
	if !hooksHasDeny(p.Request.Capabilities) {
		return nil, hooksInvalid(o.at("capabilities.effects"), "must contain deny for hooks/intercept")
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

func hooksDecodeObserveParams(o *hooksObject) (*HooksObserveParams, error) {
	p := &HooksObserveParams{Request: &ahpv1.ObserveRequest{}}
	var err error
	if p.ProtocolVersion, err = hooksCheckVersion(o); err != nil {
		return nil, err
	}
	raw, err := o.required("event")
	if err != nil {
		return nil, err
	}
	if p.Request.Event, err = DecodeHooksEvent(o.at("event"), raw); err != nil {
		return nil, err
	}
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

func hooksDecodeCapabilitiesParams(o *hooksObject) (*HooksCapabilitiesParams, error) {
	p := &HooksCapabilitiesParams{}
	var err error
	if p.ProtocolVersion, err = hooksCheckVersion(o); err != nil {
		return nil, err
	}
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

// hooksDecodeResponse reads a success or error response.
func hooksDecodeResponse(o *hooksObject, msg *HooksMessage) error {
	if o.has("result") && o.has("error") {
		return hooksBadEnvelope("error", "not allowed together with result")
	}
	raw, ok := o.m["id"]
	if !ok {
		return hooksBadEnvelope("id", "required on a response (null when the request id was unreadable)")
	}
	if msg.ID, ok = hooksReadID(raw, true); !ok {
		return hooksBadEnvelope("id", "must be a non-empty string, an integer within ±(2^53-1) or null")
	}
	o.claim("id")
	var err error
	if raw, ok := o.m["result"]; ok {
		o.claim("result")
		msg.Result, err = DecodeHooksInterceptResult("result", raw)
		return err
	}
	o.claim("error")
	msg.Error, err = DecodeHooksRPCError("error", o.m["error"])
	return err
}

// DecodeHooksRPCError converts a decoded JSON-RPC error object ({"code", "message", "data"?}) into
// an RpcError. code must be an integer in the int32 range and message a string; data may be any
// JSON and is kept as sent (null included). Other members have no place in RpcError and are
// dropped.
func DecodeHooksRPCError(path string, v any) (*ahpv1.RpcError, error) {
	o, err := hooksObjectAt(path, v)
	if err != nil {
		return nil, err
	}
	raw, err := o.required("code")
	if err != nil {
		return nil, err
	}
	code, ok := hooksInteger(raw)
	if !ok || code < math.MinInt32 || code > math.MaxInt32 {
		return nil, hooksInvalid(o.at("code"), "must be an integer in the 32-bit range")
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

// EncodeHooksRPCError writes an RpcError as a JSON-RPC error object; data only when set.
func EncodeHooksRPCError(e *ahpv1.RpcError) map[string]any {
	return hooksPlain.rpcError(e)
}

func (enc hooksEnc) rpcError(e *ahpv1.RpcError) map[string]any {
	out := map[string]any{
		"code":    json.Number(strconv.FormatInt(int64(e.GetCode()), 10)),
		"message": e.GetMessage(),
	}
	if e.GetData() != nil {
		out["data"] = enc.value(e.GetData())
	}
	return out
}

// EncodeHooksMessage writes m as one compact JSON-RPC object without a trailing newline (stdio
// framing adds the LF). The result is checked with the rules of DecodeHooksMessage first, so an
// invalid message (two denies, an empty reason, a mismatched intercept id, ...) is refused rather
// than sent. A message from DecodeHooksMessage always encodes, and decodes back to an equal one.
func EncodeHooksMessage(m *HooksMessage) ([]byte, error) {
	if err := hooksCheckShape(m); err != nil {
		return nil, err
	}
	// The check is what decoding the encoded message would say. hooksResponseValid settles the
	// common case, a response, from the typed fields alone; everything else is decoded for real.
	if !hooksResponseValid(m) {
		if _, err := hooksDecodeEnvelope(hooksPlain.envelope(m)); err != nil {
			return nil, hooksEncodeError("message", err)
		}
	}
	// The direct tree holds only values appendJSON writes, so the fallback is a safety net only.
	if out, ok := appendJSON(make([]byte, 0, 512), hooksDirect.envelope(m)); ok {
		return out, nil
	}
	return marshalJSON(hooksPlain.envelope(m))
}

// hooksMethodOf names the method a message's params kind belongs to; "" for responses.
func hooksMethodOf(m *HooksMessage) string {
	switch {
	case m.Intercept != nil:
		return HooksMethodIntercept
	case m.Observe != nil:
		return HooksMethodObserve
	case m.Capabilities != nil:
		return HooksMethodCapabilities
	}
	return ""
}

// hooksCheckShape refuses a message that cannot be written at all: nil, not exactly one of the
// five kinds, or a Method that contradicts its params.
func hooksCheckShape(m *HooksMessage) error {
	if m == nil {
		return errors.New("convert: nil HooksMessage")
	}
	set := 0
	for _, isSet := range [...]bool{m.Intercept != nil, m.Observe != nil, m.Capabilities != nil, m.Result != nil, m.Error != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return errors.New("convert: a HooksMessage needs exactly one of Intercept, Observe, Capabilities, Result and Error")
	}
	if m.Method != "" && m.Method != hooksMethodOf(m) {
		return errors.New("convert: HooksMessage.Method does not match its params")
	}
	return nil
}

// hooksResponseValid reports whether a response certainly passes hooksDecodeEnvelope once encoded,
// judged from the typed fields: a usable id, and for a result exactly what
// DecodeHooksInterceptResult demands (version "0.1", at most one deny with a reason, a
// reverse-DNS code, reverse-DNS extension keys). An error object always decodes: its code is an
// int32 and its message a string. Unknown fields that would land on a member the decoder reads
// make the answer false, and so does everything that is not a response; the caller then runs the
// real decoder, which gives the exact error. False never means invalid, only "not sure".
func hooksResponseValid(m *HooksMessage) bool {
	if m.Result == nil && m.Error == nil {
		return false
	}
	if hooksHasAnyField(m.UnknownFields, "jsonrpc", "id", "method", "params", "result", "error") {
		return false
	}
	switch m.ID.kind {
	case hooksIDNull:
	case hooksIDString:
		if m.ID.str == "" {
			return false
		}
	case hooksIDInt:
		if m.ID.num < -hooksMaxSafeInteger || m.ID.num > hooksMaxSafeInteger {
			return false
		}
	default:
		return false // a response needs an id
	}
	if m.Error != nil {
		return true
	}
	r := m.Result
	if r.GetProtocolVersion() != HooksProtocolVersion || len(r.GetEffects()) > 1 ||
		hooksHasAnyField(r.GetUnknownFields(), "protocolVersion", "effects", "extensions") ||
		!hooksExtensionKeysValid(r.GetExtensions()) {
		return false
	}
	for _, e := range r.GetEffects() {
		if e.GetType() != hooksEffectDeny || e.GetReason() == "" ||
			(e.GetCode() != "" && !hooksIsReverseDNS(e.GetCode())) ||
			hooksHasAnyField(e.GetUnknownFields(), "type", "reason", "code", "extensions") ||
			!hooksExtensionKeysValid(e.GetExtensions()) {
			return false
		}
	}
	return true
}

// hooksHasAnyField reports whether s has any of the keys.
func hooksHasAnyField(s *structpb.Struct, keys ...string) bool {
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

// hooksExtensionKeysValid reports whether every key of an extensions object is reverse-DNS; nil
// (absent) passes.
func hooksExtensionKeysValid(s *structpb.Struct) bool {
	for k := range s.GetFields() {
		if !hooksIsReverseDNS(k) {
			return false
		}
	}
	return true
}

// envelope builds the JSON tree of m, which hooksCheckShape has accepted.
func (e hooksEnc) envelope(m *HooksMessage) map[string]any {
	method := hooksMethodOf(m)
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
			p["event"] = e.event(ev)
		}
		out["params"] = p
	case m.Capabilities != nil:
		p := e.base(m.Capabilities.UnknownFields)
		p["protocolVersion"] = m.Capabilities.ProtocolVersion
		out["params"] = p
	case m.Result != nil:
		out["result"] = e.result(m.Result)
	case m.Error != nil:
		out["error"] = e.rpcError(m.Error)
	}
	return out
}

func (e hooksEnc) interceptParams(p *HooksInterceptParams) map[string]any {
	out := e.base(p.UnknownFields)
	out["protocolVersion"] = p.ProtocolVersion
	if ev := p.Request.GetEvent(); ev != nil {
		out["event"] = e.event(ev)
	}
	if c := p.Request.GetCapabilities(); c != nil {
		caps := e.base(p.CapabilitiesUnknownFields)
		caps["effects"] = EncodeHooksCapabilities(c)["effects"]
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
