package ndjson_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	tt "github.com/ahp-gateway/ahp/internal/transport/transporttest"
)

// BenchmarkServeFraming is the framing's own cost per message: a typical Hooks-sized request line
// in, a fixed answer line out, with a Handler that does nothing.
func BenchmarkServeFraming(b *testing.B) {
	line := tt.Request(`"evt_000001"`, "hooks/intercept", `{"pad":"`+strings.Repeat("x", 600)+`"}`) + "\n"
	reply := []byte(`{"jsonrpc":"2.0","id":"evt_000001","result":{"protocolVersion":"0.1","effects":[]}}`)
	h := bridge.HandlerFunc(func(context.Context, []byte, bridge.Transport) bridge.Reply { return bridge.Reply{Body: reply} })
	const batch = 1000
	in := []byte(strings.Repeat(line, batch))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		// One Serve per 1000 lines keeps per-stream setup out of the number; ns/op is per batch.
		if err := ndjson.Serve(context.Background(), bytes.NewReader(in), io.Discard, h, bridge.TransportStdio, ndjson.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/msg")
}
