// Command ahp-bench measures AHP on this machine: throughput and latency of ahp-server's
// Intercept (unary and streaming) and ObserveStream, and of ahp-jsonrpc-bridge on stdio and HTTP,
// each optionally against a no-op baseline on the same transport. Every answer is checked, it only
// ever talks to loopback addresses, and it stops by itself.
//
//	ahp-bench --mode intercept --duration 10s --baseline      Intercept vs the no-op handler
//	ahp-bench --mode bridge-stdio --baseline-mode intercept   the bridge vs a direct Connect call
//	ahp-bench --mode bridge-stdio --once --requests 200       per_event start-and-answer
//	ahp-bench --mode observe-stream --concurrency 4 --json    ObserveStream ingest
//	ahp-bench --mode observe-stream --batch 100 --audit       ingest in batches, audit log on
//	ahp-bench --mode intercept --watchers 100 --baseline-watchers 0 --rounds 10
//	                                                          Intercept with 100 Watch subscribers vs none
//	ahp-bench compare --targets opa,intercept,bridge-http --rate 2000 --svg cmp.svg
//	                                                          ahp-server side by side with OPA (compare.go)
//	ahp-bench gen-policies --rules 50                         the comparison's CEL and Rego policies
//
// This file only parses flags; the load engine is internal/bench.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
	"github.com/ahp-gateway/ahp/internal/cli"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

const usageHead = `Usage: ahp-bench [flags]

       ahp-bench compare [flags]        ahp-server side by side with OPA (ahp-bench compare -help)
       ahp-bench gen-policies [flags]   write the comparison's CEL and Rego policies

Puts load on AHP and reports throughput, p50/p90/p99/p99.9 latency, errors and count, as a table
or (--json) as JSON. Every answer is checked: the generated tool calls alternate "ls -la", which
the built-in policy allows, and "rm -rf /", which it denies; a wrong or synthetic answer, a failed
call, or (observe-stream) an accepted count that differs from the events sent counts as an error,
and the exit status is 1 when there was any.

Modes:
  intercept          unary InterceptService.Intercept
  intercept-stream   InterceptService.InterceptStream: one bidi stream, answers matched by event id
  observe-stream     ObservationService.ObserveStream: one client stream per worker; reports events/s
                     (--batch N: N events per message)
  bridge-stdio       hooks/intercept NDJSON lines to a spawned ahp-jsonrpc-bridge (with --once: one
                     process per request, the per_event lifecycle)
  bridge-http        hooks/intercept POSTs to a spawned ahp-jsonrpc-bridge --http 127.0.0.1:0
  noop, noop:MODE    MODE (default intercept) against no-op handlers that answer at once: Connect
                     handlers in-process, or, for bridge modes, the bridge pointed at them

By default an in-process ahp-server on 127.0.0.1:0 serves the built-in 50-rule policy (the default
policy plus 41 rules that never match); --target uses a running one instead (loopback only);
--server-process starts ahp-server as a child process, as it runs in a deployment: a direct
Connect call then crosses a process boundary just as the bridge does, whereas a client in the
server's own process is answered without waking another process. Compare the bridge with a direct
call that way:
  ahp-bench --mode bridge-stdio --baseline-mode intercept --server-process --duration 20s --rounds 10
With --rate the load is open-loop: latency counts from when each request was due, so a stall is
not hidden by sending less (coordinated omission).

Watch subscribers: --watchers N connects N ObservationService.Watch streams to the ahp-server
(in-process or --target) before every phase of the mode and closes them after it, each on its own
HTTP/2 connection with the same client protocol, draining its stream. Every subscriber must
receive each decision (observe-stream: each event) answered while it was subscribed, once, within
--watch-filter and with the right verdict; a dropped item, or a stream the server ends early (the
hub cuts off a subscriber that falls behind), is an error. The table gets a "Watch ×N" row: items
received, items missing, items/s, and latency from the server's publish time to receipt. The
subscribers run inside ahp-bench, on the cores the server uses, and decode only the fields they
check, so that as little as possible of their own work is charged to the server.
--watch-connections K puts the subscribers on K shared HTTP/2 connections instead (1: all streams
on one, as a single client process would make them). --watch-as-console subscribes as the web
console's page does instead: GET /ui/api/recent, then Watch with JSON over HTTP/1.1, one
connection each, with an Origin header, and the page's flush interval (WatchRequest
flush_interval_ms 250: the server writes to each console at most four times a second;
--watch-flush-interval sets another, -1ms none); each item is checked without decoding it in full.
--watchers-process runs the subscribers in a child process ("ahp-bench watchers", which speaks
only to its parent over its standard input and output) instead of in ahp-bench's own, as watchers
on other machines would not share the load's runtime; on a machine with few cores they still take
CPU from the server and the load.
--baseline-watchers M runs the same mode on the same server with M subscribers as the baseline
(or sets those of --baseline-mode), so that one invocation gives the ratio of the p50s:
  ahp-bench --mode intercept --watchers 100 --baseline-watchers 0 --duration 10s --rounds 10

Flags:
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "gen-policies":
			return runGenPolicies(args[1:], stdout, stderr, getenv)
		case "compare":
			return runCompare(ctx, args[1:], stdout, stderr, getenv)
		case "watchers": // the child of --watchers-process
			if err := bench.ServeWatchers(ctx, os.Stdin, stdout); err != nil {
				fmt.Fprintf(stderr, "ahp-bench watchers: %v\n", err)
				return 1
			}
			return 0
		}
	}
	fs := cli.NewFlags("ahp-bench", stderr, getenv, usageHead)
	mode := fs.String("mode", bench.ModeIntercept, "what to measure: "+strings.Join(bench.Transports, ", ")+", noop or noop:MODE", "")
	concurrency := fs.Int("concurrency", 1, "workers, each with one request in flight (observe-stream: one stream each)", "")
	duration := fs.Duration("duration", 0, "how long to measure (default 10s unless -requests is given; with both, whichever ends first)", "")
	requests := fs.Uint64("requests", 0, "how many requests (events) to measure", "")
	rate := fs.Float64("rate", 0, "fixed arrival rate in requests per second across all workers (open loop); 0 sends as fast as answers come back", "")
	batch := fs.Int("batch", 0, "observe-stream modes: events per ObserveStream message (up to 1000; 0 or 1: one each)", "")
	payload := fs.Int("payload-bytes", 0, "size of each tool input as JSON: the command padded with a description field (0: the bare command)", "")
	baseline := fs.Bool("baseline", false, "also run the matching noop mode (noop:MODE) and report the ratio of the p50 latencies", "")
	baselineMode := fs.String("baseline-mode", "", "run this mode as the baseline instead, e.g. intercept for the bridge against a direct Connect call (implies -baseline)", "")
	rounds := fs.Int("rounds", 1, "split the measurement into this many slices, alternating the mode and the baseline so both see the same machine load", "")
	warmup := fs.Duration("warmup", time.Second, "unmeasured warm-up per mode before measuring", "")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout; a request that takes longer is an error", "")
	policyFile := fs.String("policy", "", "policy YAML for the in-process ahp-server (and -bridge-embedded); empty uses the built-in 50-rule policy. Verdicts are then checked for consistency only", "")
	auditOn := fs.Bool("audit", false, "turn on the in-process ahp-server's audit log (required mode); afterwards verify its hash chain and that it holds one record per decision and accepted observation", "")
	auditPath := fs.String("audit-path", "", "keep the audit log at this file instead of a temporary directory (implies -audit)", "")
	auditFsync := fs.String("audit-fsync", "", "audit durability: always, interval or never (default interval, as ahp-server; implies -audit)", "")
	target := fs.String("target", "", "use the ahp-server at this URL (http://127.0.0.1:PORT; loopback only) instead of starting one", "")
	protocol := fs.String("protocol", "connect", "client protocol for the Connect modes: connect, grpc or grpcweb", "")
	jsonCodec := fs.Bool("connect-json", false, "Connect modes: the client sends and reads JSON (connect.WithProtoJSON) instead of binary protobuf", "")
	acceptGzip := fs.Bool("accept-gzip", true, "Connect modes: accept gzip-compressed answers, as connect-go clients do by default (the server then compresses them); -accept-gzip=false measures without", "")
	serverProcess := fs.Bool("server-process", false, "run ahp-server as a child process (loopback, the same policy and audit settings) instead of in-process", "")
	natsURL := fs.String("nats", "", "run the ahp-server process in cluster mode on these NATS servers (implies -server-process): compare with a run without it to see what the shared stores cost (docs/performance.md)", "")
	serverBin := fs.String("server-bin", "", "ahp-server binary for -server-process; empty builds it with the go command into a temporary directory", "AHP_SERVER_BIN")
	bridgeBin := fs.String("bridge-bin", "", "ahp-jsonrpc-bridge binary for the bridge modes; empty builds it with the go command into a temporary directory", "AHP_BRIDGE_BIN")
	once := fs.Bool("once", false, "bridge-stdio: start one ahp-jsonrpc-bridge --once process per request (per_event) instead of one persistent process", "")
	embedded := fs.Bool("bridge-embedded", false, "bridge modes: run the bridge's embedded decision core (with -policy) instead of pointing it at ahp-server", "")
	watchers := fs.Int("watchers", 0, "Watch subscribers on the ahp-server during each phase of the mode, each on its own connection; each must receive every decision (observe-stream: event) answered while it was subscribed", "")
	baselineWatchers := fs.Int("baseline-watchers", -1, "Watch subscribers during the baseline's phases; without -baseline or -baseline-mode the baseline is the same mode on the same server (e.g. -watchers 100 -baseline-watchers 0); -1 leaves the baseline as it is", "")
	watchConns := fs.Int("watch-connections", 0, "HTTP/2 connections the Watch subscribers share, round robin: 0 gives each its own (independent clients), 1 puts all on one (the streams of one client process, as Connect and gRPC clients multiplex them)", "")
	watchAsConsole := fs.Bool("watch-as-console", false, "the Watch subscribers subscribe as the web console's page does: ask the console for its recent items (which keeps the server's console recording), then Watch with Connect JSON over HTTP/1.1, one connection each, with an Origin header (ten open consoles: --watchers 10 --watch-as-console)", "")
	watchFlush := fs.Duration("watch-flush-interval", 0, "with -watch-as-console: the flush interval the subscribers ask Watch for (WatchRequest.flush_interval_ms, at most 1s); 0 is the console page's (250ms), negative none", "")
	watchersProcess := fs.Bool("watchers-process", false, "run the Watch subscribers in a child process (ahp-bench watchers) instead of in ahp-bench's own", "")
	watchFilter := fs.String("watch-filter", "", "filter of every Watch request, comma-separated: decisions, type=EVENT_TYPE (tool.before), tool=TOOL_KIND (shell), session=WORKER|ID (default: everything)", "")
	jsonOut := fs.Bool("json", false, "write the report as JSON instead of a table", "")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr", "")
	svg := fs.String("svg", "", "also write the latency distribution (percentile curve on log scales, the baseline dashed beside it) as SVG to this file", "")
	memProfile := fs.String("memprofile", "", "write a heap profile of the whole process (load generator and in-process servers) to this file at the end; pprof -sample_index=alloc_space shows what was allocated", "")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole process (load generator and in-process servers; not bridge processes) to this file", "")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	fail := fs.Failf
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (see -help)", fs.Arg(0))
	}
	if *concurrency < 1 {
		return fail("-concurrency must be at least 1")
	}
	if *rounds < 1 {
		return fail("-rounds must be at least 1")
	}
	if *timeout <= 0 {
		return fail("-timeout must be positive")
	}
	if *watchers < 0 || *baselineWatchers < -1 {
		return fail("-watchers and -baseline-watchers must not be negative")
	}
	if *natsURL != "" {
		if *target != "" {
			return fail("-nats configures the ahp-server process; an existing -target has its own settings")
		}
		*serverProcess = true
	}
	if !*serverProcess {
		explicit := false
		fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "server-bin" })
		if explicit {
			return fail("-server-bin is the binary for -server-process")
		}
		*serverBin = "" // from the environment, for runs that ask for a server process
	}
	m, err := bench.ParseMode(*mode)
	if err != nil {
		return fail("-mode: %v", err)
	}
	if *once && m.Transport != bench.ModeBridgeStdio {
		return fail("-once applies to bridge-stdio (and noop:bridge-stdio) only")
	}
	cfg := bench.Config{
		Mode: *mode,
		Load: bench.Load{
			Concurrency: *concurrency, Duration: *duration, Requests: *requests, Rate: *rate, Timeout: *timeout,
		},
		Rounds: *rounds, Warmup: *warmup, PayloadBytes: *payload, Batch: *batch, Protocol: *protocol, JSON: *jsonCodec, NoGzip: !*acceptGzip,
		PolicyFile: *policyFile, Target: *target, ServerProcess: *serverProcess, ServerBin: *serverBin, NATS: *natsURL,
		Audit: *auditOn, AuditPath: *auditPath, AuditFsync: *auditFsync,
		BridgeBin: *bridgeBin, BridgeOnce: *once, BridgeEmbedded: *embedded,
		Watchers: *watchers, WatchConnections: *watchConns, WatchFilter: *watchFilter, WatchAsConsole: *watchAsConsole,
		WatchFlushInterval: *watchFlush, WatchersProcess: *watchersProcess,
	}
	switch {
	case *baselineMode != "":
		cfg.Baseline = *baselineMode
	case *baseline:
		if m.Noop {
			return fail("-baseline: %s is itself a baseline; give -baseline-mode to compare it with something", m)
		}
		cfg.Baseline = bench.Mode{Transport: m.Transport, Noop: true}.String()
	}
	if *baselineWatchers >= 0 {
		cfg.BaselineWatchers = *baselineWatchers
		if cfg.Baseline == "" {
			cfg.Baseline = *mode // the same mode on the same server, with another number of watchers
		}
	}
	if err := cfg.Validate(); err != nil {
		return fail("%v", err)
	}
	if !*quiet {
		cfg.Progress = stderr
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fail("-cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail("-cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	report, err := bench.Run(ctx, cfg)
	if *memProfile != "" {
		if perr := writeHeapProfile(*memProfile); perr != nil {
			return fail("-memprofile: %v", perr)
		}
	}
	if err != nil && report == nil {
		fmt.Fprintln(stderr, "ahp-bench:", err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "ahp-bench: after the run:", err)
	}
	if *jsonOut {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err == nil && *svg != "" {
		err = writeSVGFile(*svg, report.WriteSVG)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ahp-bench:", err)
		return 1
	}
	if n := report.Errors(); n > 0 {
		fmt.Fprintf(stderr, "ahp-bench: %d errors\n", n)
		return 1
	}
	if report.Run.Interrupted {
		return 1
	}
	return 0
}

// writeHeapProfile writes the heap profile, whose alloc_space and alloc_objects samples cover
// every allocation since the process started.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
