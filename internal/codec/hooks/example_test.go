package hooks_test

import (
	"fmt"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
)

// A bridge decodes a hooks/intercept request, asks for a canonical decision and renders it back.
func ExampleDecodeMessage() {
	line := []byte(`{"jsonrpc":"2.0","id":"evt_1","method":"hooks/intercept","params":{"protocolVersion":"0.1",` +
		`"event":{"id":"evt_1","source":"urn:example:harness","type":"tool.before","time":"2026-09-01T10:00:00Z",` +
		`"session":{"id":"s1"},"tool":{"callId":"c1","name":"Bash","kind":"shell","input":{"command":"git push --force"}}},` +
		`"capabilities":{"effects":["deny"]}}}`)
	msg, err := hooks.DecodeMessage(line)
	if err != nil {
		panic(err)
	}
	req := msg.Intercept.Request // what the bridge sends to InterceptService.Intercept
	fmt.Println(req.GetEvent().GetType(), req.GetEvent().GetTool().GetKind())

	decision := &ahpv1.Decision{
		DecisionId: "d-42",
		Effects: []*ahpv1.Effect{{RuleId: "git-1", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{
			Reason: "Force pushes are blocked.", Code: "dev.ahpgateway.git.force_push"}}}},
	}
	out, err := hooks.EncodeMessage(&hooks.Message{
		ID:     msg.ID,
		Result: hooks.RenderResult(decision, msg.Intercept.ProtocolVersion),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// EVENT_TYPE_TOOL_BEFORE TOOL_KIND_SHELL
	// {"id":"evt_1","jsonrpc":"2.0","result":{"effects":[{"code":"dev.ahpgateway.git.force_push","extensions":{"dev.ahpgateway":{"ruleId":"git-1"}},"reason":"Force pushes are blocked.","type":"deny"}],"extensions":{"dev.ahpgateway":{"decisionId":"d-42"}},"protocolVersion":"0.1"}}
}

// A rejected request is answered with the JSON-RPC error the Hooks specification names.
func ExampleErrorResponse() {
	_, err := hooks.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`))
	resp, ok := hooks.ErrorResponse(err)
	if !ok {
		return // a notification or a response: never answered
	}
	out, _ := hooks.EncodeMessage(resp)
	fmt.Println(string(out))
	// Output:
	// {"error":{"code":-32001,"data":{"path":"params.protocolVersion","reason":"unsupported protocol version; supported: 0.1","supported":["0.1"]},"message":"Unsupported protocol version"},"id":7,"jsonrpc":"2.0"}
}
