package harness_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// The checks of an ahp/event request, in the reference server's order, and the JSON-RPC error
// each failure becomes.
func ExampleReadEvent() {
	dec := json.NewDecoder(bytes.NewReader([]byte(`{"event_type":"idle","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{}}`)))
	dec.UseNumber() // keep number text: 1.0 is not an integer to serde
	var params any
	if err := dec.Decode(&params); err != nil {
		panic(err)
	}
	cfg := &ahpv1.HarnessConfig{MaxDepth: new(uint32(10))}

	p, err := harness.ReadEvent("params", params, "req-1")
	if err != nil {
		fmt.Println(-32602, "Invalid params: "+err.(*jsonwire.FieldError).Message)
		return
	}
	if err := p.ValidateShape(cfg); err != nil {
		fmt.Println(-32602, "Invalid event: "+err.(*jsonwire.FieldError).Message)
		return
	}
	if err := p.CheckDelivery(false); err != nil {
		fmt.Println(-32602, err.(*jsonwire.FieldError).Message)
		return
	}
	if err := p.ParseTypedPayload(); err != nil {
		fmt.Println(-32603, "Handler error: "+err.(*jsonwire.FieldError).Message)
		return
	}
	fmt.Println("handle", p.Event.GetType())
	// Output: -32603 Handler error: Serialization error: missing field `idle_duration_ms`
}

// A canonical denial rendered for a Harness pre_action: a block, with the decision id and the
// matched rules in namespaced metadata.
func ExampleRenderDecision() {
	params := map[string]any{
		"event_type": "pre_action", "session_id": "s1", "agent_id": "a1", "timestamp": "t", "depth": json.Number("0"),
		"payload": map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "rm -rf /tmp/x"}, "action_type": "tool_call"},
	}
	ev, err := harness.DecodeEvent("params", params, "req-1")
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.GetType(), ev.GetTool().GetName(), ev.GetTool().GetKind())

	deny := &ahpv1.Decision{
		DecisionId:     "0192f0c4-decision",
		MatchedRuleIds: []string{"no-rm-rf"},
		Effects:        []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "rm -rf is not allowed"}}}},
	}
	out, err := harness.EncodeDecision(harness.RenderDecision(deny, ev))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// EVENT_TYPE_TOOL_BEFORE bash TOOL_KIND_SHELL
	// {"decision":"block","metadata":{"dev.ahpgateway/decision_id":"0192f0c4-decision","dev.ahpgateway/rule_ids":["no-rm-rf"]},"reason":"rm -rf is not allowed"}
}
