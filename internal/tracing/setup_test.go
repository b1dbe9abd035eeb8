package tracing_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/tracing"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// restoreGlobals puts the global propagator back after a Setup test (the initial global tracer
// provider cannot be put back, and the interceptor tests never use it). Setup tests are not
// parallel for that reason.
func restoreGlobals(t *testing.T) {
	prop := otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTextMapPropagator(prop) })
}

func TestSetupOffByDefault(t *testing.T) {
	restoreGlobals(t)
	before := otel.GetTracerProvider()
	shutdown, err := tracing.Setup(context.Background(), tracing.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != before {
		t.Error("Setup with no exporter replaced the tracer provider")
	}
	// The propagator is installed regardless, so trace context flows through.
	carrier := propagation.MapCarrier{"traceparent": headerParent}
	ctx := otel.GetTextMapPropagator().Extract(context.Background(), carrier)
	assertEqual(t, "propagated trace id", trace.SpanContextFromContext(ctx).TraceID().String(), headerTraceID)
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSetupStdout(t *testing.T) {
	restoreGlobals(t)
	var out bytes.Buffer
	shutdown, err := tracing.Setup(context.Background(), tracing.Config{Exporter: tracing.ExporterStdout, ServiceName: "ahp-test"},
		tracing.WithWriter(&out), tracing.WithVersion("v9"))
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "hello")
	span.End()
	if err := shutdown(context.Background()); err != nil { // flushes the batcher
		t.Fatal(err)
	}
	for _, want := range []string{`"Name":"hello"`, `"Value":"ahp-test"`, `"Value":"v9"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout exporter output lacks %s: %s", want, out.String())
		}
	}
}

// TestSetupCustomExporter is the extension point for exporters not built in (OTLP).
func TestSetupCustomExporter(t *testing.T) {
	restoreGlobals(t)
	exp := tracetest.NewInMemoryExporter()
	shutdown, err := tracing.Setup(context.Background(), tracing.Config{SampleRatio: 1}, tracing.WithSpanExporter(exp))
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "exported")
	span.End()
	// Flush before shutdown: shutting the in-memory exporter down empties it.
	if err := otel.GetTracerProvider().(*sdktrace.TracerProvider).ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if spans := exp.GetSpans(); len(spans) != 1 {
		t.Errorf("%d exported spans %v, want one", len(spans), spans)
	} else if spans[0].Name != "exported" {
		t.Errorf("exported span %q, want \"exported\"", spans[0].Name)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	for _, cfg := range []tracing.Config{
		{Exporter: "otlp"},
		{RemoteParent: "trust"},
		{SampleRatio: 1.5},
		{SampleRatio: -0.1},
	} {
		if _, err := tracing.NewProvider(context.Background(), cfg); err == nil {
			t.Errorf("NewProvider(%+v) accepted an invalid config", cfg)
		}
		if _, err := tracing.NewInterceptor(cfg); err == nil {
			t.Errorf("NewInterceptor(%+v) accepted an invalid config", cfg)
		}
	}
}
