package metrics

import (
	"context"
	"errors"
	"github.com/ahp-gateway/ahp/internal/audit"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// DefaultMaxRuleLabels is the default cap on distinct rule label values.
const DefaultMaxRuleLabels = 512

// OtherRule is the rule label for rule ids beyond the cap.
const OtherRule = "_other"

// LatencyBuckets are the decision latency histogram's upper bounds in seconds, 5µs to 1s: policy
// evaluation normally takes microseconds, so the low end needs the resolution.
var LatencyBuckets = []float64{
	5e-6, 10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1,
}

// costMetrics selects the runtime/metrics series added to the default go_* ones: what a request
// costs the collector, read by ahp-bench under load (bytes and objects allocated, GC cycles, the
// live heap the collector marks, and the GC's share of the CPU the runtime had). They are read
// from runtime/metrics on each scrape, which does not stop the world.
var costMetrics = regexp.MustCompile(`^/(gc/heap/allocs:(bytes|objects)|gc/heap/live:bytes|gc/cycles/total:gc-cycles|cpu/classes/(gc/total|total):cpu-seconds)$`)

// Options configure New.
type Options struct {
	// Version is reported as ahp_build_info{version}.
	Version string
	// MaxRuleLabels caps how many distinct rule ids get their own series (default
	// DefaultMaxRuleLabels); the rest are counted under OtherRule. Policy reloads that rename rules
	// add series, so the cap bounds the total over the process's life.
	MaxRuleLabels int
	// NoRuntimeMetrics leaves out the Go runtime and process collectors (go_*, process_*).
	NoRuntimeMetrics bool
	// Logger receives errors from the /metrics handler (default slog.Default()).
	Logger *slog.Logger
}

// Metrics is the set of ahp metrics on one registry.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	// decisions[synthetic][verdict]
	decisions      [2][]prometheus.Counter
	unknownVerdict [2]prometheus.Counter
	effects        []prometheus.Counter // by EffectKind number
	latency        prometheus.Histogram
	ruleVec        *prometheus.CounterVec

	rulesMu   sync.Mutex                              // serialises additions to rules
	rules     atomic.Pointer[map[string]ruleCounters] // copy-on-write: readers never lock
	maxRules  int
	otherRule ruleCounters

	events       []prometheus.Counter // by EventType number
	unknownEvent prometheus.Counter

	watch atomic.Pointer[func() hub.Stats]
	audit atomic.Pointer[func() audit.Stats]

	bridgeOpen, bridgeClosed, bridgeObserve [][]prometheus.Counter // [dialect][reason]

	policyReloads, policyReloadFailures prometheus.Counter
	policyLastReloadOK                  prometheus.Gauge
	policyRules                         prometheus.Gauge
	policyInfo                          *prometheus.GaugeVec
	policyRevision                      prometheus.Gauge
	policyMu                            sync.Mutex

	auditWriteErrors prometheus.Counter
	auditQueueDepth  prometheus.Gauge

	authFailures map[string]prometheus.Counter
	authOther    prometheus.Counter

	connsOpen    prometheus.Gauge
	connsRefused map[string]prometheus.Counter

	approvalsPending prometheus.Gauge
	approvalOutcomes map[string]prometheus.Counter
	approvalLatency  prometheus.Histogram
	approvalNotify   map[string]prometheus.Counter
}

// New creates the metrics on a fresh registry.
func New(opts Options) *Metrics {
	if opts.MaxRuleLabels <= 0 {
		opts.MaxRuleLabels = DefaultMaxRuleLabels
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: opts.Logger, maxRules: opts.MaxRuleLabels}
	f := factory{m.reg}
	if !opts.NoRuntimeMetrics {
		m.reg.MustRegister(
			collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.GoRuntimeMetricsRule{Matcher: costMetrics})),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	f.gaugeVec("ahp_build_info", "Always 1; the version label says which build is running.", "version").
		WithLabelValues(opts.Version).Set(1)

	m.initDecisions(f)
	m.initEvents(f)
	m.initBridge(f)
	m.initOps(f)
	m.initConnections(f)
	m.initApprovals(f)
	return m
}

// Registry is the registry the metrics live on, for registering more collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text (or negotiated OpenMetrics) format; mount it
// at /metrics on an existing mux, or use Serve for a listener of its own.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelError),
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
		Timeout:           10 * time.Second,
	})
}

// Serve serves Handler at /metrics on ln until ctx is done, then shuts down (waiting up to 5s for
// scrapes in flight). A separate listener keeps metrics off the API port, so a scraper needs no
// API credentials and API callers cannot read operational data.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	return err
}

// factory registers metrics on one registry.
type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}

// enumLabels returns a label value for every number of a proto enum, indexed by number: the value
// name without prefix, lower-cased (VERDICT_ALLOW -> "allow"). Numbers without a value get "".
func enumLabels(d protoreflect.EnumDescriptor, prefix string) []string {
	values := d.Values()
	n := 0
	for i := range values.Len() {
		n = max(n, int(values.Get(i).Number()))
	}
	out := make([]string, n+1)
	for i := range values.Len() {
		v := values.Get(i)
		if v.Number() >= 0 {
			out[v.Number()] = strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix))
		}
	}
	return out
}
