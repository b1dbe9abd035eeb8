package bridge

import (
	"context"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/jsonrpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// The Agent Harness Protocol v2.4 dialect: ahp/handshake, ahp/event, ahp/query and ahp/batch
// with the reference server's (a3s-ahp 2.4.0) checks, codes and messages, in its order:
// parse -> depth -> contract payload -> blocking-vs-notification -> typed parse -> handler.
// internal/codec/harness reproduces serde; this file adds the envelope, the upstream calls and the
// failure policy.
//
// Deliberate departures from the reference, all for JSON-RPC 2.0 (docs/compatibility.md,
// "ahp-jsonrpc-bridge"):
//   - an integer id (within ±(2^53-1)) makes a request, answered with the same integer; the
//     reference treats such a message as a notification and never answers it;
//   - a request whose id is null, fractional or not a string/number gets -32600 with id null; the
//     reference treats it as a notification and acts on it without answering;
//   - input that is not UTF-8 JSON gets -32700 "Parse error" with id null on every transport; the
//     reference drops it (stdio, WebSocket) or answers -32600 with id "" (HTTP);
//   - a JSON array (a JSON-RPC batch), a scalar, an object without a string method, a repeated
//     top-level member, and a jsonrpc other than "2.0" get -32600 "Invalid JSON-RPC message" with
//     the request's id, or null when it has none; the reference drops these on stdio and
//     WebSocket, answers id "" on HTTP, and processes "jsonrpc": "1.0" normally;
//   - a request without params is read as params null ("Invalid params: invalid type: null,
//     expected struct …"), since JSON-RPC 2.0 lets params be omitted; the reference cannot parse
//     it and drops it;
//   - something that looks like a response (result or error, no method) is not answered on the
//     NDJSON and WebSocket transports, where an answer could start an endless exchange between two
//     peers; HTTP answers it -32600 with id null.
//
// Notifications are never answered on stdio, WebSocket and Unix sockets. On HTTP an accepted one
// is 204 with no body, a refused one 200 {"jsonrpc":"2.0","id":"","error":{"code":-32603,
// "message":"Handler error: …"}} as the reference answers (-32600 "Invalid JSON-RPC message" when
// the envelope itself is broken). Only ahp/event notifications are processed; other methods are
// accepted and ignored, as by the reference.

// Short names for the codec's codes (the reference's; -32000 only for the handshake version).
const (
	harnessCodeInvalidParams = harness.CodeInvalidParams
	harnessCodeInternal      = harness.CodeInternalError
)

// notificationErrorID is the id of the reference's HTTP answer to a failed notification.
var notificationErrorID = []byte(`""`)

func (b *Bridge) handleHarness(ctx context.Context, c *call, env *jsonrpc.Message) Reply {
	switch {
	case env.Syntax():
		return harnessErrorReply(jsonrpc.NullID, harness.CodeParseError, harness.MessageParseError)
	case env.Object == nil:
		return harnessErrorReply(jsonrpc.NullID, harness.CodeInvalidRequest, harness.MessageInvalidMessage)
	}
	c.method = env.Method
	idJSON, idText := jsonrpc.RequestID(env.ID)
	switch {
	case env.IsNotification():
		if env.Duplicate || env.JSONRPC != "2.0" {
			return b.harnessRefuseNotification(c, harness.CodeInvalidRequest, harness.MessageInvalidMessage)
		}
		return b.harnessNotification(ctx, c, env)
	case env.IsResponse():
		if c.transport == TransportHTTP {
			return harnessErrorReply(jsonrpc.NullID, harness.CodeInvalidRequest, harness.MessageInvalidMessage)
		}
		return Reply{HTTPStatus: http.StatusNoContent}
	case !env.HasID || idJSON == nil || env.DuplicateID:
		return harnessErrorReply(jsonrpc.NullID, harness.CodeInvalidRequest, harness.MessageInvalidMessage)
	}
	c.idJSON = idJSON
	if env.Duplicate || !env.MethodOK || env.JSONRPC != "2.0" {
		return harnessErrorReply(c.idJSON, harness.CodeInvalidRequest, harness.MessageInvalidMessage)
	}
	switch env.Method {
	case harness.MethodHandshake:
		return b.harnessHandshake(ctx, c, env)
	case harness.MethodEvent:
		return b.harnessEvent(ctx, c, env, idText)
	case harness.MethodQuery:
		return b.harnessQuery(ctx, c, env)
	case harness.MethodBatch:
		return b.harnessBatch(ctx, c, env)
	}
	return harnessErrorReply(c.idJSON, harness.CodeMethodNotFound, harness.MessageMethodNotFound)
}

// harnessErrorReply is a JSON-RPC error; the message is redacted (see redact).
func harnessErrorReply(idJSON []byte, code int, message string) Reply {
	return Reply{Body: jsonrpc.ErrorResponse(idJSON, code, redact(message)), HTTPStatus: http.StatusOK}
}

// harnessCheckFailed answers a request the codec's checks refused.
func harnessCheckFailed(c *call, e *harness.Error) Reply {
	return harnessErrorReply(c.idJSON, e.Code, e.Message)
}

func harnessResultReply(idJSON, result []byte) Reply {
	return Reply{Body: jsonrpc.ResultResponse(idJSON, result), HTTPStatus: http.StatusOK}
}

// harnessRefuseNotification is the answer to a notification that was not accepted: nothing on
// stdio, WebSocket and Unix sockets; on HTTP the reference's 200 with id "". Either way it is
// logged at debug (rate-limited with every log line), since nobody else hears of it.
func (b *Bridge) harnessRefuseNotification(c *call, code int, message string) Reply {
	b.log.Debug("notification not accepted", "dialect", "harness", "transport", int(c.transport), "code", code, "reason", redact(message))
	if c.transport != TransportHTTP {
		return Reply{HTTPStatus: http.StatusNoContent}
	}
	return harnessErrorReply(notificationErrorID, code, message)
}

// errMessage is harness.ErrMessage: the text the reference puts after its prefixes.
func errMessage(err error) string { return harness.ErrMessage(err) }

// harnessNotification handles an ahp/event notification: read, validate shape, check that the
// type is fire-and-forget, then record it upstream.
func (b *Bridge) harnessNotification(ctx context.Context, c *call, env *jsonrpc.Message) Reply {
	if env.Method != harness.MethodEvent {
		return Reply{HTTPStatus: http.StatusNoContent}
	}
	p, e := harness.CheckNotification(env.Params, b.cfg.HarnessConfig)
	if e != nil {
		return b.harnessRefuseNotification(c, e.Code, e.Message)
	}
	ev := p.Event
	ev.Source = b.cfg.Source
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	if _, err := b.cfg.Clients.Observation.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: ev})); err != nil {
		ue := b.observeFailed(ctx, err, "harness", env.Method, p.EventType())
		return b.harnessRefuseNotification(c, harnessCodeInternal, "Handler error: "+upstreamErrorText(ue))
	}
	return Reply{HTTPStatus: http.StatusNoContent}
}

// upstreamErrorText words an upstream failure like the reference's AhpError Display.
func upstreamErrorText(ue *upstreamError) string {
	if ue.rejected {
		return "Protocol error: " + ue.message
	}
	return "Transport error: policy backend unavailable (" + ue.failure.String() + ")"
}

// harnessEvent handles an ahp/event request.
func (b *Bridge) harnessEvent(ctx context.Context, c *call, env *jsonrpc.Message, requestID string) Reply {
	p, e := harness.CheckEvent(env.Params, requestID, b.cfg.HarnessConfig)
	if e != nil {
		return harnessCheckFailed(c, e)
	}
	ev := p.Event
	ev.Source = b.cfg.Source
	if harness.UsesTypedDecision(p.EventType()) {
		return b.harnessTyped(ctx, c, p.EventType(), ev)
	}

	d, ue := b.decide(ctx, &ahpv1.InterceptRequest{Event: ev})
	var failure *upstreamError
	if ue != nil {
		if ue.rejected {
			return harnessErrorReply(c.idJSON, harnessCodeInvalidParams, "Invalid event: Protocol error: "+ue.message)
		}
		failure = ue
		d = b.syntheticDecision()
		b.applyPolicy(ue, d.GetDecisionId(), "dialect", "harness", "method", env.Method, "event_type", p.EventType())
	}
	hd := harness.RenderDecision(d, ev)
	if failure != nil {
		b.markHarnessSynthetic(hd, failure.failure)
	}
	out, err := harness.EncodeDecision(hd)
	if err != nil {
		return b.harnessInternal(c, err)
	}
	return harnessResultReply(c.idJSON, out)
}

// harnessInternal answers a failure of the bridge's own encoding, the reference's "Internal
// error" for a result it could not serialize.
func (b *Bridge) harnessInternal(c *call, err error) Reply {
	b.log.Error("bridge: cannot encode an Agent Harness answer", "method", c.method, "error", err)
	return harnessErrorReply(c.idJSON, harnessCodeInternal, "Internal error: "+err.Error())
}

// markHarnessSynthetic adds the failure and the policy to the metadata harness.RenderDecision
// wrote ("dev.ahpgateway/synthetic": true, the decision id). Only allow and block have metadata,
// and a synthetic decision is always one of the two.
func (b *Bridge) markHarnessSynthetic(hd *ahpv1.HarnessDecision, f Failure) {
	var md **structpb.Struct
	switch x := hd.GetDecision().(type) {
	case *ahpv1.HarnessDecision_Allow_:
		md = &x.Allow.Metadata
	case *ahpv1.HarnessDecision_Block_:
		md = &x.Block.Metadata
	default:
		return
	}
	*md = b.syntheticMetadata(*md, f)
}

// harnessBatch handles an ahp/batch request. The whole batch is checked before anything is sent
// upstream (the reference handles entries before a later invalid one; a rejected batch here has
// no side effects), then InterceptBatch decides it; the server turns an evaluation error of one
// entry into {"decision":"block","reason":"Handler error: …"}.
func (b *Bridge) harnessBatch(ctx context.Context, c *call, env *jsonrpc.Message) Reply {
	entries, e := harness.CheckBatch(env.Params, b.cfg.HarnessConfig)
	if e != nil {
		return harnessCheckFailed(c, e)
	}
	events := make([]*ahpv1.Event, len(entries))
	for i, p := range entries {
		p.Event.Source = b.cfg.Source
		events[i] = p.Event
	}
	if len(events) == 0 { // nothing to decide; the reference answers {"decisions":[]} too
		out, err := harness.EncodeBatchResult(nil)
		if err != nil {
			return b.harnessInternal(c, err)
		}
		return harnessResultReply(c.idJSON, out)
	}

	resp, ue := callUpstreamWithin(ctx, b, b.decisionTimeout(), b.cfg.Clients.Intercept.InterceptBatch, &ahpv1.InterceptBatchRequest{Events: events})
	var decisions []*ahpv1.Decision
	if ue == nil {
		decisions = resp.GetDecisions()
		if len(decisions) != len(events) || slicesContainsNil(decisions) {
			ue = badResponse("InterceptBatchResponse does not hold one decision per event")
		}
	}
	rendered := make([]*ahpv1.HarnessDecision, len(events))
	if ue != nil {
		if ue.rejected {
			return harnessErrorReply(c.idJSON, harnessCodeInvalidParams, "Invalid event: Protocol error: "+ue.message)
		}
		d := b.syntheticDecision()
		b.applyPolicy(ue, d.GetDecisionId(), "dialect", "harness", "method", env.Method, "events", len(events))
		for i, ev := range events {
			rendered[i] = harness.RenderDecision(d, ev)
			b.markHarnessSynthetic(rendered[i], ue.failure)
		}
	} else {
		for i, ev := range events {
			rendered[i] = harness.RenderDecision(decisions[i], ev)
		}
	}
	out, err := harness.EncodeBatchResult(rendered)
	if err != nil {
		return b.harnessInternal(c, err)
	}
	return harnessResultReply(c.idJSON, out)
}

func slicesContainsNil(ds []*ahpv1.Decision) bool {
	for _, d := range ds {
		if d == nil {
			return true
		}
	}
	return false
}

// harnessCapabilityNames are advertised by a handshake the bridge answers itself: the reference
// server's list plus the typed events, which the bridge routes to TypedDecisionService.
var harnessCapabilityNames = []string{
	"pre_action", "post_action", "pre_prompt", "query", "batch", "run_lifecycle", "task_list", "verification",
	"idle", "intent_detection", "context_perception", "memory_recall", "planning", "reasoning", "rate_limit", "confirmation",
}

// harnessHandshake handles ahp/handshake. The version rule is the reference's (only the major
// version is compared) and is checked here first, so even "" gets -32000 exactly. The answer is
// the upstream's, with config narrowed to the limits this bridge enforces; when the upstream fails
// operationally the bridge answers itself, whatever the failure policy: a handshake decides
// nothing, and the events that follow still meet the policy.
func (b *Bridge) harnessHandshake(ctx context.Context, c *call, env *jsonrpc.Message) Reply {
	req, e := harness.CheckHandshake(env.Params)
	if e != nil {
		return harnessCheckFailed(c, e)
	}
	if !harnessVersionSupported(req.GetProtocolVersion()) {
		return harnessErrorReply(c.idJSON, harness.CodeVersion, "Unsupported protocol version: "+req.GetProtocolVersion())
	}
	answer, ue := callUpstream(ctx, b, b.cfg.Clients.Harness.Handshake, req)
	if ue == nil {
		answer.Config = narrowConfig(b.cfg.HarnessConfig, answer.GetConfig())
	} else {
		switch {
		case ue.rejected && ue.code == connect.CodeFailedPrecondition:
			return harnessErrorReply(c.idJSON, harness.CodeVersion, versionMessage(ue.message, req.GetProtocolVersion()))
		case ue.rejected:
			return harnessErrorReply(c.idJSON, harnessCodeInvalidParams, "Invalid params: "+ue.message)
		}
		b.count.handshakeFallbacks.Add(1)
		b.count.byFailure[ue.failure].Add(1)
		b.log.Warn("upstream failed; ahp/handshake answered by the bridge",
			"failure", ue.failure.String(), "error", redact(ue.message))
		answer = &ahpv1.HandshakeResponse{
			ProtocolVersion: harness.ProtocolVersion,
			HarnessInfo: &ahpv1.HarnessInfo{
				Name:         "ahp-jsonrpc-bridge",
				Version:      b.cfg.Version,
				Capabilities: append([]string(nil), harnessCapabilityNames...),
			},
			Config: narrowConfig(b.cfg.HarnessConfig, nil),
		}
	}
	out, err := harness.EncodeHandshakeResponse(answer)
	if err != nil {
		return b.harnessInternal(c, err)
	}
	return harnessResultReply(c.idJSON, out)
}

// harnessVersionSupported is the reference's rule: the part before the first dot must equal the
// major of "2.4" ("2", "2.0", "2.99.1" pass; "3.0", "02.4", "" fail).
func harnessVersionSupported(v string) bool {
	major, _, _ := strings.Cut(v, ".")
	want, _, _ := strings.Cut(harness.ProtocolVersion, ".")
	return major == want
}

// versionMessage keeps the exact "Unsupported protocol version: X" from the server's message,
// which the server prefixes with the field name.
func versionMessage(serverMessage, version string) string {
	const text = "Unsupported protocol version: "
	if i := strings.Index(serverMessage, text); i >= 0 {
		return serverMessage[i:]
	}
	return text + version
}

// narrowConfig is the config a handshake advertises: per field the smaller of what the bridge
// enforces and what the server enforces (an unset field is no limit on that side); nil when
// neither limits anything.
func narrowConfig(bridge, server *ahpv1.HarnessConfig) *ahpv1.HarnessConfig {
	if server == nil {
		server = &ahpv1.HarnessConfig{}
	}
	out := &ahpv1.HarnessConfig{
		TimeoutMs: minOptional(bridge.TimeoutMs, server.TimeoutMs),
		BatchSize: minOptional(bridge.BatchSize, server.BatchSize),
	}
	if d := minOptional(u32ptr(bridge.MaxDepth), u32ptr(server.MaxDepth)); d != nil {
		out.MaxDepth = proto.Uint32(uint32(*d))
	}
	if out.TimeoutMs == nil && out.BatchSize == nil && out.MaxDepth == nil {
		return nil
	}
	return out
}

func minOptional(a, b *uint64) *uint64 {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return proto.Uint64(*b)
	case b == nil:
		return proto.Uint64(*a)
	}
	return proto.Uint64(min(*a, *b))
}

func u32ptr(p *uint32) *uint64 {
	if p == nil {
		return nil
	}
	return proto.Uint64(uint64(*p))
}

// harnessQuery handles ahp/query, rendered as the reference's QueryResponse.
func (b *Bridge) harnessQuery(ctx context.Context, c *call, env *jsonrpc.Message) Reply {
	req, e := harness.CheckQuery(env.Params)
	if e != nil {
		return harnessCheckFailed(c, e)
	}
	req.Source = b.cfg.Source
	answer, ue := callUpstream(ctx, b, b.cfg.Clients.Harness.Query, req)
	if ue != nil {
		if ue.rejected {
			return harnessErrorReply(c.idJSON, harnessCodeInvalidParams, "Invalid params: "+ue.message)
		}
		d := b.syntheticDecision()
		b.applyPolicy(ue, d.GetDecisionId(), "dialect", "harness", "method", env.Method)
		answer = b.syntheticQueryAnswer(req, ue.failure)
	}
	out, err := harness.EncodeQueryResponse(answer)
	if err != nil {
		return b.harnessInternal(c, err)
	}
	return harnessResultReply(c.idJSON, out)
}
