package bridge

import (
	"context"
	"net/http"
	"strconv"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/jsonrpc"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/types/known/structpb"
)

// The Agent Hooks Protocol v0.1 dialect: hooks/intercept, hooks/observe and hooks/capabilities.
// Reading, validation and error objects are internal/codec/hooks's (hooks.DecodeMessage,
// hooks.ErrorResponse, hooks.RenderResult, hooks.EncodeMessage); this file adds the upstream calls
// and the failure policy.
//
// Upstream trouble, precisely (docs/compatibility.md, "ahp-jsonrpc-bridge"):
//
//   - hooks/intercept: to the harness the bridge is the backend, and a backend that answers
//     -32003/-32004 only hands the decision to the harness's own failure policy, which was
//     configured for the bridge, not for the server behind it. So every operational failure
//     (deadline, connection refused/reset, Unavailable, Internal, Unknown, an unreadable answer)
//     is decided here by Config.FailurePolicy: a synthetic deny (fail-closed) or effects []
//     (fail-open), both marked in extensions["dev.ahpgateway"]. An upstream InvalidArgument /
//     FailedPrecondition means the event itself was refused and is answered -32602.
//   - hooks/capabilities has no decision to fall back on: an upstream that cannot be reached or
//     does not answer in time gives -32003 backend_unavailable, one that fails or answers
//     garbage -32004 backend_internal_error.
//   - hooks/observe is a notification and never answered; on HTTP an upstream failure is status
//     500 with no body, as the Agent Hooks Go reference backend does.
//   - A bug in the bridge itself (a recovered panic) answers a request with -32004.

// hooksOKStatus is the HTTP status of an answered Agent Hooks message; errors travel in the body.
const hooksOKStatus = http.StatusOK

func (b *Bridge) handleHooks(ctx context.Context, c *call, msg []byte, env *jsonrpc.Message) Reply {
	if c.transport == TransportStdio || c.transport == TransportUnix {
		if err := hooks.CheckStdioLine(msg); err != nil {
			if env.IsNotification() { // badly framed, but still a notification: never answered
				b.log.Debug("notification not accepted", "dialect", "hooks", "transport", int(c.transport), "reason", "badly framed stdio line")
				return Reply{HTTPStatus: http.StatusBadRequest}
			}
			return b.hooksRejected(err)
		}
	}
	// protocolVersion "0.1" and "draft" are both served, matched exactly; hooks.Decode routes.
	m, err := hooks.Decode(env.Doc, env.Err)
	if err != nil {
		return b.hooksRejected(err)
	}
	c.method = m.Method
	if !m.ID.IsAbsent() {
		c.idJSON = hooksIDJSON(m.ID)
	}
	switch {
	case m.Intercept != nil:
		return b.hooksIntercept(ctx, m)
	case m.Observe != nil:
		return b.hooksObserve(ctx, m)
	case m.Capabilities != nil:
		return b.hooksCapabilities(ctx, m)
	}
	// A well-formed response: a backend has nothing to say to it.
	return Reply{HTTPStatus: http.StatusBadRequest}
}

// hooksRejected answers a message the codec refused, or stays silent when it was a notification
// or a response.
func (b *Bridge) hooksRejected(err error) Reply {
	resp, ok := hooks.ErrorResponse(err)
	if !ok {
		return Reply{HTTPStatus: http.StatusBadRequest}
	}
	return b.hooksReply(resp)
}

// hooksReply encodes an answer. hooks.EncodeMessage checks what it writes; if that fails the
// bridge has a bug, and the request gets -32004 rather than an invalid answer.
func (b *Bridge) hooksReply(m *hooks.Message) Reply {
	body, err := hooks.EncodeMessage(m)
	if err != nil {
		b.log.Error("bridge: refusing to send an invalid Agent Hooks answer", "error", err)
		id := jsonrpc.NullID
		if !m.ID.IsAbsent() && !m.ID.IsNull() {
			id = hooksIDJSON(m.ID)
		}
		return Reply{Body: hooksErrorBody(id, hooksInternalError()), HTTPStatus: hooksOKStatus}
	}
	return Reply{Body: body, HTTPStatus: hooksOKStatus}
}

func (b *Bridge) hooksIntercept(ctx context.Context, m *hooks.Message) Reply {
	params := m.Intercept
	if p := b.resolveAttachments(ctx, params.Request.GetEvent()); p != nil {
		return b.hooksReply(&hooks.Message{ID: m.ID, Error: refError(p)})
	}
	d, ue := b.decide(ctx, params.Request)
	if ue != nil {
		if ue.rejected {
			return b.hooksReply(&hooks.Message{ID: m.ID, Error: hooksRejectedByUpstream(ue)})
		}
		d = b.syntheticDecision()
		b.applyPolicy(ue, d.GetDecisionId(), "dialect", "hooks", "method", m.Method,
			"event_type", params.Request.GetEvent().GetOrigin().GetEventType())
		result := b.renderHooks(d, params)
		b.markHooksSynthetic(result, ue.failure)
		return hooksResultReply(m.ID, result)
	}
	if params.Offer == nil {
		// v0.1: written straight from the decision (the bytes RenderResult and EncodeResult give).
		return Reply{Body: hooks.EncodeDecision(m.ID, d, params.ProtocolVersion), HTTPStatus: hooksOKStatus}
	}
	return hooksResultReply(m.ID, b.renderHooks(d, params))
}

// renderHooks renders a decision in the request's version: v0.1 as deny or nothing, the draft
// within what the request advertised (params.Offer), logging and counting every fallback the
// renderer had to make (they are also labelled in the answer's extensions).
func (b *Bridge) renderHooks(d *ahpv1.Decision, params *hooks.InterceptParams) *ahpv1.HooksInterceptResult {
	if params.Offer == nil {
		return hooks.RenderResult(d, params.ProtocolVersion)
	}
	result, fallbacks := hooks.RenderDraftResult(d, params.Offer)
	for _, f := range fallbacks {
		b.count.draftFallbacks.Add(1)
		b.log.Info("draft answer fell back", "decision_id", d.GetDecisionId(), "rule_id", f.GetRuleId(),
			"event_type", params.Offer.Event, "reason", f.GetReason())
	}
	return result
}

// hooksResultReply writes a result RenderResult built (markHooksSynthetic only adds
// namespace members), which is valid by construction: hooks.FuzzRenderResult holds it to the
// decoder's rules, so it is not checked again here.
func hooksResultReply(id hooks.ID, r *ahpv1.HooksInterceptResult) Reply {
	return Reply{Body: hooks.EncodeResult(id, r), HTTPStatus: hooksOKStatus}
}

// markHooksSynthetic adds the failure and the policy next to the "synthetic": true that
// hooks.RenderResult wrote under extensions["dev.ahpgateway"].
func (b *Bridge) markHooksSynthetic(r *ahpv1.HooksInterceptResult, f Failure) {
	if r.Extensions == nil {
		r.Extensions = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	ns := r.Extensions.Fields[names.Namespace].GetStructValue()
	if ns == nil {
		ns = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		r.Extensions.Fields[names.Namespace] = structpb.NewStructValue(ns)
	}
	ns.Fields["synthetic"] = structpb.NewBoolValue(true)
	ns.Fields[hooksFailureKey] = structpb.NewStringValue(f.String())
	ns.Fields[hooksPolicyKey] = structpb.NewStringValue(b.cfg.FailurePolicy.String())
}

// hooksRejectedByUpstream is the -32602 for an event the upstream refused. Its reason is the
// upstream's message (which names fields, not values) with anything credential-like redacted.
func hooksRejectedByUpstream(ue *upstreamError) *ahpv1.RpcError {
	data, _ := structpb.NewValue(map[string]any{
		"path":   "params.event",
		"reason": "rejected by the policy backend: " + redact(ue.message),
	})
	return &ahpv1.RpcError{Code: hooks.CodeInvalidParams, Message: "Invalid params", Data: data}
}

func (b *Bridge) hooksObserve(ctx context.Context, m *hooks.Message) Reply {
	if p := b.resolveAttachments(ctx, m.Observe.Request.GetEvent()); p != nil {
		// A notification is never answered: it is not recorded, as a malformed one would not be.
		b.log.Debug("notification not accepted", "dialect", "hooks", "path", p.path, "reason", p.reason)
		return Reply{HTTPStatus: http.StatusBadRequest}
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	_, err := b.cfg.Clients.Observation.Observe(ctx, connect.NewRequest(m.Observe.Request))
	if err != nil {
		b.observeFailed(ctx, err, "hooks", m.Method, names.EventTypeName(m.Observe.Request.GetEvent().GetType()))
		return Reply{HTTPStatus: http.StatusInternalServerError}
	}
	return Reply{HTTPStatus: http.StatusNoContent}
}

// observeFailed logs and counts a notification the upstream did not record.
func (b *Bridge) observeFailed(ctx context.Context, err error, dialect, method, eventType string) *upstreamError {
	ue := classify(ctx, err)
	b.count.observeFailures.Add(1)
	attrs := []any{"dialect", dialect, "method", method, "event_type", eventType, "error", redact(ue.message)}
	if ue.rejected {
		b.log.Warn("upstream refused a notification", attrs...)
	} else {
		b.count.byFailure[ue.failure].Add(1)
		b.log.Warn("upstream failed; notification not recorded", append(attrs, "failure", ue.failure.String())...)
		if b.cfg.OnFailure != nil {
			b.cfg.OnFailure(FailureEvent{Dialect: dialect, Failure: ue.failure, Observe: true})
		}
	}
	return ue
}

// hooksIDJSON writes a Hooks id as JSON.
func hooksIDJSON(id hooks.ID) []byte {
	if s, ok := id.StringValue(); ok {
		return jsonwire.AppendString(nil, s)
	}
	if n, ok := id.IntValue(); ok {
		return strconv.AppendInt(nil, n, 10)
	}
	return jsonrpc.NullID
}

func hooksInternalError() *ahpv1.RpcError {
	return &ahpv1.RpcError{Code: hooks.CodeBackendInternalError, Message: "Backend internal error"}
}

// hooksErrorBody writes an error response without the codec, for the paths where the codec
// itself failed.
func hooksErrorBody(idJSON []byte, e *ahpv1.RpcError) []byte {
	return jsonrpc.ErrorResponse(idJSON, int(e.GetCode()), e.GetMessage())
}
