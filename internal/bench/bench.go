package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/audit"
)

// Transports: what a mode sends its requests over.
const (
	ModeIntercept       = "intercept"
	ModeInterceptStream = "intercept-stream"
	ModeObserveStream   = "observe-stream"
	ModeBridgeStdio     = "bridge-stdio"
	ModeBridgeHTTP      = "bridge-http"
	// ModeNoop alone is the no-op baseline of ModeIntercept; "noop:MODE" is that of MODE.
	ModeNoop = "noop"
)

// Transports lists the transports in the order the help shows them.
var Transports = []string{ModeIntercept, ModeInterceptStream, ModeObserveStream, ModeBridgeStdio, ModeBridgeHTTP}

// Mode is a transport and whether the system behind it is ahp-server or the no-op baseline.
type Mode struct {
	// Transport is one of Transports.
	Transport string
	// Noop selects the no-op baseline behind the transport.
	Noop bool
}

// ParseMode reads "intercept", "noop" (= "noop:intercept") or "noop:TRANSPORT".
func ParseMode(s string) (Mode, error) {
	if s == ModeNoop {
		return Mode{Transport: ModeIntercept, Noop: true}, nil
	}
	m := Mode{Transport: s}
	if rest, ok := strings.CutPrefix(s, ModeNoop+":"); ok {
		m = Mode{Transport: rest, Noop: true}
	}
	for _, t := range Transports {
		if m.Transport == t {
			return m, nil
		}
	}
	return Mode{}, fmt.Errorf("unknown mode %q: want %s, noop or noop:MODE", s, strings.Join(Transports, ", "))
}

// String returns the mode as ParseMode reads it.
func (m Mode) String() string {
	if m.Noop {
		return ModeNoop + ":" + m.Transport
	}
	return m.Transport
}

func (m Mode) bridge() bool { return m.Transport == ModeBridgeStdio || m.Transport == ModeBridgeHTTP }

// Config configures a Run. Zero values take the documented defaults.
type Config struct {
	// Mode is the mode to measure (see ParseMode).
	Mode string
	// Baseline is a mode to run in the same invocation for comparison ("" for none), typically
	// "noop:" + Mode's transport. The report gives the ratio of the p50 latencies.
	Baseline string
	// Load is the measured load (Duration and Requests are split across Rounds). Without
	// Duration and Requests the run lasts 10s. Timeout defaults to 10s, Concurrency to 1.
	Load Load
	// Rounds splits the measured load into this many slices, alternating the mode and the
	// baseline (and which goes first), so that both see the same machine (default 1).
	Rounds int
	// Warmup is an unmeasured phase before the first round, for each mode (0: none).
	Warmup time.Duration
	// PayloadBytes is the size of each tool input as JSON.
	PayloadBytes int
	// Batch is the number of events per ObserveStream message in the observe-stream modes (0 or
	// 1: one event per message). Each request is still one event: a worker buffers events and
	// sends a message when it holds Batch of them (the latency of that Send is charged to the
	// event that filled it) and flushes what is left at the end of a phase.
	Batch int
	// Protocol is the Connect client protocol: connect (default), grpc or grpcweb.
	Protocol string
	// JSON makes the Connect modes' client send and read JSON (connect.WithProtoJSON) instead of
	// binary protobuf, as a client of the Connect JSON protocol does.
	JSON bool
	// NoGzip stops the Connect client from accepting gzip-compressed answers (connect-go clients
	// accept them by default, and a server with default options then compresses every answer).
	NoGzip bool
	// PolicyFile is the policy of the in-process ahp-server ("" = BuiltinPolicy).
	PolicyFile string
	// Audit turns on the in-process ahp-server's audit log (required, so a record it cannot take
	// fails the decision). After the run the log is verified and must hold one record per
	// decision and accepted observation. AuditPath keeps it at that file (default: a temporary
	// directory, removed afterwards); AuditFsync is always, interval (default) or never.
	Audit      bool
	AuditPath  string
	AuditFsync string
	// Target is an existing ahp-server on a loopback address to use instead of an in-process one.
	Target string
	// ServerProcess runs ahp-server as a child process (ServerBin, or built with the go command)
	// instead of in this process: the topology of a deployment, where every client — a bridge
	// and a direct Connect caller alike — crosses a process boundary to reach the server. The
	// policy and audit settings apply to it as to the in-process server.
	ServerProcess bool
	// ServerBin is the ahp-server binary for ServerProcess; "" builds it with the go command.
	ServerBin string
	// NATS, with ServerProcess, runs the server in cluster mode on these NATS servers (its -nats).
	NATS string
	// BridgeBin is the ahp-jsonrpc-bridge binary; "" builds it with the go command.
	BridgeBin string
	// BridgeOnce runs the bridge modes' stdio transport per_event: one process per request.
	BridgeOnce bool
	// BridgeEmbedded runs the bridge with its in-process decision core (and PolicyFile) instead
	// of pointing it at ahp-server. The no-op baseline of a bridge mode always uses an upstream.
	BridgeEmbedded bool
	// Watchers is the number of Watch subscribers on the ahp-server during every phase of Mode
	// (0: none). Each has its own connection, drains its stream, and must receive every item of
	// the requests answered while it was subscribed; a missing, duplicated or wrong item, or a
	// stream the server ends early (a slow subscriber cut off by the hub), is an error.
	Watchers int
	// BaselineWatchers is the number of Watch subscribers during the phases of Baseline. With
	// Baseline equal to Mode this compares the same mode on the same server with and without
	// watchers.
	BaselineWatchers int
	// WatchConnections is the number of HTTP/2 connections the Watch subscribers of a phase share,
	// round robin (0: one each, as independent clients have; 1: all on one, as the streams of one
	// client process are by default).
	WatchConnections int
	// WatchFilter is the filter of every Watch request: comma-separated terms "decisions",
	// "type=T", "tool=K", "session=S" (a load worker's number or a literal session id); "" for
	// everything.
	WatchFilter string
	// WatchAsConsole makes the Watch subscribers subscribe as the web console's page does:
	// Connect with JSON over HTTP/1.1, one connection each, with an Origin header.
	WatchAsConsole bool
	// WatchFlushInterval is the flush_interval_ms of the console watchers' Watch requests: zero
	// asks for the console page's (ConsoleWatchFlushInterval), negative for none.
	WatchFlushInterval time.Duration
	// WatchersProcess runs the Watch subscribers in a child process (WatchersCommand) instead
	// of the load tool's own, as watchers on other machines would not share its runtime.
	WatchersProcess bool
	// WatchersCommand is the child's command line (default: this executable with "watchers",
	// see ServeWatchers).
	WatchersCommand []string
	// Progress receives one line per phase (nil: silent).
	Progress io.Writer
}

// Validate checks cfg without starting anything.
func (cfg *Config) Validate() error {
	if _, err := ParseMode(cfg.Mode); err != nil {
		return err
	}
	if cfg.Baseline != "" {
		if _, err := ParseMode(cfg.Baseline); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
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
	case cfg.Batch < 0 || cfg.Batch > MaxBatch:
		return fmt.Errorf("batch must be from 1 to %d events (the server's limit per message)", MaxBatch)
	case cfg.Load.Requests > 0 && cfg.Rounds > 0 && cfg.Load.Requests < uint64(cfg.Rounds):
		return errors.New("fewer requests than rounds")
	}
	if _, err := clientOptions(cfg.Protocol, cfg.NoGzip); err != nil {
		return err
	}
	if cfg.Batch > 1 {
		for _, name := range []string{cfg.Mode, cfg.Baseline} {
			if m, _ := ParseMode(name); name != "" && m.Transport != ModeObserveStream {
				return fmt.Errorf("--batch is for observe-stream modes; %s sends one event per request", name)
			}
		}
	}
	if cfg.Target != "" {
		if err := CheckLoopback(cfg.Target); err != nil {
			return err
		}
		if cfg.PolicyFile != "" {
			return errors.New("--policy is for the in-process ahp-server; an existing --target serves its own policy")
		}
		if cfg.BridgeEmbedded {
			return errors.New("--bridge-embedded runs the decision core inside the bridge; it cannot be combined with --target")
		}
		if cfg.Audit || cfg.AuditPath != "" || cfg.AuditFsync != "" {
			return errors.New("--audit is for the in-process ahp-server; an existing --target keeps its own audit log")
		}
		if cfg.ServerProcess {
			return errors.New("--server-process starts its own ahp-server; it cannot be combined with --target")
		}
	}
	if cfg.ServerBin != "" && !cfg.ServerProcess {
		return errors.New("--server-bin is the binary for --server-process")
	}
	if cfg.NATS != "" && !cfg.ServerProcess {
		return errors.New("--nats configures the ahp-server process (--server-process)")
	}
	switch cfg.AuditFsync {
	case "", "always", "interval", "never":
	default:
		return fmt.Errorf("audit fsync mode %q: want always, interval or never", cfg.AuditFsync)
	}
	return cfg.validateWatch()
}

func (cfg *Config) validateWatch() error {
	if cfg.Watchers < 0 || cfg.Watchers > MaxWatchers || cfg.BaselineWatchers < 0 || cfg.BaselineWatchers > MaxWatchers {
		return fmt.Errorf("watchers must be from 0 to %d", MaxWatchers)
	}
	if cfg.Watchers > 0 {
		m, _ := ParseMode(cfg.Mode)
		if err := cfg.watchable(m); err != nil {
			return fmt.Errorf("--watchers: %w", err)
		}
	}
	if cfg.BaselineWatchers > 0 {
		if cfg.Baseline == "" {
			return errors.New("--baseline-watchers needs a baseline")
		}
		m, _ := ParseMode(cfg.Baseline)
		if err := cfg.watchable(m); err != nil {
			return fmt.Errorf("--baseline-watchers: %w", err)
		}
	}
	if cfg.WatchConnections < 0 || cfg.WatchConnections > MaxWatchers {
		return fmt.Errorf("watch connections must be from 0 (one per watcher) to %d", MaxWatchers)
	}
	if cfg.WatchConnections > 0 && cfg.Watchers == 0 && cfg.BaselineWatchers == 0 {
		return errors.New("--watch-connections needs --watchers or --baseline-watchers")
	}
	if cfg.WatchAsConsole {
		if cfg.Watchers == 0 && cfg.BaselineWatchers == 0 {
			return errors.New("--watch-as-console needs --watchers or --baseline-watchers")
		}
		if cfg.WatchConnections > 0 {
			return errors.New("--watch-as-console gives each watcher its own HTTP/1.1 connection; it cannot be combined with --watch-connections")
		}
	}
	if cfg.WatchFlushInterval != 0 && !cfg.WatchAsConsole {
		return errors.New("--watch-flush-interval needs --watch-as-console")
	}
	if cfg.WatchFlushInterval > time.Second {
		return errors.New("--watch-flush-interval must be at most 1s (WatchRequest.flush_interval_ms)")
	}
	if cfg.WatchersProcess && !cfg.watching() {
		return errors.New("--watchers-process needs --watchers or --baseline-watchers")
	}
	if cfg.WatchFilter != "" {
		if cfg.Watchers == 0 && cfg.BaselineWatchers == 0 {
			return errors.New("--watch-filter needs --watchers or --baseline-watchers")
		}
		if _, err := parseWatchFilter(cfg.WatchFilter); err != nil {
			return err
		}
	}
	return nil
}

// watchable says why mode m cannot have Watch subscribers, if it cannot.
func (cfg *Config) watchable(m Mode) error {
	switch {
	case m.Noop:
		return fmt.Errorf("%s runs against no-op handlers, which serve no Watch", m)
	case m.bridge() && cfg.BridgeEmbedded:
		return fmt.Errorf("%s with --bridge-embedded decides inside the bridge; no ahp-server publishes its decisions", m)
	}
	return nil
}

// watching reports whether the run has Watch subscribers in any mode; the labels of the modes
// that can have them then say how many they had.
func (cfg *Config) watching() bool { return cfg.Watchers > 0 || cfg.BaselineWatchers > 0 }

func (cfg *Config) defaults() {
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
	if cfg.AuditPath != "" || cfg.AuditFsync != "" {
		cfg.Audit = true
	}
}

// Run measures cfg.Mode (and cfg.Baseline) and returns the report. It starts what it needs — an
// in-process ahp-server, the no-op server, bridge processes — and stops all of it before it
// returns. A cancelled ctx stops the load early; the report then says it was interrupted.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.defaults()
	mode, _ := ParseMode(cfg.Mode)
	wl, err := NewWorkload(cfg.PayloadBytes)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "ahp-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	e := &env{cfg: cfg, wl: wl, tmp: tmp}
	defer e.close()

	systems := []*system{}
	primary, err := e.open(ctx, mode, cfg.Watchers)
	if err != nil {
		return nil, err
	}
	systems = append(systems, primary)
	if cfg.Baseline != "" {
		bm, _ := ParseMode(cfg.Baseline)
		base, err := e.open(ctx, bm, cfg.BaselineWatchers)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		systems = append(systems, base)
	}

	if cfg.Audit && e.ahp == nil {
		return nil, errors.New("--audit is the in-process ahp-server's audit log, and no mode of this run uses that server")
	}

	report := &Report{Rounds: cfg.Rounds, Machine: CurrentMachine()}
	if cfg.Warmup > 0 {
		for _, s := range systems {
			e.progress("%s: warming up for %v", s.label, cfg.Warmup)
			warm := cfg.Load
			warm.Duration, warm.Requests = cfg.Warmup, 0
			runPhase(ctx, s, warm)
		}
	}
	for r := range cfg.Rounds {
		order := systems
		if r%2 == 1 && len(systems) == 2 {
			order = []*system{systems[1], systems[0]}
		}
		for _, s := range order {
			load := roundLoad(cfg.Load, cfg.Rounds, r)
			e.progress("%s: round %d/%d: %s", s.label, r+1, cfg.Rounds, describeLoad(load))
			s.stats.Merge(runPhase(ctx, s, load))
		}
		if ctx.Err() != nil {
			break
		}
	}
	report.Machine.LoadAfter = LoadAverage()

	results := make([]Result, len(systems))
	for i, s := range systems {
		results[i] = NewResult(s.label, s.target, cfg.Load, wl.InputBytes(0), &s.stats)
		results[i].LatencyMeaning = s.meaning
		if cfg.Load.Rate > 0 {
			results[i].LatencyMeaning = "from the due time at the fixed rate: " + s.meaning
		}
		results[i].ExpectationsLearned = s.expect.Learned()
		if s.watchable && cfg.watching() {
			if results[i].Watch == nil {
				results[i].Watch = &WatchResult{}
			}
			results[i].Watch.Filter = cfg.WatchFilter
			if s.watch != nil {
				results[i].Watch.Items = s.watch.items()
			}
		}
	}
	report.Run = results[0]
	for _, s := range systems {
		report.hists = append(report.hists, &s.stats.Latency)
	}
	if len(results) == 2 {
		report.Baseline = &results[1]
		report.P50Ratio = Ratio(results[0].Latency.P50, results[1].Latency.P50)
	}
	for _, s := range systems {
		if err := s.driver.close(); err != nil {
			return report, err
		}
		s.driver = nil
	}
	if e.auditPath != "" && e.ahp != nil {
		// Stopping the server drains in-flight work and closes the log; then it can be read.
		err := e.ahp.stop()
		e.ahp = nil
		if err != nil {
			return report, fmt.Errorf("stopping the ahp-server: %w", err)
		}
		var expected uint64
		counted := true
		for _, s := range systems {
			if s.audited {
				expected += s.recorded
				counted = counted && !s.uncertain
			}
		}
		report.Audit = checkAudit(e.auditPath, cfg.AuditPath == "", cfg.AuditFsync, e.auditStart, expected, counted)
	}
	return report, nil
}

// roundLoad is round r's share of the load.
func roundLoad(l Load, rounds, r int) Load {
	if rounds <= 1 {
		return l
	}
	if l.Duration > 0 {
		l.Duration /= time.Duration(rounds)
	}
	if l.Requests > 0 {
		share := l.Requests / uint64(rounds)
		if r == rounds-1 {
			share = l.Requests - share*uint64(rounds-1)
		}
		l.Requests = share
	}
	return l
}

func describeLoad(l Load) string {
	var parts []string
	if l.Duration > 0 {
		parts = append(parts, l.Duration.String())
	}
	if l.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", l.Requests))
	}
	parts = append(parts, fmt.Sprintf("concurrency %d", l.Concurrency))
	if l.Rate > 0 {
		parts = append(parts, fmt.Sprintf("%g/s", l.Rate))
	} else {
		parts = append(parts, "closed loop")
	}
	return strings.Join(parts, ", ")
}

// runPhase applies load to s and then ends the phase; Elapsed covers both, so that the closing of
// observe streams (the server's final count) is part of the throughput.
func runPhase(ctx context.Context, s *system, load Load) *Stats {
	// Sequence numbers restart with every phase; an offset per system and phase keeps event ids
	// unique within the run (an id seen before would be answered from the idempotency store).
	// The offset is even, so request n still runs Commands[n%2].
	base := uint64(s.index)<<56 | uint64(s.phases)<<40
	s.phases++
	op := func(ctx context.Context, w int, seq uint64) (time.Time, error) {
		return time.Time{}, s.driver.op(ctx, w, base+seq)
	}
	if t, ok := s.driver.(answerTimer); ok {
		op = func(ctx context.Context, w int, seq uint64) (time.Time, error) { return t.timedOp(ctx, w, base+seq) }
	}
	// Watchers subscribe before the phase and are gone after it; neither is part of its time.
	var watch *watchPhase
	if s.watch != nil {
		watch = s.watch.begin(base, load.Concurrency)
		inner := op
		op = func(ctx context.Context, w int, seq uint64) (time.Time, error) {
			answered, err := inner(ctx, w, seq)
			if err == nil {
				watch.answer(w, seq)
			}
			return answered, err
		}
	}
	start := time.Now()
	st := RunLoad(ctx, load, op)
	s.driver.endPhase(ctx, st)
	st.Elapsed = time.Since(start)
	if watch != nil {
		watch.finish(st)
	}
	// What the server must have recorded: every answered request, or for observe streams what
	// it said it accepted. After a failure or an interruption that is no longer known.
	if st.Errors > 0 || st.Interrupted {
		s.uncertain = true
	}
	if st.Accepted != nil {
		s.recorded += *st.Accepted
	} else {
		s.recorded += st.Count
	}
	return st
}

// system is one mode ready to run: its driver and what the report says about it.
type system struct {
	label   string
	target  string
	meaning string
	expect  *Expectation
	driver  driver
	stats   Stats
	index   int // position in the run, for unique event ids
	phases  int // phases run so far
	// watchable is set when the system's requests reach an ahp-server that serves Watch; watch is
	// its subscribers (nil: none).
	watchable bool
	watch     *watchGroup
	// audited is set when the system's requests reach the in-process ahp-server; recorded
	// counts what that server must have written to its audit log, unless uncertain.
	audited   bool
	recorded  uint64
	uncertain bool
}

// env starts what the systems of a run share, once each.
type env struct {
	cfg        Config
	wl         *Workload
	tmp        string
	auditPath  string // the audit log of the server ahp-bench started, in or out of process
	auditStart uint64 // the log's seq before the run (a kept log may already hold records)
	ahp        *running
	noop       *running
	policy     string
	bridge     string
	systems    []*system
}

func (e *env) progress(format string, a ...any) {
	if e.cfg.Progress != nil {
		fmt.Fprintf(e.cfg.Progress, "ahp-bench: "+format+"\n", a...)
	}
}

// policyFile returns the policy of the in-process server and the embedded bridge.
func (e *env) policyFile() (string, error) {
	if e.cfg.PolicyFile != "" {
		return e.cfg.PolicyFile, nil
	}
	if e.policy == "" {
		file, err := writeBuiltinPolicy(e.tmp)
		if err != nil {
			return "", err
		}
		e.policy = file
	}
	return e.policy, nil
}

func (e *env) policyDesc() string {
	if e.cfg.PolicyFile != "" {
		return "policy " + e.cfg.PolicyFile
	}
	return fmt.Sprintf("built-in policy %s (%d rules)", BuiltinPolicyName, PolicyRules)
}

// ahpURL returns the ahp-server to load: --target, or one started in-process.
func (e *env) ahpURL(ctx context.Context) (url, desc string, err error) {
	if e.cfg.Target != "" {
		return e.cfg.Target, "ahp-server at " + e.cfg.Target, nil
	}
	if e.ahp == nil {
		file, err := e.policyFile()
		if err != nil {
			return "", "", err
		}
		if e.cfg.ServerProcess {
			err = e.startServerProcess(ctx, file)
		} else {
			err = e.startInProcess(file)
		}
		if err != nil {
			return "", "", err
		}
	}
	desc = "in-process ahp-server at " + e.ahp.url
	if e.ahp.pid != 0 {
		desc = fmt.Sprintf("ahp-server process (pid %d) at %s", e.ahp.pid, e.ahp.url)
	}
	desc += ", " + e.policyDesc()
	if e.auditPath != "" {
		desc += ", audit log on"
	}
	return e.ahp.url, desc, nil
}

func (e *env) startInProcess(policyFile string) error {
	e.progress("starting an in-process ahp-server with the %s", e.policyDesc())
	var log *audit.Log // closed by the server when it stops
	if e.cfg.Audit {
		var err error
		if log, e.auditStart, err = openAudit(e.cfg.AuditPath, e.tmp, e.cfg.AuditFsync); err != nil {
			return err
		}
		e.auditPath = log.Path()
	}
	var err error
	e.ahp, err = startServer(policyFile, log)
	return err
}

func (e *env) startServerProcess(ctx context.Context, policyFile string) error {
	bin, err := serverCommand.binary(ctx, e.cfg.ServerBin, e.tmp, e.progress)
	if err != nil {
		return err
	}
	p := serverProcess{bin: bin, policyFile: policyFile, dir: e.tmp, nats: e.cfg.NATS}
	if e.cfg.Audit {
		// The server process writes the log; here it is opened only to learn where a kept log
		// stands before the run.
		l, start, err := openAudit(e.cfg.AuditPath, e.tmp, e.cfg.AuditFsync)
		if err != nil {
			return err
		}
		p.auditPath, p.auditFsync, e.auditStart = l.Path(), e.cfg.AuditFsync, start
		if err := l.Close(context.Background()); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		e.auditPath = p.auditPath
	}
	e.progress("starting ahp-server as a process (%s) with the %s", bin, e.policyDesc())
	e.ahp, err = startServerProcess(p)
	return err
}

func (e *env) noopURL() (url, desc string, err error) {
	if e.noop == nil {
		if e.noop, err = startNoop(); err != nil {
			return "", "", err
		}
	}
	return e.noop.url, "in-process no-op Connect handlers at " + e.noop.url + " (same http.Server settings, answer at once)", nil
}

func (e *env) bridgeBin(ctx context.Context) (string, error) {
	if e.bridge != "" && e.cfg.BridgeBin == "" {
		return e.bridge, nil // built once per run; a given binary is checked each time
	}
	bin, err := bridgeCommand.binary(ctx, e.cfg.BridgeBin, e.tmp, e.progress)
	if err == nil {
		e.bridge = bin
	}
	return bin, err
}

// open prepares mode m with that many Watch subscribers.
func (e *env) open(ctx context.Context, m Mode, watchers int) (*system, error) {
	s := &system{label: m.String(), index: len(e.systems)}
	// The built-in policy allows Commands[0] and denies Commands[1]; a no-op handler allows both;
	// any other policy is checked for consistency.
	switch {
	case m.Noop:
		s.expect = FixedExpectation(VerdictAllow, VerdictAllow)
	case e.cfg.Target == "" && e.cfg.PolicyFile == "":
		s.expect = FixedExpectation(VerdictAllow, VerdictDeny)
	default:
		s.expect = LearnedExpectation()
	}
	var err error
	var ahpURL string // the ahp-server behind the mode, if any
	if m.bridge() {
		ahpURL, err = e.openBridge(ctx, m, s)
	} else {
		ahpURL, err = e.openConnect(ctx, m, s)
	}
	if err != nil {
		return nil, err
	}
	s.watchable = ahpURL != ""
	if s.watchable && e.cfg.watching() {
		s.label += fmt.Sprintf(" --watchers %d", watchers)
	}
	if watchers > 0 {
		f, err := parseWatchFilter(e.cfg.WatchFilter)
		if err != nil {
			return nil, err
		}
		opts, err := clientOptions(e.cfg.Protocol, e.cfg.NoGzip)
		if err != nil {
			return nil, err
		}
		decided := m.Transport != ModeObserveStream
		s.watch = newWatchGroup(watchers, e.cfg.WatchConnections, ahpURL, opts, f, e.wl, e.cfg.Load.Concurrency, decided, s.expect, e.cfg.Load.Timeout)
		if e.cfg.WatchAsConsole {
			s.watch.subscribeAsConsole(ahpURL, e.cfg.WatchFlushInterval)
		}
		if e.cfg.WatchersProcess {
			if err := s.watch.inChildProcess(ctx, e.cfg.WatchersCommand, e.cfg.Protocol, e.cfg.NoGzip); err != nil {
				return nil, err
			}
		}
		s.target += fmt.Sprintf("; %d Watch subscribers", watchers)
	}
	e.systems = append(e.systems, s)
	return s, nil
}

// openConnect prepares a mode that calls ahp.v1 over Connect. It returns the URL of the
// ahp-server behind it ("" for the no-op handlers).
func (e *env) openConnect(ctx context.Context, m Mode, s *system) (ahpURL string, err error) {
	url, desc := "", ""
	if m.Noop {
		url, desc, err = e.noopURL()
	} else {
		url, desc, err = e.ahpURL(ctx)
		s.audited = e.cfg.Target == ""
		ahpURL = url
	}
	if err != nil {
		return "", err
	}
	opts, err := clientOptions(e.cfg.Protocol, e.cfg.NoGzip)
	if err != nil {
		return "", err
	}
	codec := "binary protobuf"
	if e.cfg.JSON {
		opts = append(opts, connect.WithProtoJSON())
		codec = "JSON"
	}
	hc := httpClient(url)
	proto := e.cfg.Protocol
	if proto == "" {
		proto = "connect"
	}
	gzip := "accepts gzip"
	if e.cfg.NoGzip {
		gzip = "no gzip"
	}
	s.target = fmt.Sprintf("%s (client: %s protocol, %s, HTTP/2, %s)", desc, proto, codec, gzip)
	switch m.Transport {
	case ModeIntercept:
		s.driver = &unaryDriver{wl: e.wl, client: ahpv1connect.NewInterceptServiceClient(hc, url, opts...), expect: s.expect}
		s.meaning = "latency of one unary Intercept call, from send to checked decision"
	case ModeInterceptStream:
		s.driver = newStreamDriver(ahpv1connect.NewInterceptServiceClient(hc, url, opts...), e.wl, s.expect)
		s.meaning = "latency of one event on a single InterceptStream shared by all workers, from send to its answer (matched by event id)"
	case ModeObserveStream:
		s.driver = newObserveDriver(ahpv1connect.NewObservationServiceClient(hc, url, opts...), e.wl, e.cfg.Load.Concurrency, e.cfg.Load.Timeout, e.cfg.Batch)
		s.meaning = "latency of one Send on the worker's own ObserveStream (there is no per-event answer); " +
			"throughput is events per second until every stream is closed and the server's accepted count is in"
		if e.cfg.Batch > 1 {
			s.meaning = fmt.Sprintf("events sent %d per ObserveStream message; latency of handing one event to the worker's buffer, "+
				"the Send of a full message charged to the event that filled it; ", e.cfg.Batch) +
				"throughput is events per second until every stream is closed and the server's accepted count is in"
		}
	}
	return ahpURL, nil
}

// openBridge prepares a mode that speaks Agent Hooks JSON-RPC to ahp-jsonrpc-bridge processes.
// It returns the URL of the ahp-server the bridge forwards to ("" for the no-op handlers and the
// embedded decision core).
func (e *env) openBridge(ctx context.Context, m Mode, s *system) (ahpURL string, err error) {
	bin, err := e.bridgeBin(ctx)
	if err != nil {
		return "", err
	}
	setup := bridgeSetup{bin: bin, concurrency: e.cfg.Load.Concurrency}
	var desc string
	switch {
	case m.Noop:
		setup.upstream, desc, err = e.noopURL()
	case e.cfg.BridgeEmbedded:
		setup.policyFile, err = e.policyFile()
		desc = e.policyDesc()
	default:
		setup.upstream, desc, err = e.ahpURL(ctx)
		s.audited = e.cfg.Target == ""
		ahpURL = setup.upstream
	}
	if err != nil {
		return "", err
	}
	once := e.cfg.BridgeOnce && m.Transport == ModeBridgeStdio
	s.target = describeBridge(m.Transport, once, setup, desc)
	switch {
	case once:
		s.label += " --once"
		s.driver = &onceDriver{setup: setup, wl: e.wl, expect: s.expect}
		s.meaning = "start-and-answer: from spawning the process to reading its answer line (\"until exit\": to the process's exit)"
	case m.Transport == ModeBridgeStdio:
		if s.driver, err = newStdioDriver(setup, e.wl, s.expect, e.cfg.Load.Concurrency); err != nil {
			return "", err
		}
		s.meaning = "latency of one hooks/intercept line written to the bridge's stdin until its answer line is read"
	default:
		if s.driver, err = newHTTPDriver(setup, e.wl, s.expect, e.cfg.Load.Concurrency); err != nil {
			return "", err
		}
		s.meaning = "latency of one hooks/intercept POST to the bridge until its answer is read"
	}
	return ahpURL, nil
}

// close stops what is still running: drivers first (they talk to the servers), then servers.
func (e *env) close() {
	for _, s := range e.systems {
		if s.driver != nil {
			_ = s.driver.close()
		}
		if s.watch != nil {
			s.watch.close()
		}
	}
	if e.ahp != nil {
		_ = e.ahp.stop()
	}
	if e.noop != nil {
		_ = e.noop.stop()
	}
}
