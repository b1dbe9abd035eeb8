// Package tracing sets up OpenTelemetry tracing for ahp-server and the bridge.
//
// Setup installs a tracer provider — none at all unless an exporter is configured, so tracing
// costs nothing by default — and the W3C Trace Context propagator. NewInterceptor returns the
// Connect interceptor (connectrpc.com/otelconnect) that starts a span per RPC, plus one ahp rule:
// a W3C traceparent an agent put in its event, under extensions["org.w3c.trace_context"] (the
// Agent Hooks Protocol shape), continues the agent's trace when the transport headers carry none.
//
// docs/observability.md describes the configuration.
package tracing
