package bridge_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"google.golang.org/protobuf/types/known/structpb"
)

func itoa(i int) string { return strconv.Itoa(i) }

// The three benchmarks share one shape: a loopback ahp-server over h2c, one event decided per
// iteration by the default policy (an allow). Direct is the typed Connect call alone, so the
// difference to the other two is what the bridge adds: JSON-RPC parsing and validation, the
// conversion to the canonical event, rendering and encoding the answer.
//
// Each iteration uses a new event id: a repeated (source, id, content) would be answered from
// the server's idempotency store and measure less than a real decision.

func benchmarkBridge(b *testing.B, clients bridge.Clients, msg func(i int) []byte) {
	b.Helper()
	br := newBridge(b, clients, nil)
	ctx := context.Background()
	if r := br.Handle(ctx, msg(-1), bridge.TransportStdio); r.Body == nil {
		b.Fatal("no answer")
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	var took []time.Duration
	for b.Loop() {
		i++
		start := time.Now()
		if r := br.Handle(ctx, msg(i), bridge.TransportStdio); len(r.Body) == 0 {
			b.Fatal("no answer")
		}
		took = append(took, time.Since(start))
	}
	reportPercentiles(b, took)
	if c := br.Counters(); c.FailClosed+c.FailOpen > 0 {
		b.Fatalf("upstream failures during the benchmark: %+v", c)
	}
}

// reportPercentiles adds p50 and p99 of the per-message latencies.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}

func hooksBenchMessage(i int) []byte {
	id := "evt-" + itoa(i)
	return []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"` + id +
		`","source":"urn:bench:harness","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1","cwd":"/repo"},"tool":{"callId":"c-` + itoa(i) +
		`","name":"Bash","kind":"shell","input":{"command":"ls -la"}}},"capabilities":{"effects":["deny"]}}}`)
}

func BenchmarkHandleHooksIntercept(b *testing.B) {
	benchmarkBridge(b, upstreamClients(b, startServer(b, nil)), hooksBenchMessage)
}

// BenchmarkHandleHooksInterceptEmbedded is the same with the core in-process (no --upstream).
func BenchmarkHandleHooksInterceptEmbedded(b *testing.B) {
	benchmarkBridge(b, embeddedClients(b), hooksBenchMessage)
}

func BenchmarkHandleHarnessEvent(b *testing.B) {
	benchmarkBridge(b, upstreamClients(b, startServer(b, nil)), func(i int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"req-` + itoa(i) + `","method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"ls -la"}}}}`)
	})
}

func BenchmarkDirectConnectIntercept(b *testing.B) {
	clients := upstreamClients(b, startServer(b, nil))
	ctx := context.Background()
	input, _ := structpb.NewStruct(map[string]any{"command": "ls -la"})
	req := func(i int) *connect.Request[ahpv1.InterceptRequest] {
		return connect.NewRequest(&ahpv1.InterceptRequest{Event: &ahpv1.Event{
			Id:      "evt-" + itoa(i),
			Source:  "urn:bench:harness",
			Type:    ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
			Time:    "2026-08-24T08:51:14Z",
			Session: &ahpv1.Session{Id: "s1", Cwd: "/repo"},
			Tool:    &ahpv1.Tool{CallId: "c-" + itoa(i), Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input},
			Origin:  &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HOOKS, ProtocolVersion: "0.1", EventType: "tool.before"},
		}})
	}
	if _, err := clients.Intercept.Intercept(ctx, req(-1)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		resp, err := clients.Intercept.Intercept(ctx, req(i))
		if err != nil {
			b.Fatal(err)
		}
		if resp.Msg.GetDecision() == nil {
			b.Fatal("an answer without a decision")
		}
	}
}

// instantIntercept answers every Intercept at once with an allow, so a benchmark over it
// measures the dialect layer alone: parsing, validation, conversion, rendering, encoding.
type instantIntercept struct {
	ahpv1connect.InterceptServiceClient
}

func (instantIntercept) Intercept(context.Context, *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return connect.NewResponse(&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{
		DecisionId: "0190b7a4-0000-7000-8000-000000000000", Verdict: ahpv1.Verdict_VERDICT_ALLOW,
	}}), nil
}

// BenchmarkHandleHooksInterceptLocalWork is the bridge's own cost per hooks/intercept.
func BenchmarkHandleHooksInterceptLocalWork(b *testing.B) {
	clients := embeddedClients(b)
	clients.Intercept = instantIntercept{}
	benchmarkBridge(b, clients, hooksBenchMessage)
}

func draftBenchMessage(i int) []byte {
	id := "evt-" + itoa(i)
	return []byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"` + id +
		`","source":"urn:bench:harness","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1","cwd":"/repo"},"call":{"id":"c-` + itoa(i) +
		`"},"tool":{"name":"Bash","kind":"shell","input":{"command":"ls -la"},"origin":"native"},"path":"native"},"capabilities":{"effects":["deny","allow","ask","message"]}}}`)
}

// BenchmarkHandleDraftInterceptEmbedded is BenchmarkHandleHooksInterceptEmbedded for a draft
// hooks/intercept: decode, decide (embedded core, default policy), render within the offer, encode.
func BenchmarkHandleDraftInterceptEmbedded(b *testing.B) {
	benchmarkBridge(b, embeddedClients(b), draftBenchMessage)
}

// BenchmarkHandleDraftInterceptLocalWork is the bridge's own cost per draft hooks/intercept.
func BenchmarkHandleDraftInterceptLocalWork(b *testing.B) {
	clients := embeddedClients(b)
	clients.Intercept = instantIntercept{}
	benchmarkBridge(b, clients, draftBenchMessage)
}
