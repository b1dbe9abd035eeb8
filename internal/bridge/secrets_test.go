package bridge_test

import (
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/bridge"
)

// TestErrorsDoNotEchoSecrets puts credential-looking values where validation fails, in both
// dialects, and checks that no answer carries them. The Agent Harness reference would echo some
// of them (serde prints the offending value); the bridge keeps its wording but redacts them.
func TestErrorsDoNotEchoSecrets(t *testing.T) {
	t.Parallel()
	secrets := []string{
		"sk-live-4f9a8b7c6d5e4f3a2b1c0d9e",
		"ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0000",
		"AKIAIOSFODNN7EXAMPLE",
		"4111111111111111",
		"Bearer abc",
		"dGhpcyBpcyBhIHNlY3JldCBrZXkgMTIzNDU2Nzg5MA",
	}
	b := newBridge(t, embeddedClients(t), nil)
	for _, secret := range secrets {
		q := `"` + strings.ReplaceAll(secret, `"`, `\"`) + `"`
		harness := []struct {
			msg, wantPrefix string
		}{
			{`{"jsonrpc":"2.0","id":"s","method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":` + q + `,"payload":null}}`,
				`Invalid params: invalid type: string `},
			{`{"jsonrpc":"2.0","id":"s","method":"ahp/event","params":{"event_type":` + q + `,"session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":null}}`,
				`Invalid params: unknown variant `},
			{`{"jsonrpc":"2.0","id":"s","method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":null,"context":` + q + `}}`,
				`Invalid params: invalid type: string `},
			{`{"jsonrpc":"2.0","id":"s","method":"ahp/event","params":{"event_type":"rate_limit","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"session_id":"s1","limit_type":` + q + `,"retry_after_ms":1,"current_usage":"x"}}}`,
				`Handler error: Serialization error: `},
			{`{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"task_list","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"run_id":"r","session_id":"s1","tasks":[{"id":"t","title":"x","status":` + q + `}],"updated_at":"t"}}}`,
				`Handler error: Serialization error: unknown variant `},
		}
		for _, c := range harness {
			reply := handle(t, b, c.msg, bridge.TransportHTTP)
			resp := decodeReply(t, reply)
			if resp.Error == nil {
				t.Errorf("%s: a result, want an error: %s", secret, reply.Body)
				continue
			}
			if !strings.HasPrefix(resp.Error.Message, c.wantPrefix) {
				t.Errorf("%s: message %q, want it to begin %q", secret, resp.Error.Message, c.wantPrefix)
			}
			for _, part := range strings.Fields(secret) {
				if len(part) > 6 && strings.Contains(string(reply.Body), part) {
					t.Errorf("the answer echoes %q:\n%s", secret, reply.Body)
				}
			}
			if !strings.Contains(resp.Error.Message, "<redacted>") && !strings.Contains(resp.Error.Message, "expected") {
				t.Errorf("%s: %s", secret, resp.Error.Message)
			}
		}

		hooks := []string{
			strings.Replace(hooksIntercept("ls"), `"kind":"shell"`, `"kind":`+q, 1),
			strings.Replace(hooksIntercept("ls"), `"time":"2026-08-24T08:51:14Z"`, `"time":`+q, 1),
			strings.Replace(hooksIntercept("ls"), `"protocolVersion":"0.1"`, `"protocolVersion":`+q, 1),
		}
		for _, msg := range hooks {
			reply := handle(t, b, msg, bridge.TransportHTTP)
			decodeReply(t, reply)
			for _, part := range strings.Fields(secret) {
				if len(part) > 6 && strings.Contains(string(reply.Body), part) {
					t.Errorf("the answer echoes %q:\n%s", secret, reply.Body)
				}
			}
		}
	}
}

// TestRedactionKeepsTheReferenceWording checks that ordinary values are still echoed, exactly
// as the reference does (the error vectors cover many more).
func TestRedactionKeepsTheReferenceWording(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), nil)
	msg := `{"jsonrpc":"2.0","id":"s","method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":"12","payload":null}}`
	wantError(t, handle(t, b, msg, bridge.TransportStdio), `"s"`, -32602, `Invalid params: invalid type: string "12", expected u32`)
}
