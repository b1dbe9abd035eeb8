package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
	"github.com/ahp-gateway/ahp/internal/cli"
)

const genPoliciesUsage = `Usage: ahp-bench gen-policies [flags]

Writes one list of shell-command regex rules as two policies: DIR/NAME.yaml for ahp-server (each
rule: on tool.before, match {tool_kinds: [shell]}, when input.command.matches(r"…"), deny) and
DIR/NAME.rego for OPA (v1 syntax; the decision at data.ahp.bench.decision, its input the JSON body
of an ahp.v1 Intercept request). The last rule denies "rm -rf /"; no other rule matches the
benchmark's commands, so every event is checked against every rule. ahp-bench compare generates
the same files itself.

Flags:
`

func runGenPolicies(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-bench gen-policies", stderr, getenv, genPoliciesUsage)
	rules := fs.Int("rules", bench.PolicyRules, fmt.Sprintf("number of rules (1 to %d)", bench.MaxRules), "")
	dir := fs.String("dir", ".", "directory to write the two files into", "")
	name := fs.String("name", "opa-compare", "base name of the files and name of the ahp policy", "")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return fs.Failf("unexpected argument %q (see -help)", fs.Arg(0))
	}
	files, err := bench.WritePolicies(*dir, *name, *rules)
	if err != nil {
		return fs.Failf("%v", err)
	}
	fmt.Fprintf(stdout, "%s\n%s\n", files.CEL, files.Rego)
	return 0
}

const compareUsage = `Usage: ahp-bench compare [flags]

Runs ahp-server and OPA side by side on loopback and drives them with the same load: one list of
shell-command regex rules (-rules) served as CEL by ahp-server and as the equivalent Rego by
"opa run --server", the same event bodies (every request a fresh event id, so no idempotency
hits), the same open-loop rate (-rate) or closed-loop concurrency. Every answer is checked: the
commands alternate "ls -la" (allowed by both policies) and "rm -rf /" (denied). The targets run one
after another in every round, the order rotating, so that machine noise hits each of them.

Targets (-targets, comma-separated):
  opa              OPA's REST API, POST /v1/data/ahp/bench/decision with {"input": <Intercept body>}
  intercept        ahp-server's Intercept, Connect protocol with JSON bodies, over the same HTTP/1.1
                   keep-alive client as opa
  intercept-proto  Intercept through connect-go: binary protobuf over HTTP/2 cleartext
  bridge-http      ahp-jsonrpc-bridge --http, Agent Hooks v0.1 hooks/intercept (upstream: the
                   same ahp-server; -bridge-embedded: the bridge's own decision core)
  bridge-stdio     ahp-jsonrpc-bridge on stdio, the same

Reported per target: p50/p90/p99/p99.9/max latency (from the due time in open loop), decisions/s,
and the server-side cost per decision from each serving process's runtime counters, read from its
/metrics before and after every phase: heap bytes and objects allocated per decision, CPU time per
decision, GC cycles/s, the GC's CPU share, stop-the-world time and the live heap (the last two need
runtime/metrics series, which ahp-server exports and OPA does not). -svg writes the latency
distributions as a picture. OPA is built through tools/opa.mod unless -opa-bin is given
(scripts/bench-opa.sh wraps a standard run).

Flags:
`

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-bench compare", stderr, getenv, compareUsage)
	targets := fs.String("targets", bench.TargetOPA+","+bench.TargetIntercept, "comma-separated targets: "+strings.Join(bench.CompareTargets, ", "), "")
	rules := fs.Int("rules", bench.PolicyRules, "rules in the generated policies", "")
	concurrency := fs.Int("concurrency", 1, "workers, each with one request in flight", "")
	duration := fs.Duration("duration", 0, "how long to measure each target (default 10s unless -requests is given)", "")
	requests := fs.Uint64("requests", 0, "how many requests per target", "")
	rate := fs.Float64("rate", 0, "fixed arrival rate per target in requests per second (open loop); 0: closed loop", "")
	rounds := fs.Int("rounds", 1, "split each target's measurement into this many slices, the targets rotating", "")
	warmup := fs.Duration("warmup", time.Second, "unmeasured warm-up per target", "")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout", "")
	payload := fs.Int("payload-bytes", 0, "size of each tool input as JSON", "")
	serverBin := fs.String("server-bin", "", "ahp-server binary; empty builds it with the go command", "AHP_SERVER_BIN")
	bridgeBin := fs.String("bridge-bin", "", "ahp-jsonrpc-bridge binary for the bridge targets; empty builds it", "AHP_BRIDGE_BIN")
	opaBin := fs.String("opa-bin", "", "opa binary; empty builds OPA through tools/opa.mod (as scripts/opa does)", "AHP_OPA_BIN")
	embedded := fs.Bool("bridge-embedded", false, "bridge targets decide with the bridge's embedded core instead of forwarding to ahp-server", "")
	serverEnv := fs.String("server-env", "", "comma-separated NAME=VALUE added to ahp-server's environment, e.g. GOGC=off (diagnosis only)", "")
	jsonOut := fs.Bool("json", false, "write the report as JSON instead of tables", "")
	svg := fs.String("svg", "", "also write the latency distributions (percentile curves, log scales) as SVG to this file", "")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr", "")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	fail := fs.Failf
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (see -help)", fs.Arg(0))
	}
	if *concurrency < 1 || *rounds < 1 || *timeout <= 0 {
		return fail("-concurrency and -rounds must be at least 1, -timeout positive")
	}
	cfg := bench.CompareConfig{
		Targets: strings.Split(*targets, ","), Rules: *rules,
		Load:   bench.Load{Concurrency: *concurrency, Duration: *duration, Requests: *requests, Rate: *rate, Timeout: *timeout},
		Rounds: *rounds, Warmup: *warmup, PayloadBytes: *payload,
		ServerBin: *serverBin, BridgeBin: *bridgeBin, OPABin: *opaBin, BridgeEmbedded: *embedded,
	}
	if *rules < 1 {
		return fail("-rules must be at least 1")
	}
	if *serverEnv != "" {
		cfg.ServerEnv = strings.Split(*serverEnv, ",")
	}
	if err := cfg.Validate(); err != nil {
		return fail("%v", err)
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	report, err := bench.Compare(ctx, cfg)
	if err != nil && report == nil {
		fmt.Fprintln(stderr, "ahp-bench compare:", err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "ahp-bench compare: after the run:", err)
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
		fmt.Fprintln(stderr, "ahp-bench compare:", err)
		return 1
	}
	if n := report.Errors(); n > 0 {
		fmt.Fprintf(stderr, "ahp-bench compare: %d errors\n", n)
		return 1
	}
	return 0
}

// writeSVGFile writes a picture to path through a temporary file, so that a failed run leaves
// no half-written picture behind.
func writeSVGFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("-svg: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("-svg: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("-svg: %w", err)
	}
	return os.Rename(tmp, path)
}
