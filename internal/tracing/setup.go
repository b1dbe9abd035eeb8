package tracing

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Propagator is the propagator Setup installs: W3C Trace Context and Baggage.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Setup installs the global tracer provider and propagator from cfg and returns the function that
// flushes and stops them at shutdown.
//
// With no exporter the global provider stays the no-op one, so spans cost next to nothing, but the
// propagator is still installed: trace context arriving with a call is passed on to the calls it
// makes (bridge to server), so traces stay whole wherever they are recorded.
func Setup(ctx context.Context, cfg Config, opts ...Option) (shutdown func(context.Context) error, err error) {
	tp, err := NewProvider(ctx, cfg, opts...)
	if err != nil {
		return nil, err
	}
	otel.SetTextMapPropagator(Propagator())
	if tp == nil {
		return func(context.Context) error { return nil }, nil
	}
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// NewProvider builds the SDK tracer provider Setup would install, without touching globals. It
// returns nil (and no error) when there is no exporter.
func NewProvider(ctx context.Context, cfg Config, opts ...Option) (*sdktrace.TracerProvider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := buildOptions(opts)
	exp := o.exporter
	if exp == nil && cfg.Exporter == ExporterStdout {
		var err error
		if exp, err = stdouttrace.New(stdouttrace.WithWriter(o.writer)); err != nil {
			return nil, err
		}
	}
	if exp == nil {
		return nil, nil
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", cfg.serviceName())}
	if o.version != "" {
		attrs = append(attrs, attribute.String("service.version", o.version))
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.sampleRatio()))),
	), nil
}
