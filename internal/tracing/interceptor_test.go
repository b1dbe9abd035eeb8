package tracing_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"github.com/ahp-gateway/ahp/internal/tracing"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/structpb"
)

// hooksFixture is the Agent Hooks Protocol v0.1 stdio conformance request
// (fixtures/stdio/intercept-request.valid.jsonl): a tool.before event whose extensions carry
// org.w3c.trace_context.
const hooksFixture = `{"jsonrpc":"2.0","id":"evt_stdio_001","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"evt_stdio_001","source":"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"sess_123","cwd":"/repo","workspaceRoots":["/repo"]},"tool":{"callId":"call_456","name":"Bash","kind":"shell","input":{"command":"git push --force"}},"extensions":{"org.w3c.trace_context":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}},"capabilities":{"effects":["deny"]}}}`

const (
	fixtureTraceID = "0af7651916cd43dd8448eb211c80319c"
	fixtureSpanID  = "b7ad6b7169203331"
	headerParent   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	headerTraceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
)

// fixtureRequest decodes the fixture the way the bridge does.
func fixtureRequest(t *testing.T) *ahpv1.InterceptRequest {
	t.Helper()
	msg, err := hooks.DecodeMessage([]byte(hooksFixture))
	if err != nil {
		t.Fatal(err)
	}
	return msg.Intercept.Request
}

func eventWithTraceparent(t *testing.T, traceparent string) *ahpv1.Event {
	t.Helper()
	ext, err := structpb.NewStruct(map[string]any{tracing.TraceContextExtension: map[string]any{"traceparent": traceparent}})
	if err != nil {
		t.Fatal(err)
	}
	return &ahpv1.Event{Id: "e1", Type: ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, Extensions: ext}
}

// stub reports, in X-Trace-Id, the trace the handler ran in.
type stub struct {
	ahpv1connect.UnimplementedInterceptServiceHandler
	ahpv1connect.UnimplementedObservationServiceHandler
}

func traceHeader(ctx context.Context, h http.Header) {
	h.Set("X-Trace-Id", trace.SpanContextFromContext(ctx).TraceID().String())
}

func (stub) Intercept(ctx context.Context, _ *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	resp := connect.NewResponse(&ahpv1.InterceptResponse{})
	traceHeader(ctx, resp.Header())
	return resp, nil
}

func (stub) Observe(ctx context.Context, _ *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	resp := connect.NewResponse(&ahpv1.ObserveResponse{})
	traceHeader(ctx, resp.Header())
	return resp, nil
}

// tracedServer serves the stub with the tracing interceptor and records every span.
type tracedServer struct {
	mem *memhttp.Server
	url string
	rec *tracetest.SpanRecorder
	tp  *sdktrace.TracerProvider
}

func newTracedServer(t *testing.T, cfg tracing.Config) *tracedServer {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ic, err := tracing.NewInterceptor(cfg, tracing.WithTracerProvider(tp), tracing.WithPropagator(tracing.Propagator()))
	if err != nil {
		t.Fatal(err)
	}
	opt := connect.WithInterceptors(ic)
	mux := http.NewServeMux()
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(stub{}, opt))
	mux.Handle(ahpv1connect.NewObservationServiceHandler(stub{}, opt))
	mux.Handle(grpchealth.NewHandler(grpchealth.NewStaticChecker(), opt))
	reflector := grpcreflect.NewStaticReflector(grpchealth.HealthV1ServiceName)
	mux.Handle(grpcreflect.NewHandlerV1(reflector, opt))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, opt))
	mem := memhttp.New(t, mux)
	return &tracedServer{mem: mem, url: mem.URL(), rec: rec, tp: tp}
}

func (s *tracedServer) spans(kind trace.SpanKind) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.rec.Ended() {
		if sp.SpanKind() == kind {
			out = append(out, sp)
		}
	}
	return out
}

func (s *tracedServer) serverSpan(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := s.spans(trace.SpanKindServer)
	if len(spans) != 1 {
		t.Fatalf("%d server spans, want 1", len(spans))
	}
	return spans[0]
}

func assertEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

var protocols = []struct {
	name string
	opt  connect.ClientOption
}{
	{"connect", connect.WithProtoJSON()},
	{"grpc", connect.WithGRPC()},
	{"grpcweb", connect.WithGRPCWeb()},
}

// TestEventTraceparentBecomesParent: the Hooks fixture's traceparent parents the server span on
// every protocol, and the handler runs inside that trace.
func TestEventTraceparentBecomesParent(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s := newTracedServer(t, tracing.Config{})
			client := ahpv1connect.NewInterceptServiceClient(s.mem.Client(), s.url, p.opt)
			resp, err := client.Intercept(context.Background(), connect.NewRequest(fixtureRequest(t)))
			if err != nil {
				t.Fatal(err)
			}
			span := s.serverSpan(t)
			assertEqual(t, "span name", span.Name(), "ahp.v1.InterceptService/Intercept")
			assertEqual(t, "parent trace id", span.Parent().TraceID().String(), fixtureTraceID)
			assertEqual(t, "parent span id", span.Parent().SpanID().String(), fixtureSpanID)
			assertEqual(t, "parent is remote", span.Parent().IsRemote(), true)
			assertEqual(t, "span trace id", span.SpanContext().TraceID().String(), fixtureTraceID)
			assertEqual(t, "handler trace id", resp.Header().Get("X-Trace-Id"), fixtureTraceID)
		})
	}
}

func TestObserveTraceparentBecomesParent(t *testing.T) {
	t.Parallel()
	s := newTracedServer(t, tracing.Config{})
	client := ahpv1connect.NewObservationServiceClient(s.mem.Client(), s.url, connect.WithGRPC())
	_, err := client.Observe(context.Background(), connect.NewRequest(&ahpv1.ObserveRequest{Event: eventWithTraceparent(t, headerParent)}))
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "parent trace id", s.serverSpan(t).Parent().TraceID().String(), headerTraceID)
}

// TestHeaderWinsOverExtension: the event's context applies only when the transport carries none.
func TestHeaderWinsOverExtension(t *testing.T) {
	t.Parallel()
	s := newTracedServer(t, tracing.Config{})
	client := ahpv1connect.NewInterceptServiceClient(s.mem.Client(), s.url)
	req := connect.NewRequest(fixtureRequest(t))
	req.Header().Set("traceparent", headerParent)
	if _, err := client.Intercept(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "parent trace id", s.serverSpan(t).Parent().TraceID().String(), headerTraceID)
}

func TestInvalidExtensionIsIgnored(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"00-zzz", "00-00000000000000000000000000000000-b7ad6b7169203331-01", ""} {
		s := newTracedServer(t, tracing.Config{})
		client := ahpv1connect.NewObservationServiceClient(s.mem.Client(), s.url)
		_, err := client.Observe(context.Background(), connect.NewRequest(&ahpv1.ObserveRequest{Event: eventWithTraceparent(t, bad)}))
		if err != nil {
			t.Fatal(err)
		}
		span := s.serverSpan(t)
		assertEqual(t, "has parent for "+bad, span.Parent().IsValid(), false)
	}
	// Other shapes of the extension are ignored too.
	ev := &ahpv1.Event{Extensions: &structpb.Struct{Fields: map[string]*structpb.Value{
		tracing.TraceContextExtension: structpb.NewStringValue(headerParent),
	}}}
	if _, ok := tracing.EventSpanContext(ev); ok {
		t.Error("a string-valued extension was accepted")
	}
}

// TestLinkMode: with remote_parent: link the event's context is linked, not the parent.
func TestLinkMode(t *testing.T) {
	t.Parallel()
	s := newTracedServer(t, tracing.Config{RemoteParent: tracing.RemoteParentLink})
	client := ahpv1connect.NewInterceptServiceClient(s.mem.Client(), s.url)
	if _, err := client.Intercept(context.Background(), connect.NewRequest(fixtureRequest(t))); err != nil {
		t.Fatal(err)
	}
	span := s.serverSpan(t)
	assertEqual(t, "has parent", span.Parent().IsValid(), false)
	if links := span.Links(); len(links) != 1 {
		t.Errorf("%d links %+v, want one", len(links), links)
	} else if got := links[0].SpanContext.TraceID().String(); got != fixtureTraceID {
		t.Errorf("link to trace %s, want the fixture's %s", got, fixtureTraceID)
	}
}

// TestClientTakesEventParent: a bridge-side client call outside any span continues the agent's
// trace, and the server continues the bridge's.
func TestClientTakesEventParent(t *testing.T) {
	t.Parallel()
	s := newTracedServer(t, tracing.Config{})
	ic, err := tracing.NewInterceptor(tracing.Config{}, tracing.WithTracerProvider(s.tp), tracing.WithPropagator(tracing.Propagator()))
	if err != nil {
		t.Fatal(err)
	}
	client := ahpv1connect.NewInterceptServiceClient(s.mem.Client(), s.url, connect.WithInterceptors(ic))
	if _, err := client.Intercept(context.Background(), connect.NewRequest(fixtureRequest(t))); err != nil {
		t.Fatal(err)
	}
	clientSpans := s.spans(trace.SpanKindClient)
	if len(clientSpans) != 1 {
		t.Fatalf("%d client spans, want 1", len(clientSpans))
	}
	cs, ss := clientSpans[0], s.serverSpan(t)
	assertEqual(t, "client parent span id", cs.Parent().SpanID().String(), fixtureSpanID)
	assertEqual(t, "client trace id", cs.SpanContext().TraceID().String(), fixtureTraceID)
	assertEqual(t, "server parent is the client span", ss.Parent().SpanID(), cs.SpanContext().SpanID())
}

func TestHealthIsNotTracedByDefault(t *testing.T) {
	t.Parallel()
	for _, traceHealth := range []bool{false, true} {
		s := newTracedServer(t, tracing.Config{TraceHealth: traceHealth})
		req, _ := http.NewRequest(http.MethodPost, s.url+"/grpc.health.v1.Health/Check", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.mem.HTTP1Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		assertEqual(t, "status", resp.StatusCode, http.StatusOK)
		want := 0
		if traceHealth {
			want = 1
		}
		assertEqual(t, "health spans", len(s.spans(trace.SpanKindServer)), want)
	}
}

// TestReflectionIsInfrastructure: gRPC reflection, v1 and v1alpha, is health's kind of call —
// not traced unless health is.
func TestReflectionIsInfrastructure(t *testing.T) {
	t.Parallel()
	for _, traceHealth := range []bool{false, true} {
		s := newTracedServer(t, tracing.Config{TraceHealth: traceHealth})
		for _, service := range []string{grpcreflect.ReflectV1ServiceName, grpcreflect.ReflectV1AlphaServiceName} {
			// An empty gRPC stream: the handler runs (and ends at once), which is all tracing sees.
			req, _ := http.NewRequest(http.MethodPost, s.url+"/"+service+"/ServerReflectionInfo", http.NoBody)
			req.Header.Set("Content-Type", "application/grpc")
			resp, err := s.mem.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		want := 0
		if traceHealth {
			want = 2
		}
		assertEqual(t, "reflection spans", len(s.spans(trace.SpanKindServer)), want)
	}
}
