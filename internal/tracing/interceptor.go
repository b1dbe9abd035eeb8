package tracing

import (
	"context"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/otelconnect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/structpb"
)

// TraceContextExtension is the event extension key that carries W3C Trace Context fields
// ("traceparent", "tracestate"), as Agent Hooks Protocol events do.
const TraceContextExtension = "org.w3c.trace_context"

// NewInterceptor returns the tracing interceptor for handlers and clients: otelconnect spans
// (named after the procedure, with the rpc.* attributes; metrics off, since ahp's metrics are
// Prometheus) plus the event trace context rule:
//
//   - handler side: a unary request whose event carries a valid traceparent extension, and whose
//     headers carry none, is treated as if the traceparent had arrived as a header;
//   - client side (the bridge): a call made outside any span takes the event's traceparent as the
//     parent of its client span, so agent, bridge and server share one trace.
//
// Put it first among the interceptors so its span covers the others.
func NewInterceptor(cfg Config, opts ...Option) (connect.Interceptor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := buildOptions(opts)
	propagator := o.propagator
	if propagator == nil {
		propagator = Propagator() // what Setup installs, whether or not it ran first
	}
	oopts := []otelconnect.Option{otelconnect.WithoutMetrics(), otelconnect.WithPropagator(propagator)}
	if o.provider != nil {
		oopts = append(oopts, otelconnect.WithTracerProvider(o.provider))
	}
	if cfg.RemoteParent != RemoteParentLink {
		oopts = append(oopts, otelconnect.WithTrustRemote())
	}
	if !cfg.TraceHealth {
		oopts = append(oopts, otelconnect.WithFilter(func(_ context.Context, spec connect.Spec) bool {
			return !isInfrastructure(spec.Procedure)
		}))
	}
	inner, err := otelconnect.NewInterceptor(oopts...)
	if err != nil {
		return nil, err
	}
	return &interceptor{inner: inner}, nil
}

// infrastructure are the services that are not AHP calls: health and gRPC reflection (the
// reflection names as grpcreflect spells them, without linking it into binaries that never serve
// reflection).
var infrastructure = []string{grpchealth.HealthV1ServiceName, "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}

func isInfrastructure(procedure string) bool {
	for _, svc := range infrastructure {
		if strings.HasPrefix(procedure, "/"+svc+"/") {
			return true
		}
	}
	return false
}

// interceptor runs the event rule before otelconnect sees the call.
type interceptor struct {
	inner *otelconnect.Interceptor
}

func (i *interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	traced := i.inner.WrapUnary(next)
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if ev, ok := req.Any().(interface{ GetEvent() *ahpv1.Event }); ok {
			if req.Spec().IsClient {
				ctx = contextWithEventParent(ctx, ev.GetEvent())
			} else {
				headerFromEvent(req.Header(), ev.GetEvent())
			}
		}
		return traced(ctx, req)
	}
}

func (i *interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return i.inner.WrapStreamingClient(next)
}

func (i *interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	// A stream's span starts before its first message, so events cannot parent it; per-event
	// spans in a stream handler can use EventSpanContext.
	return i.inner.WrapStreamingHandler(next)
}

// w3c parses and writes traceparent/tracestate whatever propagator is installed globally: the
// extension is W3C-shaped by definition.
var w3c = propagation.TraceContext{}

// EventSpanContext returns the remote span context an event carries in its
// "org.w3c.trace_context" extension, if it carries a valid one.
func EventSpanContext(ev *ahpv1.Event) (trace.SpanContext, bool) {
	fields := ev.GetExtensions().GetFields()[TraceContextExtension].GetStructValue().GetFields()
	parent := stringField(fields, "traceparent")
	if parent == "" {
		return trace.SpanContext{}, false
	}
	carrier := propagation.MapCarrier{"traceparent": parent}
	if state := stringField(fields, "tracestate"); state != "" {
		carrier["tracestate"] = state
	}
	sc := trace.SpanContextFromContext(w3c.Extract(context.Background(), carrier))
	return sc, sc.IsValid()
}

func stringField(fields map[string]*structpb.Value, name string) string {
	s, ok := fields[name].GetKind().(*structpb.Value_StringValue)
	if !ok {
		return ""
	}
	return s.StringValue
}

// headerFromEvent sets the traceparent (and tracestate) header from the event when the request
// carries none, so otelconnect treats it exactly like a transport header, trust setting included.
func headerFromEvent(h http.Header, ev *ahpv1.Event) {
	if h.Get("traceparent") != "" {
		return
	}
	sc, ok := EventSpanContext(ev)
	if !ok {
		return
	}
	w3c.Inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), propagation.HeaderCarrier(h))
}

// contextWithEventParent makes the event's trace context the parent for a call made outside any
// span.
func contextWithEventParent(ctx context.Context, ev *ahpv1.Event) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	if sc, ok := EventSpanContext(ev); ok {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}
