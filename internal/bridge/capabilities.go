package bridge

import (
	"context"
	"slices"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/jsonrpc"
	"github.com/ahp-gateway/ahp/internal/names"
)

// hooks/capabilities is a "draft" addition to the Agent Hooks Protocol; v0.1 has no discovery.
// The bridge answers it with a manifest in the draft's shape, holding only what it can state
// truthfully for v0.1:
//
//	{"protocolVersion": "0.1", "manifest": {
//	   "events": [{"event": "tool.before", "modes": ["intercept", "observe"],
//	               "capabilities": {"effects": ["deny"]}},
//	              {"event": "tool.after", "modes": ["observe"], "capabilities": {"effects": []}}, ...],
//	   "transports": ["stdio", "http"],
//	   "extensions": {"dev.ahpgateway": {"bridgeVersion", "serverVersion",
//	                  "hooksProtocolVersions", "harnessProtocolVersion", "failurePolicy", "timeoutMs"}}}}
//
// events are the five v0.1 events the upstream serves (asked with HarnessService.GetCapabilities),
// in the order the v0.1 text lists them; only tool.before can be intercepted in v0.1, and only
// deny can be expressed. The draft's other manifest
// members (gaps, authentication, toolPaths, contentCategories, limits, managedPolicy,
// correlationIdentityFields) describe draft features this bridge does not serve, so they are left
// out rather than filled with guesses.

// hooksV01Events are the five Agent Hooks Protocol v0.1 events, in the specification's order.
var hooksV01Events = []ahpv1.EventType{
	ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
	ahpv1.EventType_EVENT_TYPE_TOOL_AFTER,
	ahpv1.EventType_EVENT_TYPE_TOOL_ERROR,
	ahpv1.EventType_EVENT_TYPE_SESSION_START,
	ahpv1.EventType_EVENT_TYPE_SESSION_END,
}

func (b *Bridge) hooksCapabilities(ctx context.Context, m *hooks.Message) Reply {
	caps, ue := callUpstream(ctx, b, b.cfg.Clients.Harness.GetCapabilities, &ahpv1.GetCapabilitiesRequest{})
	if ue != nil {
		code, message := hooks.CodeBackendUnavailable, "Backend unavailable"
		if ue.rejected || ue.failure == FailureBackendError || ue.failure == FailureBadResponse {
			code, message = hooks.CodeBackendInternalError, "Backend internal error"
		}
		if !ue.rejected {
			b.count.byFailure[ue.failure].Add(1)
		}
		b.log.Warn("upstream failed; hooks/capabilities answered with an error",
			"code", code, "failure", ue.failure.String(), "error", redact(ue.message))
		return b.hooksReply(&hooks.Message{ID: m.ID, Error: &ahpv1.RpcError{Code: int32(code), Message: message}})
	}
	if hooks.Version(m.Capabilities.ProtocolVersion) == hooks.Draft {
		return b.hooksDiscoveryReply(m, caps, b.draftManifest(caps))
	}
	events := make([]any, 0, len(hooksV01Events))
	for _, t := range hooksV01Events {
		modes := []any{}
		effects := []any{}
		// v0.1 intercepts tool.before only, whatever else the server could decide.
		if t == ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE && slices.Contains(caps.GetInterceptableEventTypes(), t) {
			modes = append(modes, "intercept")
			effects = append(effects, "deny")
		}
		if slices.Contains(caps.GetObservableEventTypes(), t) {
			modes = append(modes, "observe")
		}
		if len(modes) == 0 {
			continue
		}
		events = append(events, map[string]any{
			"event":        names.EventTypeName(t),
			"modes":        modes,
			"capabilities": map[string]any{"effects": effects},
		})
	}
	transports := make([]any, len(b.cfg.HooksTransports))
	for i, t := range b.cfg.HooksTransports {
		transports[i] = t
	}
	return b.hooksDiscoveryReply(m, caps, map[string]any{"events": events, "transports": transports})
}

// hooksDiscoveryReply answers hooks/capabilities with manifest plus the project's extension block.
func (b *Bridge) hooksDiscoveryReply(m *hooks.Message, caps *ahpv1.GetCapabilitiesResponse, manifest map[string]any) Reply {
	hooksVersions := make([]any, len(caps.GetHooksProtocolVersions()))
	for i, v := range caps.GetHooksProtocolVersions() {
		hooksVersions[i] = v
	}
	manifest["extensions"] = map[string]any{names.Namespace: map[string]any{
		"bridgeVersion":          b.cfg.Version,
		"serverVersion":          caps.GetServerVersion(),
		"hooksProtocolVersions":  hooksVersions,
		"harnessProtocolVersion": caps.GetHarnessProtocolVersion(),
		"failurePolicy":          b.cfg.FailurePolicy.String(),
		"timeoutMs":              b.cfg.Timeout.Milliseconds(),
	}}
	result := map[string]any{"protocolVersion": m.Capabilities.ProtocolVersion, "manifest": manifest}
	raw, err := jsonwire.Marshal(result)
	if err != nil { // plain JSON values always marshal
		return Reply{Body: hooksErrorBody(hooksIDJSON(m.ID), hooksInternalError()), HTTPStatus: hooksOKStatus}
	}
	return Reply{Body: jsonrpc.ResultResponse(hooksIDJSON(m.ID), raw), HTTPStatus: hooksOKStatus}
}
