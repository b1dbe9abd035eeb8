package mcpproxy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ahp-gateway/ahp/internal/testkit"
)

// BenchmarkToolCall is one tools/call answered by the test MCP server (a process on the SDK,
// over stdio), called by the SDK's client directly and through the proxy with the embedded
// decision core (the tests' policy; the call is allowed and its tool.after recorded). The
// difference is the gateway's cost per call. p50-ns and p99-ns are per call.
func BenchmarkToolCall(b *testing.B) {
	args := map[string]any{"text": "hello"}
	b.Run("direct", func(b *testing.B) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), testServerEnv+"=1", testLogEnv+"="+filepath.Join(b.TempDir(), "calls.log"))
		ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
		defer cancel()
		s, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchCalls(b, s, args)
	})
	b.Run("proxy-embedded", func(b *testing.B) {
		r := newRig(b, rigOptions{clients: embedded(b)})
		benchCalls(b, r.session, args)
	})
}

func benchCalls(b *testing.B, s *mcp.ClientSession, args map[string]any) {
	ctx := context.Background()
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", res, err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}
