package tracing

import (
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Exporters known by name in Config.Exporter.
const (
	// ExporterNone exports nothing and installs no SDK (the default).
	ExporterNone = "none"
	// ExporterStdout writes spans as JSON lines, for debugging. They go to standard error by
	// default: standard output may be a JSON-RPC channel (the bridge's stdio transport).
	ExporterStdout = "stdout"
)

// Remote parent modes for Config.RemoteParent.
const (
	// RemoteParentParent makes an incoming trace context the parent of the server span (the
	// default): the agent's trace continues through ahp.
	RemoteParentParent = "parent"
	// RemoteParentLink starts a new trace for each call and links it to the incoming context, for
	// servers that do not trust callers to choose their trace ids.
	RemoteParentLink = "link"
)

// Config is the tracing section of the configuration file:
//
//	tracing:
//	  exporter: none          # none (default) | stdout
//	  service_name: ahp-server
//	  sample_ratio: 1         # share of new traces sampled; callers' sampling decisions are kept
//	  remote_parent: parent   # parent (default) | link
//	  trace_health: false     # also trace gRPC health checks and reflection
type Config struct {
	// Exporter names the span exporter: "" or ExporterNone, or ExporterStdout. WithSpanExporter
	// plugs in any other (OTLP, for one).
	Exporter string `yaml:"exporter"`
	// ServiceName is the service.name resource attribute (default "ahp-server").
	ServiceName string `yaml:"service_name"`
	// SampleRatio is the share of new root traces sampled, in (0, 1]; 0 means 1. A caller's
	// sampling decision (the traceparent flags) is always followed.
	SampleRatio float64 `yaml:"sample_ratio"`
	// RemoteParent is RemoteParentParent (default) or RemoteParentLink.
	RemoteParent string `yaml:"remote_parent"`
	// TraceHealth traces grpc.health.v1 and reflection calls too; off by default because probes
	// would drown the traces that matter.
	TraceHealth bool `yaml:"trace_health"`
}

// Validate checks the enumerated fields.
func (c Config) Validate() error {
	switch c.Exporter {
	case "", ExporterNone, ExporterStdout:
	default:
		return fmt.Errorf("tracing: exporter %q is not built in (none, stdout); plug others in with WithSpanExporter", c.Exporter)
	}
	switch c.RemoteParent {
	case "", RemoteParentParent, RemoteParentLink:
	default:
		return fmt.Errorf("tracing: remote_parent must be parent or link, not %q", c.RemoteParent)
	}
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		return fmt.Errorf("tracing: sample_ratio must be between 0 and 1, not %v", c.SampleRatio)
	}
	return nil
}

func (c Config) serviceName() string {
	if c.ServiceName == "" {
		return "ahp-server"
	}
	return c.ServiceName
}

func (c Config) sampleRatio() float64 {
	if c.SampleRatio == 0 {
		return 1
	}
	return c.SampleRatio
}

// Option adjusts Setup or NewInterceptor.
type Option func(*options)

type options struct {
	exporter   sdktrace.SpanExporter
	writer     io.Writer
	version    string
	provider   trace.TracerProvider
	propagator propagation.TextMapPropagator
}

func buildOptions(opts []Option) options {
	o := options{writer: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithSpanExporter makes Setup export to e (and own its shutdown), whatever Config.Exporter says.
// This is the extension point for exporters not built in, such as OTLP.
func WithSpanExporter(e sdktrace.SpanExporter) Option {
	return func(o *options) { o.exporter = e }
}

// WithWriter sets where the stdout exporter writes (default os.Stderr).
func WithWriter(w io.Writer) Option {
	return func(o *options) { o.writer = w }
}

// WithVersion sets the service.version resource attribute.
func WithVersion(v string) Option {
	return func(o *options) { o.version = v }
}

// WithTracerProvider makes NewInterceptor use tp instead of the global provider, which Setup
// installs (tests, or an embedder with its own provider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.provider = tp }
}

// WithPropagator makes NewInterceptor use p instead of Propagator().
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(o *options) { o.propagator = p }
}
