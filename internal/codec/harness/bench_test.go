package harness_test

import (
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/jsonrpc"
)

// benchEvent is an ahp/event request for a pre_action, as a harness sends it.
var benchEvent = []byte(`{"jsonrpc":"2.0","id":"req-1","method":"ahp/event","params":{"event_type":"pre_action",` +
	`"session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,` +
	`"payload":{"tool_name":"bash","arguments":{"command":"ls -la"}}}}`)

// BenchmarkDecodeEvent reads an ahp/event request from its bytes to the canonical event, as the
// bridge does: the envelope once (jsonrpc.Read), then the reference's checks (CheckEvent).
func BenchmarkDecodeEvent(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEvent)))
	for b.Loop() {
		m := jsonrpc.Read(benchEvent)
		p, e := harness.CheckEvent(m.Params, "req-1", nil)
		if e != nil || p.Event == nil {
			b.Fatalf("CheckEvent: %v", e)
		}
	}
}
