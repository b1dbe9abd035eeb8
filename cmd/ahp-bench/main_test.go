package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/server"
)

var noEnv = clitest.Env(nil)

var bridgeDir string

func TestMain(m *testing.M) {
	// --watchers-process starts this executable with "watchers": the test binary is then the
	// child, as ahp-bench would be.
	if len(os.Args) > 1 && os.Args[1] == "watchers" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "ahp-bench-test-")
	if err != nil {
		panic(err)
	}
	bridgeDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildOnce builds a command (bench.BuildBridge, bench.BuildServer) once for every test that
// needs it.
func buildOnce(build func(context.Context, string) (string, error)) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		return build(ctx, bridgeDir)
	})
}

var (
	bridgeBin = buildOnce(bench.BuildBridge)
	serverBin = buildOnce(bench.BuildServer)
)

// needBinary returns the built binary, or skips the test when it cannot be built here (no go
// command, or not inside the module).
func needBinary(t *testing.T, built func() (string, error), unavailable error, what string) string {
	t.Helper()
	bin, err := built()
	if errors.Is(err, unavailable) {
		t.Skipf("%s skipped: %v", what, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func needBridge(t *testing.T) string {
	t.Helper()
	return needBinary(t, bridgeBin, bench.ErrBridgeUnavailable, "bridge modes")
}

func needServer(t *testing.T) string {
	t.Helper()
	return needBinary(t, serverBin, bench.ErrServerUnavailable, "--server-process")
}

// benchJSON runs ahp-bench with --json and returns the report, failing on a non-zero exit.
func benchJSON(t *testing.T, args ...string) *bench.Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"--json", "--quiet"}, args...), &stdout, &stderr, noEnv)
	var report bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("ahp-bench %s: exit %d, no JSON report (%v)\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, err, stdout.String(), stderr.String())
	}
	if code != 0 {
		t.Fatalf("ahp-bench %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return &report
}

// checkResult asserts correctness only — work was done, nothing failed, counts agree — never a
// speed: CI machines are shared and noisy.
func checkResult(t *testing.T, r *bench.Result, mode string) {
	t.Helper()
	if r.Mode != mode {
		t.Errorf("mode %q, want %q", r.Mode, mode)
	}
	if r.Count == 0 {
		t.Errorf("%s: no request was measured", r.Mode)
	}
	if r.Errors != 0 {
		t.Errorf("%s: %d errors %v", r.Mode, r.Errors, r.ErrorKinds)
	}
	if r.Interrupted {
		t.Errorf("%s: interrupted", r.Mode)
	}
	if r.Latency.P50 <= 0 && !strings.HasSuffix(r.Mode, "observe-stream") {
		t.Errorf("%s: p50 %v", r.Mode, r.Latency.P50)
	}
	if strings.HasSuffix(r.Mode, "observe-stream") {
		if r.Accepted == nil {
			t.Errorf("%s: no accepted count", r.Mode)
		} else if *r.Accepted != r.Count {
			t.Errorf("%s: server accepted %d of %d events", r.Mode, *r.Accepted, r.Count)
		}
	}
}

// argsFor joins parts into one command line, and adds the bridge binary when bridge is set.
func argsFor(t *testing.T, bridge bool, parts ...[]string) []string {
	t.Helper()
	var args []string
	for _, p := range parts {
		args = append(args, p...)
	}
	if bridge {
		args = append(args, "--bridge-bin", needBridge(t))
	}
	return args
}

// checkAudit asserts that the audit check a found a sound chain holding one record per expected
// answer, at least atLeast of them.
func checkAudit(t *testing.T, a *bench.AuditCheck, atLeast uint64) {
	t.Helper()
	if a == nil {
		t.Fatal("no audit check in the report")
	}
	if a.Problem != "" {
		t.Errorf("audit problem: %s", a.Problem)
	}
	if !a.ChainOK {
		t.Errorf("audit hash chain does not verify: %+v", *a)
	}
	if !a.Counted {
		t.Errorf("audit records were not counted: %+v", *a)
	}
	if a.Records != a.Expected {
		t.Errorf("audit holds %d records, want %d", a.Records, a.Expected)
	}
	if a.Records < atLeast {
		t.Errorf("audit holds %d records, fewer than the %d requests answered", a.Records, atLeast)
	}
}

// TestSmokeEveryMode runs every mode for a few hundred milliseconds and checks that every answer
// was right and every count matches.
func TestSmokeEveryMode(t *testing.T) {
	t.Parallel()
	short := []string{"--duration", "300ms", "--warmup", "50ms"}
	cases := []struct {
		name   string
		args   []string
		mode   string
		bridge bool
	}{
		{"intercept", []string{"--mode", "intercept", "--concurrency", "2"}, "intercept", false},
		{"intercept-grpc", []string{"--mode", "intercept", "--protocol", "grpc", "--payload-bytes", "1024"}, "intercept", false},
		{"intercept-no-gzip", []string{"--mode", "intercept", "--accept-gzip=false", "--protocol", "grpcweb"}, "intercept", false},
		{"intercept-stream", []string{"--mode", "intercept-stream", "--concurrency", "4"}, "intercept-stream", false},
		{"observe-stream", []string{"--mode", "observe-stream", "--concurrency", "2"}, "observe-stream", false},
		{"noop", []string{"--mode", "noop"}, "noop:intercept", false},
		{"noop-intercept-stream", []string{"--mode", "noop:intercept-stream", "--concurrency", "3"}, "noop:intercept-stream", false},
		{"noop-observe-stream", []string{"--mode", "noop:observe-stream", "--requests", "5000"}, "noop:observe-stream", false},
		{"observe-stream-batch", []string{"--mode", "observe-stream", "--concurrency", "2", "--batch", "7"}, "observe-stream", false},
		{"noop-observe-stream-batch", []string{"--mode", "noop:observe-stream", "--batch", "7"}, "noop:observe-stream", false},
		{"bridge-stdio", []string{"--mode", "bridge-stdio", "--concurrency", "2"}, "bridge-stdio", true},
		{"bridge-stdio-embedded", []string{"--mode", "bridge-stdio", "--bridge-embedded"}, "bridge-stdio", true},
		{"bridge-http", []string{"--mode", "bridge-http", "--concurrency", "2"}, "bridge-http", true},
		{"noop-bridge-stdio", []string{"--mode", "noop:bridge-stdio"}, "noop:bridge-stdio", true},
		{"noop-bridge-http", []string{"--mode", "noop:bridge-http"}, "noop:bridge-http", true},
		{"bridge-stdio-once", []string{"--mode", "bridge-stdio", "--once", "--requests", "4", "--warmup", "0"}, "bridge-stdio --once", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			report := benchJSON(t, argsFor(t, c.bridge, short, c.args)...)
			checkResult(t, &report.Run, c.mode)
			if report.Baseline != nil {
				t.Errorf("baseline ran without --baseline")
			}
		})
	}
}

func TestBaselineRunsInTheSameInvocation(t *testing.T) {
	t.Parallel()
	report := benchJSON(t, "--mode", "intercept", "--requests", "400", "--rounds", "2", "--warmup", "0", "--baseline")
	checkResult(t, &report.Run, "intercept")
	if report.Baseline == nil {
		t.Fatal("no baseline")
	}
	checkResult(t, report.Baseline, "noop:intercept")
	if report.Run.Count != 400 {
		t.Errorf("count %d, want 400", report.Run.Count)
	}
	if report.Baseline.Count != 400 {
		t.Errorf("baseline count %d, want 400", report.Baseline.Count)
	}
	if report.Rounds != 2 {
		t.Errorf("%d rounds, want 2", report.Rounds)
	}
	if report.P50Ratio <= 0 {
		t.Errorf("p50 ratio %v", report.P50Ratio)
	}
}

func TestBridgeAgainstADirectCall(t *testing.T) {
	t.Parallel()
	bin := needBridge(t)
	report := benchJSON(t, "--mode", "bridge-stdio", "--baseline-mode", "intercept", "--duration", "300ms", "--warmup", "50ms", "--bridge-bin", bin)
	checkResult(t, &report.Run, "bridge-stdio")
	if report.Baseline == nil {
		t.Fatal("no baseline")
	}
	checkResult(t, report.Baseline, "intercept")
}

// TestServerProcess runs ahp-server as a child process: the bridge and a direct call both reach
// it, every answer is checked, its audit log (written by the child, verified here after it
// stopped) holds every decision, and the report says which process served.
func TestServerProcess(t *testing.T) {
	t.Parallel()
	report := benchJSON(t, "--mode", "bridge-stdio", "--baseline-mode", "intercept", "--server-process", "--audit",
		"--duration", "300ms", "--warmup", "50ms", "--rounds", "2",
		"--server-bin", needServer(t), "--bridge-bin", needBridge(t))
	checkResult(t, &report.Run, "bridge-stdio")
	if report.Baseline == nil {
		t.Fatal("no baseline")
	}
	checkResult(t, report.Baseline, "intercept")
	for _, r := range []*bench.Result{&report.Run, report.Baseline} {
		if !strings.Contains(r.Target, "ahp-server process (pid ") {
			t.Errorf("%s: target %q does not name the server process", r.Mode, r.Target)
		}
	}
	checkAudit(t, report.Audit, report.Run.Count+report.Baseline.Count)
}

// TestAuditHoldsEveryDecisionAndObservation turns the in-process server's audit log on: after the
// run its chain verifies and it holds one record per answered request, warm-up included.
func TestAuditHoldsEveryDecisionAndObservation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		args   []string
		bridge bool
	}{
		{"intercept-stream", []string{"--mode", "intercept-stream", "--concurrency", "3", "--baseline"}, false},
		{"observe-stream", []string{"--mode", "observe-stream", "--concurrency", "2", "--audit-fsync", "always"}, false},
		{"observe-stream-batch", []string{"--mode", "observe-stream", "--concurrency", "2", "--batch", "50"}, false},
		{"bridge-stdio", []string{"--mode", "bridge-stdio", "--baseline-mode", "intercept"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			report := benchJSON(t, argsFor(t, c.bridge, []string{"--audit", "--duration", "300ms", "--warmup", "50ms"}, c.args)...)
			checkAudit(t, report.Audit, report.Run.Count)
		})
	}
}

// checkWatch asserts that every one of r's watchers received every item it had to, once, and
// nothing else went wrong; perWatcher is the number each had to receive (-1: not known in advance,
// but neither 0 nor everything).
func checkWatch(t *testing.T, r *bench.Result, watchers int, perWatcher int64) {
	t.Helper()
	w := r.Watch
	if w == nil {
		t.Fatalf("%s: no watch result", r.Mode)
	}
	if w.Watchers != watchers {
		t.Errorf("%s: %d watchers, want %d", r.Mode, w.Watchers, watchers)
	}
	switch {
	case perWatcher >= 0 && w.ExpectedPerWatcher != uint64(perWatcher):
		t.Errorf("%s: each watcher expected %d items, want %d", r.Mode, w.ExpectedPerWatcher, perWatcher)
	case perWatcher < 0 && (w.ExpectedPerWatcher == 0 || w.ExpectedPerWatcher >= r.Count):
		t.Errorf("%s: each watcher expected %d of %d items; the filter should keep some", r.Mode, w.ExpectedPerWatcher, r.Count)
	}
	if w.Received != uint64(watchers)*w.ExpectedPerWatcher {
		t.Errorf("%s: watchers received %d items, want %d × %d", r.Mode, w.Received, watchers, w.ExpectedPerWatcher)
	}
	for _, c := range []struct {
		what string
		n    uint64
	}{{"missing", w.Missing}, {"duplicate", w.Duplicates}, {"wrong", w.Wrong}, {"streams ended early", w.EndedEarly}, {"subscribers cut off", w.CutOff}} {
		if c.n != 0 {
			t.Errorf("%s: %d %s: watch %+v", r.Mode, c.n, c.what, *w)
		}
	}
	if watchers > 0 && w.ExpectedPerWatcher > 0 && w.Delivery.P50 <= 0 {
		t.Errorf("%s: watch delivery p50 %v", r.Mode, w.Delivery.P50)
	}
}

// TestWatchersReceiveEveryAnswer runs modes with Watch subscribers at a modest fixed rate (so that
// a slow CI machine does not make the server cut a subscriber off) and checks that each received
// every decision or event answered while it was subscribed.
// watchConnections is the --watch-connections of args, or watchers (one each) without it.
func watchConnections(args []string, watchers int) int {
	for i, a := range args {
		if a == "--watch-connections" && i+1 < len(args) {
			n, _ := strconv.Atoi(args[i+1])
			return n
		}
	}
	return watchers
}

func TestWatchersReceiveEveryAnswer(t *testing.T) {
	t.Parallel()
	fixed := []string{"--rate", "400", "--duration", "500ms", "--warmup", "50ms"}
	t.Run("intercept-vs-no-watchers", func(t *testing.T) {
		t.Parallel()
		report := benchJSON(t, append(fixed, "--mode", "intercept", "--concurrency", "2", "--watchers", "8", "--baseline-watchers", "0", "--rounds", "2")...)
		// 400/s for 2 × 0.25 s: 200 requests for each mode.
		checkResult(t, &report.Run, "intercept --watchers 8")
		if report.Run.Count != 200 {
			t.Errorf("count %d, want 200", report.Run.Count)
		}
		checkWatch(t, &report.Run, 8, 200)
		if report.Baseline == nil {
			t.Fatal("no baseline")
		}
		checkResult(t, report.Baseline, "intercept --watchers 0")
		checkWatch(t, report.Baseline, 0, 0)
		if report.P50Ratio <= 0 {
			t.Errorf("p50 ratio %v", report.P50Ratio)
		}
	})
	for _, c := range []struct {
		name       string
		args       []string
		mode       string
		perWatcher int64
		bridge     bool
	}{
		{"intercept-stream-one-session", []string{"--mode", "intercept-stream", "--concurrency", "3", "--watchers", "4", "--watch-filter", "decisions,session=1"}, "intercept-stream --watchers 4", -1, false},
		{"intercept-grpc", []string{"--mode", "intercept", "--protocol", "grpc", "--watchers", "3", "--watch-filter", "type=tool.before,tool=shell"}, "intercept --watchers 3", 200, false},
		{"intercept-shared-connection", []string{"--mode", "intercept", "--watchers", "6", "--watch-connections", "1"}, "intercept --watchers 6", 200, false},
		{"grpc-two-connections", []string{"--mode", "intercept-stream", "--protocol", "grpc", "--watchers", "5", "--watch-connections", "2"}, "intercept-stream --watchers 5", 200, false},
		{"intercept-filter-matches-nothing", []string{"--mode", "intercept", "--watchers", "3", "--watch-filter", "type=tool.after"}, "intercept --watchers 3", 0, false},
		{"observe-stream", []string{"--mode", "observe-stream", "--concurrency", "2", "--watchers", "4"}, "observe-stream --watchers 4", 200, false},
		{"observe-stream-decisions-only", []string{"--mode", "observe-stream", "--watchers", "2", "--watch-filter", "decisions"}, "observe-stream --watchers 2", 0, false},
		{"bridge-stdio", []string{"--mode", "bridge-stdio", "--concurrency", "2", "--watchers", "3"}, "bridge-stdio --watchers 3", 200, true},
		{"as-console-in-a-child-process", []string{"--mode", "intercept", "--watchers", "3", "--watch-as-console", "--watchers-process"}, "intercept --watchers 3", 200, false},
		{"grpc-in-a-child-process", []string{"--mode", "intercept-stream", "--protocol", "grpc", "--watchers", "4", "--watch-connections", "2", "--watchers-process"}, "intercept-stream --watchers 4", 200, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			report := benchJSON(t, argsFor(t, c.bridge, fixed, c.args)...)
			checkResult(t, &report.Run, c.mode)
			checkWatch(t, &report.Run, report.Run.Watch.Watchers, c.perWatcher)
			if want := watchConnections(c.args, report.Run.Watch.Watchers); report.Run.Watch.Connections != want {
				t.Errorf("watch connections %d, want %d", report.Run.Watch.Connections, want)
			}
			if want := slices.Contains(c.args, "--watchers-process"); report.Run.Watch.Process != want {
				t.Errorf("watchers in a child process: %v, want %v", report.Run.Watch.Process, want)
			}
			if want := slices.Contains(c.args, "--watch-as-console"); (report.Run.Watch.FlushIntervalMs == 250) != want {
				t.Errorf("flush interval %d ms with --watch-as-console %v", report.Run.Watch.FlushIntervalMs, want)
			}
		})
	}
	t.Run("noop-baseline-has-no-watchers", func(t *testing.T) {
		t.Parallel()
		report := benchJSON(t, append(fixed, "--mode", "intercept", "--watchers", "2", "--baseline")...)
		checkResult(t, &report.Run, "intercept --watchers 2")
		checkWatch(t, &report.Run, 2, 200)
		if report.Baseline == nil {
			t.Fatal("no baseline")
		}
		if report.Baseline.Watch != nil {
			t.Fatalf("the no-op baseline has watchers: %+v", *report.Baseline.Watch)
		}
		checkResult(t, report.Baseline, "noop:intercept")
	})
}

func TestWatchTextOutput(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--mode", "intercept", "--watchers", "2", "--baseline-watchers", "0", "--requests", "40", "--rounds", "2", "--warmup", "0"}, &stdout, &stderr, noEnv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"Watch ×2", "p50 ratio intercept --watchers 2 / intercept --watchers 0:", "each of the 40 decisions answered while they were subscribed: 80 received, 0 missing"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestFixedRateIsOpenLoop(t *testing.T) {
	t.Parallel()
	report := benchJSON(t, "--mode", "intercept", "--rate", "400", "--duration", "500ms", "--concurrency", "4", "--warmup", "0")
	checkResult(t, &report.Run, "intercept")
	if report.Run.ServiceTime == nil {
		t.Errorf("fixed-rate result without service time: %+v", report.Run)
	}
	if !strings.HasPrefix(report.Run.LatencyMeaning, "from the due time") {
		t.Errorf("fixed-rate latency %q does not count from the due time", report.Run.LatencyMeaning)
	}
	// 400/s for 0.5 s hands out 200 requests; none is dropped.
	if report.Run.Count != 200 {
		t.Errorf("count %d, want 200", report.Run.Count)
	}
}

// TestExistingTarget loads a server the test started, as --target does with a running one; its
// policy is unknown to ahp-bench, so verdicts are checked for consistency.
func TestExistingTarget(t *testing.T) {
	t.Parallel()
	url := clitest.Serve(t, server.Config{PolicyPollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	report := benchJSON(t, "--mode", "intercept-stream", "--target", url, "--requests", "300", "--concurrency", "3", "--warmup", "0")
	checkResult(t, &report.Run, "intercept-stream")
	if !report.Run.ExpectationsLearned {
		t.Error("the expectations of an unknown policy were not learned")
	}
	if addr := strings.TrimPrefix(url, "http://"); !strings.Contains(report.Run.Target, addr) {
		t.Errorf("target %q does not name %s", report.Run.Target, addr)
	}
}

func TestTextOutput(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--mode", "noop", "--requests", "50", "--warmup", "0"}, &stdout, &stderr, noEnv)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"throughput/s", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "noop:intercept", "machine:"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "ahp-bench: noop:intercept: round 1/1") {
		t.Errorf("no progress on stderr: %s", stderr.String())
	}
}

func TestRefusesBadUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "http://192.0.2.7:8080"}, "not a loopback address"},
		{[]string{"--target", "http://example.com:8080"}, "not a loopback address"},
		{[]string{"--mode", "bogus"}, "unknown mode"},
		{[]string{"--mode", "intercept", "--once"}, "-once applies to bridge-stdio"},
		{[]string{"--mode", "noop", "--baseline"}, "itself a baseline"},
		{[]string{"--concurrency", "0"}, "-concurrency"},
		{[]string{"--payload-bytes", "-3"}, "payload size"},
		{[]string{"--mode", "intercept", "--batch", "10"}, "--batch is for observe-stream modes"},
		{[]string{"--mode", "observe-stream", "--batch", "1001"}, "batch must be from 1 to 1000"},
		{[]string{"--target", "http://127.0.0.1:1", "--policy", "x.yaml"}, "--policy is for the in-process"},
		{[]string{"--target", "http://127.0.0.1:1", "--audit"}, "--audit is for the in-process"},
		{[]string{"--audit-fsync", "sometimes"}, "audit fsync mode"},
		{[]string{"--target", "http://127.0.0.1:1", "--server-process"}, "cannot be combined with --target"},
		{[]string{"--server-bin", "/bin/true"}, "-server-bin is the binary for -server-process"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--mode", "noop", "--watchers", "3"}, "serve no Watch"},
		{[]string{"--mode", "intercept", "--baseline", "--baseline-watchers", "3"}, "serve no Watch"},
		{[]string{"--mode", "bridge-http", "--bridge-embedded", "--watchers", "3"}, "no ahp-server publishes"},
		{[]string{"--watchers", "-1"}, "must not be negative"},
		{[]string{"--watchers", "100000"}, "watchers must be from 0 to"},
		{[]string{"--watch-filter", "decisions"}, "needs --watchers"},
		{[]string{"--watch-connections", "2"}, "--watch-connections needs --watchers"},
		{[]string{"--watchers", "2", "--watch-connections", "-1"}, "watch connections must be from 0"},
		{[]string{"--watchers", "2", "--watch-filter", "type=bogus"}, "watch filter: type"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), c.args, &stdout, &stderr, noEnv); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, stderr.String(), c.want)
		}
	}
}

func TestHelpDocumentsEveryFlag(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr, noEnv); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"mode", "concurrency", "duration", "requests", "rate", "payload-bytes", "baseline", "baseline-mode",
		"rounds", "warmup", "timeout", "policy", "target", "protocol", "bridge-bin", "once", "bridge-embedded", "json", "quiet", "cpuprofile", "accept-gzip", "audit", "audit-path", "audit-fsync", "watchers", "baseline-watchers", "watch-filter", "watch-connections", "server-process", "server-bin"} {
		if !strings.Contains(stderr.String(), "  -"+f+" ") && !strings.Contains(stderr.String(), "  -"+f+"\n") {
			t.Errorf("help does not document -%s", f)
		}
	}
	for _, mode := range append(bench.Transports, "noop:MODE") {
		if !strings.Contains(stderr.String(), mode) {
			t.Errorf("help does not describe mode %s", mode)
		}
	}
}

func TestAuditNeedsTheServer(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--mode", "noop", "--audit", "--requests", "1"}, &stdout, &stderr, noEnv); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "no mode of this run uses that server") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestBadPolicyFails(t *testing.T) {
	t.Parallel()
	file := t.TempDir() + "/broken.yaml"
	if err := os.WriteFile(file, []byte("version: 1\nrules:\n  - id: x\n    when: 'nope('\n    effect: {deny: {reason: r}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--policy", file, "--requests", "1"}, &stdout, &stderr, noEnv); code != 1 {
		t.Errorf("exit %d, want 1; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "broken.yaml") {
		t.Errorf("stderr does not name the policy: %s", stderr.String())
	}
}
