package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// The targets of a comparison (CompareConfig.Targets).
const (
	// TargetOPA is OPA's REST API (POST /v1/data/ahp/bench/decision), serving RegoPolicy.
	TargetOPA = "opa"
	// TargetIntercept is ahp-server's Intercept in the Connect protocol with JSON bodies, over
	// HTTP/1.1 keep-alive like the OPA target: the same client, the same event bodies.
	TargetIntercept = "intercept"
	// TargetInterceptProto is Intercept through connect-go with binary protobuf over h2c, as
	// ahp-bench --mode intercept sends it.
	TargetInterceptProto = "intercept-proto"
	// TargetBridgeHTTP and TargetBridgeStdio are ahp-jsonrpc-bridge (Agent Hooks v0.1 hooks/intercept)
	// on HTTP and on stdio, forwarding to the same ahp-server or, with BridgeEmbedded, deciding
	// with its embedded core and the same CEL policy.
	TargetBridgeHTTP  = "bridge-http"
	TargetBridgeStdio = "bridge-stdio"
)

// CompareTargets lists the targets in the order the help shows them.
var CompareTargets = []string{TargetOPA, TargetIntercept, TargetInterceptProto, TargetBridgeHTTP, TargetBridgeStdio}

// CompareConfig configures Compare: the targets are driven one after another in every round,
// the order rotating from round to round, so that a noisy moment of the machine is shared.
type CompareConfig struct {
	// Targets are the targets to drive (see CompareTargets); default opa and intercept.
	Targets []string
	// Rules is the size of the rule list both policies are generated from (default PolicyRules).
	Rules int
	// Load is the measured load per target (Duration and Requests split over Rounds).
	Load Load
	// Rounds splits each target's load into slices (default 1).
	Rounds int
	// Warmup is an unmeasured phase per target before the first round.
	Warmup time.Duration
	// PayloadBytes is the size of each tool input as JSON.
	PayloadBytes int
	// ServerBin, BridgeBin and OPABin are the binaries ("" builds them with the go command; OPA
	// through tools/opa.mod).
	ServerBin, BridgeBin, OPABin string
	// BridgeEmbedded runs the bridge targets with the bridge's embedded decision core.
	BridgeEmbedded bool
	// ServerEnv is added to ahp-server's environment (e.g. GOGC=off, for diagnosis only).
	ServerEnv []string
	// Progress receives one line per phase (nil: silent).
	Progress io.Writer
}

// Validate checks cfg without starting anything.
func (cfg *CompareConfig) Validate() error {
	seen := map[string]bool{}
	for _, t := range cfg.Targets {
		if !slices.Contains(CompareTargets, t) {
			return fmt.Errorf("unknown target %q: want %s", t, strings.Join(CompareTargets, ", "))
		}
		if seen[t] {
			return fmt.Errorf("target %q given twice", t)
		}
		seen[t] = true
	}
	if cfg.Rules < 0 || cfg.Rules > MaxRules {
		return fmt.Errorf("rules must be from 1 to %d", MaxRules)
	}
	l := cfg.Load
	switch {
	case l.Concurrency < 0 || l.Concurrency > 10000:
		return errors.New("concurrency must be from 1 to 10000")
	case l.Duration < 0 || l.Rate < 0 || l.Timeout < 0 || cfg.Warmup < 0:
		return errors.New("duration, rate, timeout and warm-up must not be negative")
	case cfg.Rounds < 0 || cfg.Rounds > 1000:
		return errors.New("rounds must be from 1 to 1000")
	case cfg.PayloadBytes < 0 || cfg.PayloadBytes > MaxPayloadBytes:
		return fmt.Errorf("payload size must be from 0 to %d bytes", MaxPayloadBytes)
	case l.Requests > 0 && cfg.Rounds > 0 && l.Requests < uint64(cfg.Rounds):
		return errors.New("fewer requests than rounds")
	}
	for _, kv := range cfg.ServerEnv {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.HasPrefix(k, "AHP_") {
			return errors.New("server environment: want NAME=VALUE entries, not AHP_* (the server is configured by its command line)")
		}
	}
	return nil
}

func (cfg *CompareConfig) defaults() {
	if len(cfg.Targets) == 0 {
		cfg.Targets = []string{TargetOPA, TargetIntercept}
	}
	if cfg.Rules == 0 {
		cfg.Rules = PolicyRules
	}
	if cfg.Load.Concurrency == 0 {
		cfg.Load.Concurrency = 1
	}
	if cfg.Load.Duration == 0 && cfg.Load.Requests == 0 {
		cfg.Load.Duration = 10 * time.Second
	}
	if cfg.Load.Timeout == 0 {
		cfg.Load.Timeout = 10 * time.Second
	}
	if cfg.Rounds == 0 {
		cfg.Rounds = 1
	}
}

// CompareResult is one target's latency, throughput and server-side cost.
type CompareResult struct {
	Result
	// Target is the target's name (CompareTargets).
	Target string `json:"target"`
	// Cost is the server-side cost per decision of each process that served the target: the
	// server, and for the bridge targets the bridge too.
	Cost []ServerCost `json:"server_cost,omitempty"`
	// Ratios compare the target with OPA: its value over OPA's (absent for OPA itself and when OPA
	// did not run).
	VsOPA *Ratios `json:"vs_opa,omitempty"`
}

// Ratios are a target's numbers over a peer's.
type Ratios struct {
	P50        float64 `json:"p50"`
	P99        float64 `json:"p99"`
	P999       float64 `json:"p99_9"`
	Max        float64 `json:"max"`
	Throughput float64 `json:"throughput"`
}

// CompareReport is the outcome of Compare.
type CompareReport struct {
	// Rules is the size of the rule list both policies were generated from.
	Rules int `json:"rules"`
	// Rounds is how many slices each target's load was split into.
	Rounds int `json:"rounds"`
	// Results has one entry per target, in the order given.
	Results []CompareResult `json:"results"`
	Machine Machine         `json:"machine"`

	hists []*Histogram // latency of each result, for the SVG
}

// Errors counts the failed requests of every target, and every cost that could not be read.
func (r *CompareReport) Errors() uint64 {
	var n uint64
	for _, res := range r.Results {
		n += res.Errors
		for _, c := range res.Cost {
			if c.Error != "" {
				n++
			}
		}
	}
	return n
}

// Compare drives every target of cfg with the same load and returns the report. It starts what
// the targets need — ahp-server and OPA as processes on loopback (each with its metrics
// endpoint), bridge processes — and stops them before it returns.
func Compare(ctx context.Context, cfg CompareConfig) (*CompareReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.defaults()
	wl, err := NewWorkload(cfg.PayloadBytes)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "ahp-bench-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	c := &comparison{cfg: cfg, wl: wl, tmp: tmp, hc: &http.Client{}}
	defer c.close()
	if c.files, err = WritePolicies(tmp, fmt.Sprintf("opa-compare-%d", cfg.Rules), cfg.Rules); err != nil {
		return nil, err
	}
	for i, t := range cfg.Targets {
		ct, err := c.open(ctx, t, i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		c.targets = append(c.targets, ct)
	}
	report := &CompareReport{Rules: cfg.Rules, Rounds: cfg.Rounds, Machine: CurrentMachine()}
	if cfg.Warmup > 0 {
		for _, t := range c.targets {
			c.progress("%s: warming up for %v", t.sys.label, cfg.Warmup)
			warm := cfg.Load
			warm.Duration, warm.Requests = cfg.Warmup, 0
			runPhase(ctx, t.sys, warm)
		}
	}
	for r := range cfg.Rounds {
		n := len(c.targets)
		for k := range n {
			t := c.targets[(k+r)%n]
			load := roundLoad(cfg.Load, cfg.Rounds, r)
			c.progress("%s: round %d/%d: %s", t.sys.label, r+1, cfg.Rounds, describeLoad(load))
			for _, m := range t.meters {
				m.begin(ctx, c.hc)
			}
			st := runPhase(ctx, t.sys, load)
			for _, m := range t.meters {
				m.end(ctx, c.hc, st.Count, st.Elapsed)
			}
			t.sys.stats.Merge(st)
		}
		if ctx.Err() != nil {
			break
		}
	}
	report.Machine.LoadAfter = LoadAverage()
	var opa *Result
	for _, t := range c.targets {
		res := CompareResult{Target: t.name, Result: NewResult(t.sys.label, t.sys.target, cfg.Load, wl.InputBytes(0), &t.sys.stats)}
		res.LatencyMeaning = t.sys.meaning
		if cfg.Load.Rate > 0 {
			res.LatencyMeaning = "from the due time at the fixed rate: " + t.sys.meaning
		}
		for _, m := range t.meters {
			res.Cost = append(res.Cost, m.result())
		}
		report.Results = append(report.Results, res)
		report.hists = append(report.hists, &t.sys.stats.Latency)
		if t.name == TargetOPA {
			opa = &report.Results[len(report.Results)-1].Result
		}
	}
	if opa != nil {
		for i := range report.Results {
			if res := &report.Results[i]; res.Target != TargetOPA {
				res.VsOPA = &Ratios{
					P50: Ratio(res.Latency.P50, opa.Latency.P50), P99: Ratio(res.Latency.P99, opa.Latency.P99),
					P999: Ratio(res.Latency.P999, opa.Latency.P999), Max: Ratio(res.Latency.Max, opa.Latency.Max),
					Throughput: Ratio(res.Throughput, opa.Throughput),
				}
			}
		}
	}
	var errs []error
	for _, t := range c.targets {
		if err := t.sys.driver.close(); err != nil {
			errs = append(errs, err)
		}
		t.sys.driver = nil
	}
	return report, errors.Join(errs...)
}

// comparison holds what a Compare run started.
type comparison struct {
	cfg     CompareConfig
	wl      *Workload
	tmp     string
	hc      *http.Client // for the metrics endpoints
	files   *PolicyFiles
	ahp     *running
	ahpM    string // ahp-server's /metrics URL
	opa     *running
	bridge  string
	targets []*compareTarget
}

type compareTarget struct {
	name   string
	sys    *system
	meters []*costMeter
}

func (c *comparison) progress(format string, a ...any) {
	if c.cfg.Progress != nil {
		fmt.Fprintf(c.cfg.Progress, "ahp-bench compare: "+format+"\n", a...)
	}
}

// server starts ahp-server as a process once, with the CEL policy and a metrics listener.
func (c *comparison) server(ctx context.Context) error {
	if c.ahp != nil {
		return nil
	}
	bin, err := serverCommand.binary(ctx, c.cfg.ServerBin, c.tmp, c.progress)
	if err != nil {
		return err
	}
	maddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	c.progress("starting ahp-server (%s) with %d rules, metrics on %s", bin, c.cfg.Rules, maddr)
	c.ahp, err = startServerProcess(serverProcess{bin: bin, policyFile: c.files.CEL, dir: c.tmp, metricsAddr: maddr, env: c.cfg.ServerEnv})
	c.ahpM = "http://" + maddr + "/metrics"
	return err
}

func (c *comparison) serverDesc() string {
	d := fmt.Sprintf("ahp-server process (pid %d) at %s, %d-rule CEL policy", c.ahp.pid, c.ahp.url, c.cfg.Rules)
	if len(c.cfg.ServerEnv) > 0 {
		d += ", environment " + strings.Join(c.cfg.ServerEnv, " ")
	}
	return d
}

// open prepares target name as the i-th system of the run.
func (c *comparison) open(ctx context.Context, name string, i int) (*compareTarget, error) {
	expect := FixedExpectation(VerdictAllow, VerdictDeny)
	t := &compareTarget{name: name, sys: &system{label: name, index: i, expect: expect}}
	conc := c.cfg.Load.Concurrency
	switch name {
	case TargetOPA:
		if c.opa == nil {
			bin, err := OPABinary(ctx, c.cfg.OPABin)
			if err != nil {
				return nil, err
			}
			c.progress("starting opa run --server (%s) with the equivalent Rego", bin)
			if c.opa, err = startOPA(ctx, bin, c.files.Rego); err != nil {
				return nil, err
			}
		}
		url := opaDataURL(c.opa.url, RegoDecisionPath)
		t.sys.driver = newJSONTarget(url, "OPA", conc, expect, c.wl.AppendOPAInput, opaVerdict)
		t.sys.target = fmt.Sprintf("OPA process (pid %d) at %s, %d-rule Rego policy (POST /v1/data/%s, HTTP/1.1 keep-alive, JSON)", c.opa.pid, c.opa.url, c.cfg.Rules, RegoDecisionPath)
		t.sys.meaning = "latency of one POST /v1/data until its decision is read and checked"
		t.meters = []*costMeter{newCostMeter("opa", c.opa.pid, c.opa.url+"/metrics")}
	case TargetIntercept, TargetInterceptProto:
		if err := c.server(ctx); err != nil {
			return nil, err
		}
		if name == TargetIntercept {
			url := c.ahp.url + ahpv1connect.InterceptServiceInterceptProcedure
			t.sys.driver = newJSONTarget(url, "ahp-server", conc, expect, c.wl.AppendInterceptJSON, connectJSONVerdict)
			t.sys.target = c.serverDesc() + " (Connect protocol, JSON, HTTP/1.1 keep-alive: the OPA target's client and bodies)"
			t.sys.meaning = "latency of one Connect JSON Intercept POST until its decision is read and checked"
		} else {
			opts, _ := clientOptions("connect", false)
			client := ahpv1connect.NewInterceptServiceClient(httpClient(c.ahp.url), c.ahp.url, opts...)
			t.sys.driver = &unaryDriver{wl: c.wl, client: client, expect: expect}
			t.sys.target = c.serverDesc() + " (connect-go client: binary protobuf, HTTP/2 cleartext, accepts gzip)"
			t.sys.meaning = "latency of one unary Intercept call, from send to checked decision"
		}
		t.meters = []*costMeter{newCostMeter("ahp-server", c.ahp.pid, c.ahpM)}
	case TargetBridgeHTTP, TargetBridgeStdio:
		if err := c.openBridge(ctx, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (c *comparison) openBridge(ctx context.Context, t *compareTarget) error {
	if c.bridge == "" {
		bin, err := bridgeCommand.binary(ctx, c.cfg.BridgeBin, c.tmp, c.progress)
		if err != nil {
			return err
		}
		c.bridge = bin
	}
	maddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	setup := bridgeSetup{bin: c.bridge, concurrency: c.cfg.Load.Concurrency, metricsAddr: maddr}
	desc := fmt.Sprintf("embedded decision core, %d-rule CEL policy", c.cfg.Rules)
	if c.cfg.BridgeEmbedded {
		setup.policyFile = c.files.CEL
	} else {
		if err := c.server(ctx); err != nil {
			return err
		}
		setup.upstream, desc = c.ahp.url, c.serverDesc()
	}
	t.sys.target = describeBridge(t.name, false, setup, desc)
	if t.name == TargetBridgeHTTP {
		d, err := newHTTPDriver(setup, c.wl, t.sys.expect, c.cfg.Load.Concurrency)
		if err != nil {
			return err
		}
		t.sys.driver = d
		t.sys.meaning = "latency of one hooks/intercept POST to the bridge until its answer is read"
		t.meters = []*costMeter{newCostMeter("ahp-jsonrpc-bridge", d.cmd.Process.Pid, "http://"+maddr+"/metrics")}
	} else {
		d, err := newStdioDriver(setup, c.wl, t.sys.expect, c.cfg.Load.Concurrency)
		if err != nil {
			return err
		}
		t.sys.driver = d
		t.sys.meaning = "latency of one hooks/intercept line written to the bridge's stdin until its answer line is read"
		t.meters = []*costMeter{newCostMeter("ahp-jsonrpc-bridge", d.cmd.Process.Pid, "http://"+maddr+"/metrics")}
	}
	if !c.cfg.BridgeEmbedded {
		t.meters = append(t.meters, newCostMeter("ahp-server", c.ahp.pid, c.ahpM))
	}
	return nil
}

func (c *comparison) close() {
	for _, t := range c.targets {
		if t.sys.driver != nil {
			_ = t.sys.driver.close()
		}
	}
	if c.ahp != nil {
		_ = c.ahp.stop()
	}
	if c.opa != nil {
		_ = c.opa.stop()
	}
}

// WriteJSON writes the report as indented JSON.
func (r *CompareReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the latency table, the server-side cost table, the ratios to OPA and notes.
func (r *CompareReport) WriteText(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tcount\terrors\tdecisions/s\tp50 µs\tp90 µs\tp99 µs\tp99.9 µs\tmax µs\t")
	for _, res := range r.Results {
		l := res.Latency
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
			res.Target, res.Count, res.Errors, res.Throughput, l.P50, l.P90, l.P99, l.P999, l.Max)
		if s := res.ServiceTime; s != nil {
			fmt.Fprintf(tw, "  service time\t\t\t\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", s.P50, s.P90, s.P99, s.P999, s.Max)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\nserver-side cost per decision (from each process's runtime counters, read before and after every phase):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tprocess\tB/decision\tallocs/decision\tCPU µs/decision\tcores\tGC/s\tGC CPU %\tSTW ms\tlive heap MB\theap MB\t")
	for _, res := range r.Results {
		for _, c := range res.Cost {
			if c.Error != "" {
				fmt.Fprintf(tw, "%s\t%s\tERROR: %s\t\t\t\t\t\t\t\t\t\n", res.Target, c.Process, c.Error)
				continue
			}
			gcCPU, live := "n/a", "n/a"
			if c.GCCPUFraction != nil {
				gcCPU = fmt.Sprintf("%.2f", *c.GCCPUFraction*100)
			}
			if c.LiveHeapBytes != nil {
				live = fmt.Sprintf("%.1f", *c.LiveHeapBytes/1e6)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%.1f\t%.2f\t%.2f\t%s\t%.1f\t%s\t%.1f\t\n", res.Target, c.Process,
				c.BytesPerDecision, c.AllocsPerDecision, c.CPUMicrosPerDecision, c.CPUCores, c.GCPerSecond, gcCPU,
				c.GCPauseSeconds*1000, live, c.HeapAllocBytes/1e6)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for _, res := range r.Results {
		if v := res.VsOPA; v != nil {
			if first {
				b.WriteString("\nratio to opa (target / opa):\n")
				first = false
			}
			fmt.Fprintf(&b, "  %s: p50 %.3f, p99 %.3f, p99.9 %.3f, max %.3f, decisions/s %.3f\n", res.Target, v.P50, v.P99, v.P999, v.Max, v.Throughput)
		}
	}
	fmt.Fprintf(&b, "\npolicies: one list of %d shell-command regex rules, as CEL for ahp and as Rego for OPA (ahp-bench gen-policies).\n", r.Rules)
	for _, res := range r.Results {
		fmt.Fprintf(&b, "%s: %s; %s", res.Target, res.Result.Target, res.LatencyMeaning)
		if res.Interrupted {
			b.WriteString("; INTERRUPTED")
		}
		b.WriteString(".\n")
		kinds := make([]string, 0, len(res.ErrorKinds))
		for k := range res.ErrorKinds {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		for _, k := range kinds {
			fmt.Fprintf(&b, "  error ×%d: %s\n", res.ErrorKinds[k], k)
		}
	}
	b.WriteString("CPU is the process's user+system time (/proc/PID/stat), cores the average number it kept busy. " +
		"GC CPU % is the GC's share of the CPU the runtime had (GOMAXPROCS × wall time) and live heap the heap marked by the last GC, " +
		"both from runtime/metrics series (n/a where a process does not export them or no GC ended; the runtime updates its CPU classes at the end of each GC); STW is the total stop-the-world pause; " +
		"heap is the largest heap in use after a phase, garbage included.\n")
	m := r.Machine
	fmt.Fprintf(&b, "machine: %d CPUs (%s), GOMAXPROCS %d, load average %s → %s, %s %s/%s; %d round(s), targets rotating\n",
		m.NumCPU, m.CPUModel, m.GOMAXPROCS, m.LoadBefore, m.LoadAfter, m.GoVersion, m.OS, m.Arch, r.Rounds)
	_, err := io.WriteString(w, b.String())
	return err
}
