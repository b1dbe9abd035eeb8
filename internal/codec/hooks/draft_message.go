package hooks

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// DecodeDraft reads one Agent Hooks Protocol "draft" JSON-RPC message already parsed by
// jsonwire.Parse: a hooks/intercept request (any of the 19 interceptable catalogue events), a
// hooks/observe notification (any of the 32), a hooks/capabilities request, or a response whose
// result is an intercept result. The envelope rules are v0.1's (jsonrpc "2.0", id equal to
// params.event.id, observe without id, safe integer ids); protocolVersion must be exactly "draft".
// Decoded params carry ProtocolVersion "draft"; events carry Origin.protocol_version "draft" and
// their typed draft members in Event.catalogue. Errors are DecodeParsed's kinds, answered with
// ErrorResponse.
func DecodeDraft(doc any) (*Message, error) {
	env, ok := doc.(map[string]any)
	if !ok {
		err := badEnvelope("", "must be a JSON-RPC 2.0 object (batches are not used)")
		return nil, &rejection{err: err, id: NullID(), reply: true}
	}
	msg, err := decodeDraftEnvelope(env)
	if err != nil {
		return nil, reject(env, err)
	}
	return msg, nil
}

func decodeDraftEnvelope(env map[string]any) (*Message, error) {
	return decodeEnvelopeOf(env, decodeDraftCall, decodeDraftResponse)
}

func decodeDraftCall(o *object, msg *Message) error {
	if err := decodeCallHead(o, msg); err != nil {
		return err
	}
	method := msg.Method
	switch method {
	case MethodIntercept, MethodCapabilities:
		if msg.ID.IsAbsent() {
			return badEnvelope("id", "required; %s is a request", method)
		}
	case MethodObserve:
		if !msg.ID.IsAbsent() {
			return badEnvelope("id", "not allowed; hooks/observe is a notification")
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
	if _, err := checkDraftVersion(params); err != nil {
		return err
	}
	switch method {
	case MethodIntercept:
		if msg.Intercept, err = decodeDraftIntercept(params); err != nil {
			return err
		}
		if s, ok := msg.ID.StringValue(); !ok || s != msg.Intercept.Request.GetEvent().GetId() {
			return invalid("id", "must equal params.event.id")
		}
	case MethodObserve:
		msg.Observe, err = decodeDraftObserve(params)
	case MethodCapabilities:
		msg.Capabilities = &CapabilitiesParams{ProtocolVersion: string(Draft)}
		msg.Capabilities.UnknownFields, err = params.rest()
	}
	return err
}

// checkDraftVersion reads a required protocolVersion that must be exactly "draft".
func checkDraftVersion(o *object) (string, error) {
	v, err := o.requiredString("protocolVersion", false)
	if err != nil {
		return "", err
	}
	if v != string(Draft) {
		e := errorf(CodeUnsupportedProtocolVersion, ErrUnsupportedProtocolVersion, o.at("protocolVersion"),
			"unsupported protocol version; supported: 0.1, draft")
		e.(*codedError).supported = supportedList()
		return "", e
	}
	return v, nil
}

func decodeDraftIntercept(o *object) (*InterceptParams, error) {
	p := &InterceptParams{ProtocolVersion: string(Draft), Request: &ahpv1.InterceptRequest{}}
	raw, err := o.required("event")
	if err != nil {
		return nil, err
	}
	// A catalogue event that exists but cannot be intercepted is unsupported (-32002).
	if m, ok := raw.(map[string]any); ok {
		if t, ok := m["type"].(string); ok {
			if spec, known := catalogue[t]; known && !spec.interceptable {
				return nil, errorf(CodeUnsupportedEvent, ErrUnsupportedEvent, o.at("event.type"),
					"event type cannot be intercepted; it is observe-only in the draft catalogue")
			}
		}
	}
	if p.Request.Event, err = DecodeDraftEvent(o.at("event"), raw); err != nil {
		return nil, err
	}
	if raw, err = o.required("capabilities"); err != nil {
		return nil, err
	}
	offer, err := decodeOffer(o.at("capabilities"), raw, p.Request.Event.GetOrigin().GetEventType())
	if err != nil {
		return nil, err
	}
	p.Request.Capabilities = offer.canonical()
	if e := p.Request.Event.GetPayload().GetStructValue().GetFields()["elicitation"].GetStructValue(); e != nil {
		offer.ElicitationMode = e.GetFields()["mode"].GetStringValue()
		offer.ElicitationAction = e.GetFields()["action"].GetStringValue()
	}
	p.Offer = offer
	if p.Extensions, err = o.extensions("extensions"); err != nil {
		return nil, err
	}
	if st, ok := o.m["state"]; ok {
		o.claim("state")
		if err := checkState(o.at("state"), st); err != nil {
			return nil, err
		}
		if p.State, err = fieldValue(o.at("state"), st); err != nil {
			return nil, err
		}
	}
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

func decodeDraftObserve(o *object) (*ObserveParams, error) {
	p := &ObserveParams{ProtocolVersion: string(Draft), Request: &ahpv1.ObserveRequest{}}
	raw, err := o.required("event")
	if err != nil {
		return nil, err
	}
	if p.Request.Event, err = DecodeDraftEvent(o.at("event"), raw); err != nil {
		return nil, err
	}
	// An early draft fixture still carries params.subscriptionId; like any unknown params member
	// it is kept verbatim and means nothing (docs/compatibility.md).
	if p.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkState validates params.state: permission and candidate are required, permission and flow
// are closed sets, instructions a list of strings, injections a list.
func checkState(path string, v any) error {
	o, err := objectAt(path, v)
	if err != nil {
		return err
	}
	perm, err := o.requiredString("permission", false)
	if err != nil {
		return err
	}
	if !oneOf(perm, "none", "allow", "ask", "deny") {
		return invalid(o.at("permission"), "must be one of none, allow, ask, deny")
	}
	cand, err := o.required("candidate")
	if err != nil {
		return err
	}
	if cand != nil {
		c, err := objectAt(o.at("candidate"), cand)
		if err != nil {
			return invalid(o.at("candidate"), "must be null or an object {value, provenance}")
		}
		if _, err := c.required("value"); err != nil {
			return err
		}
	}
	if f, ok := o.m["flow"]; ok {
		if s, ok := f.(string); !ok || !oneOf(s, "none", "stop", "continue") {
			return invalid(o.at("flow"), "must be one of none, stop, continue")
		}
	}
	if ins, ok := o.m["instructions"]; ok {
		list, ok := ins.([]any)
		if !ok {
			return invalid(o.at("instructions"), "must be an array of strings")
		}
		for i, x := range list {
			if _, ok := x.(string); !ok {
				return invalid(jsonwire.IndexPath(o.at("instructions"), i), "must be a string")
			}
		}
	}
	if inj, ok := o.m["injections"]; ok {
		if _, ok := inj.([]any); !ok {
			return invalid(o.at("injections"), "must be an array")
		}
	}
	return nil
}

func decodeDraftResponse(o *object, msg *Message) error {
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
		if m, ok := raw.(map[string]any); ok && m["manifest"] != nil && m["effects"] == nil {
			msg.Discovery, err = decodeDiscoveryResult("result", raw)
			return err
		}
		msg.Result, err = DecodeDraftResult("result", raw)
		return err
	}
	o.claim("error")
	msg.Error, err = decodeRPCError("error", o.m["error"])
	return err
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
