package ndjson_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
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

// BenchmarkServeRoundTrip is one request and its answer at a time over OS pipes, as a harness
// drives a persistent stdio bridge: the latency the framing adds to every call, hand-offs
// between goroutines included.
func BenchmarkServeRoundTrip(b *testing.B) {
	for _, c := range []struct {
		name        string
		concurrency int
	}{{"Concurrency1", 1}, {"Concurrency4", 4}} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(tt.Request(`"evt_000001"`, "hooks/intercept", `{"pad":"`+strings.Repeat("x", 600)+`"}`) + "\n")
			reply := []byte(`{"jsonrpc":"2.0","id":"evt_000001","result":{"protocolVersion":"0.1","effects":[]}}`)
			h := bridge.HandlerFunc(func(context.Context, []byte, bridge.Transport) bridge.Reply { return bridge.Reply{Body: reply} })
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				done <- ndjson.Serve(context.Background(), inR, outW, h, bridge.TransportStdio, ndjson.Options{Concurrency: c.concurrency})
			}()
			answers := bufio.NewReader(outR)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inW.Write(line); err != nil {
					b.Fatal(err)
				}
				if _, err := answers.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			inW.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			for _, f := range []*os.File{inR, outR, outW} {
				f.Close()
			}
		})
	}
}
