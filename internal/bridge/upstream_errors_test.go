package bridge_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// refusingServer is an upstream whose every answer is a proper Connect error response, or a
// decision the bridge must make sense of. Only the intercept, typed and harness services are
// mounted; observation is missing, like on an older or misconfigured server.
type refusingServer struct {
	ahpv1connect.UnimplementedInterceptServiceHandler
	ahpv1connect.UnimplementedTypedDecisionServiceHandler
	ahpv1connect.UnimplementedHarnessServiceHandler
}

func (refusingServer) Intercept(context.Context, *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("event.tool.input: must not hold sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"))
}

func (refusingServer) InterceptBatch(context.Context, *connect.Request[ahpv1.InterceptBatchRequest]) (*connect.Response[ahpv1.InterceptBatchResponse], error) {
	return connect.NewResponse(&ahpv1.InterceptBatchResponse{}), nil // no decisions at all
}

func (refusingServer) Handshake(context.Context, *connect.Request[ahpv1.HandshakeRequest]) (*connect.Response[ahpv1.HandshakeResponse], error) {
	return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("protocol_version: Unsupported protocol version: 2.4"))
}

func (refusingServer) Query(context.Context, *connect.Request[ahpv1.QueryRequest]) (*connect.Response[ahpv1.QueryResponse], error) {
	return nil, connect.NewError(connect.CodeInternal, errors.New("policy engine exploded"))
}

// Plan answers with a decision that has neither a typed answer nor an effect.
func (refusingServer) Plan(context.Context, *connect.Request[ahpv1.PlanRequest]) (*connect.Response[ahpv1.PlanResponse], error) {
	return connect.NewResponse(&ahpv1.PlanResponse{Decision: &ahpv1.Decision{DecisionId: "d1", Verdict: ahpv1.Verdict_VERDICT_ALLOW}}), nil
}

func startRefusing(t *testing.T) string {
	mux := http.NewServeMux()
	var s refusingServer
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(s))
	mux.Handle(ahpv1connect.NewTypedDecisionServiceHandler(s))
	mux.Handle(ahpv1connect.NewHarnessServiceHandler(s))
	return startHTTP(t, mux)
}

// TestUpstreamRefusalsAreTheCallersErrors checks how answers that are not decisions map: a
// refused request is the caller's error (-32602, -32000), everything else is an operational
// failure for the failure policy.
func TestUpstreamRefusalsAreTheCallersErrors(t *testing.T) {
	t.Parallel()
	b := newBridge(t, upstreamClients(t, startRefusing(t)), nil)

	resp := wantError(t, handle(t, b, hooksIntercept("ls"), bridge.TransportStdio), `"evt-1"`, -32602, "Invalid params")
	if want := `{"path":"params.event","reason":"rejected by the policy backend: event.tool.input: must not hold <redacted>"}`; !testkit.SameJSON(t, resp.Error.Data, []byte(want)) {
		t.Errorf("data %s\nwant %s", resp.Error.Data, want)
	}
	wantError(t, handle(t, b, harnessEvent(`"e"`, "ls"), bridge.TransportStdio), `"e"`, -32602,
		"Invalid event: Protocol error: event.tool.input: must not hold <redacted>")

	handshake := `{"jsonrpc":"2.0","id":"h","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"f","version":"1","capabilities":[]},"session_id":"s","agent_id":"a"}}`
	wantError(t, handle(t, b, handshake, bridge.TransportStdio), `"h"`, -32000, "Unsupported protocol version: 2.4")

	// An Internal error is operational: the failure policy answers.
	query := `{"jsonrpc":"2.0","id":"q","method":"ahp/query","params":{"session_id":"s","agent_id":"a","query_type":"should_i_proceed","payload":{}}}`
	if got := string(envelopeOf(t, handle(t, b, query, bridge.TransportStdio), `"q"`)); got != `{"answer":false,"reason":"Required policy backend unavailable."}` {
		t.Errorf("query: %s", got)
	}
	// A batch answer without one decision per event is unreadable.
	batch := `{"jsonrpc":"2.0","id":"b","method":"ahp/batch","params":{"events":[{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":null}]}}`
	if got := blankIDs(envelopeOf(t, handle(t, b, batch, bridge.TransportStdio), `"b"`)); !strings.Contains(got, `"dev.ahpgateway/failure":"bad_response"`) {
		t.Errorf("batch: %s", got)
	}
	// A typed decision that answers nothing is the reference's "not supported".
	planning, _ := readExchange(t, "planning")
	wantError(t, handle(t, b, string(planning), bridge.TransportStdio), `"req-planning"`, -32603, "Handler error: Capability not supported: Planning not supported")
	// A service the upstream does not serve is an operational failure, not the caller's error.
	observe := `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"session_end","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{}}}`
	wantError(t, handle(t, b, observe, bridge.TransportHTTP), `""`, -32603, "Handler error: Transport error: policy backend unavailable (backend_error)")
}

// TestHarnessEventTypesReachTheirService covers the generic-decision types besides pre_action
// and the configured source.
func TestHarnessEventTypesReachTheirService(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), func(c *bridge.Config) { c.Source = "urn:ahp-jsonrpc-bridge:test" })
	for _, eventType := range []string{"pre_prompt", "handshake", "query"} {
		msg := `{"jsonrpc":"2.0","id":"` + eventType + `","method":"ahp/event","params":{"event_type":"` + eventType + `","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"prompt":"hello"}}}`
		got := blankIDs(envelopeOf(t, handle(t, b, msg, bridge.TransportStdio), `"`+eventType+`"`))
		if !strings.HasPrefix(got, `{"decision":"allow"`) {
			t.Errorf("%s: %s", eventType, got)
		}
	}
	notification := `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"run_lifecycle","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"run_id":"r1","session_id":"s1","status":"executing","updated_at":"t"}}}`
	wantNoReply(t, handle(t, b, notification, bridge.TransportHTTP), http.StatusNoContent)
}

// TestPinnedDialectsAnswerTheOtherDialectsMethodsAsUnknown checks --dialect.
func TestPinnedDialectsAnswerTheOtherDialectsMethodsAsUnknown(t *testing.T) {
	t.Parallel()
	clients := embeddedClients(t)
	hooks := newBridge(t, clients, func(c *bridge.Config) { c.Dialect = bridge.DialectHooks })
	resp := wantError(t, handle(t, hooks, harnessEvent(`"e"`, "ls"), bridge.TransportStdio), `"e"`, -32601, "Method not found")
	if !strings.Contains(string(resp.Error.Data), "hooks/intercept") {
		t.Errorf("a Hooks -32601 names the methods: %s", resp.Error.Data)
	}
	auto := newBridge(t, clients, nil)
	wantError(t, handle(t, auto, `{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{}}`, bridge.TransportStdio), `"e"`, -32601, "Method not found")
	// In auto mode the method decides however it is written...
	wantError(t, handle(t, auto, `{"jsonrpc":"2.0","id":"e","method":"\u0061hp\/handshake","params":{}}`, bridge.TransportStdio), `"e"`, -32602, "Invalid params: missing field `protocol_version`")
	// ... and only the exact member name "method" counts.
	wantError(t, handle(t, auto, `{"jsonrpc":"2.0","id":"e","METHOD":"ahp/event","params":{}}`, bridge.TransportStdio), `"e"`, -32600, "")
}
