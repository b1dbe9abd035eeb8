package harness_test

import (
	"encoding/json"
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// The checks of an ahp/event request, in the reference server's order, and the JSON-RPC error
// the failing one becomes.
func ExampleCheckEvent() {
	params, err := jsonwire.Parse([]byte(`{"event_type":"idle","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{}}`))
	if err != nil {
		panic(err)
	}
	cfg := &ahpv1.HarnessConfig{MaxDepth: new(uint32(10))}

	p, e := harness.CheckEvent(params, "req-1", cfg)
	if e != nil {
		fmt.Println(e.Code, e.Message)
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
