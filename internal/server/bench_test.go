package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// fiftyRules is a realistic 50-rule policy: a mix of kind/name matches, regexes over the command,
// path checks and session conditions, none of which matches the benchmark's "ls -la".
func fiftyRules() string {
	var b strings.Builder
	b.WriteString("version: 1\nname: bench-50\nrules:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "  - id: rule-%02d\n    on: [tool.before]\n", i)
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "    match: {tool_kinds: [shell]}\n    when: 'has(input.command) && input.command.matches(\"\\\\bforbidden%d\\\\b\")'\n", i)
		case 1:
			fmt.Fprintf(&b, "    match: {tool_names: [\"Tool%d*\"]}\n", i)
		case 2:
			fmt.Fprintf(&b, "    match: {tool_kinds: [file_write, file_edit]}\n    when: 'has(input.path) && input.path.endsWith(\".secret%d\")'\n", i)
		case 3:
			fmt.Fprintf(&b, "    when: 'session.error_count > %d && tool.name == \"never%d\"'\n", 1000+i, i)
		case 4:
			fmt.Fprintf(&b, "    when: 'has(input.command) && input.command.startsWith(\"sudo \") && input.command.contains(\"x%d\")'\n", i)
		}
		fmt.Fprintf(&b, "    effect: {deny: {reason: \"rule %d\"}}\n", i)
	}
	return b.String()
}

type noopIntercept struct {
	ahpv1connect.UnimplementedInterceptServiceHandler
}

func (noopIntercept) Intercept(context.Context, *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return connect.NewResponse(&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}}), nil
}

// loopback serves hs on a loopback port and returns a client for it.
func loopback(b *testing.B, hs *http.Server) ahpv1connect.InterceptServiceClient {
	return ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), testkit.ServeLoopback(b, hs))
}

func runIntercepts(b *testing.B, client ahpv1connect.InterceptServiceClient) {
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		// A fresh event id each time, so the idempotency store never short-circuits evaluation.
		i++
		ev := testkit.ShellEvent(fmt.Sprintf("bench-%d", i), "ls -la")
		if _, err := client.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInterceptLoopback50Rules is a full ahp-server (validation, 50-rule CEL policy, session
// memory, idempotency, watch hub) over h2c on loopback. Compare with BenchmarkInterceptLoopbackNoop.
func BenchmarkInterceptLoopback50Rules(b *testing.B) {
	file := filepath.Join(b.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(fiftyRules()), 0o600); err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{PolicyFile: file, Logger: testkit.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(srv.Policy().Rules()); n != 50 {
		b.Fatalf("policy has %d rules", n)
	}
	runIntercepts(b, loopback(b, srv.HTTPServer()))
}

// BenchmarkInterceptLoopbackNoop is the same transport and client against a handler that answers
// at once: the baseline for the 1.25x goal.
func BenchmarkInterceptLoopbackNoop(b *testing.B) {
	srv, err := server.New(server.Config{Logger: testkit.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(noopIntercept{}))
	hs := srv.HTTPServer() // the production server settings, with the no-op handler
	hs.Handler = mux
	runIntercepts(b, loopback(b, hs))
}

// BenchmarkInterceptAudit is the default policy over h2c on loopback, 32 concurrent callers,
// without an audit log, with an optional one (fsync interval) and with a required one under
// fsync always, where each answer waits for its record's write and sync: group commit makes that
// one write and one fsync per batch of waiting decisions.
func BenchmarkInterceptAudit(b *testing.B) {
	for _, bc := range []struct {
		name     string
		audit    bool
		required bool
		fsync    audit.FsyncMode
	}{
		{name: "off"},
		{name: "optional-interval", audit: true, fsync: audit.FsyncInterval},
		{name: "required-interval", audit: true, required: true, fsync: audit.FsyncInterval},
		{name: "required-always", audit: true, required: true, fsync: audit.FsyncAlways},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := server.Config{Logger: testkit.Discard()}
			if bc.audit {
				l, err := audit.Open(audit.Config{Dir: b.TempDir(), Required: bc.required, Fsync: bc.fsync, Logger: testkit.Discard()})
				if err != nil {
					b.Fatal(err)
				}
				cfg.Audit = l
				b.Cleanup(func() { _ = l.Close(context.Background()) })
			}
			srv, err := server.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			client := loopback(b, srv.HTTPServer())
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(16) // 32 callers on 2 CPUs
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					ev := testkit.ShellEvent(fmt.Sprintf("bench-%d", n.Add(1)), "ls -la")
					resp, err := client.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
					if err != nil {
						b.Fatal(err)
					}
					if resp.Msg.GetDecision().GetSynthetic() {
						b.Fatal("synthetic decision: the audit log failed")
					}
				}
			})
			b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "decisions/s")
		})
	}
}
