package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// unaryClients is every unary RPC of the four services: what Local offers, and what the four
// generated clients offer together.
type unaryClients interface {
	Intercept(context.Context, *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error)
	InterceptBatch(context.Context, *connect.Request[ahpv1.InterceptBatchRequest]) (*connect.Response[ahpv1.InterceptBatchResponse], error)
	Idle(context.Context, *connect.Request[ahpv1.IdleRequest]) (*connect.Response[ahpv1.IdleResponse], error)
	HandleRateLimit(context.Context, *connect.Request[ahpv1.HandleRateLimitRequest]) (*connect.Response[ahpv1.HandleRateLimitResponse], error)
	Observe(context.Context, *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error)
	Handshake(context.Context, *connect.Request[ahpv1.HandshakeRequest]) (*connect.Response[ahpv1.HandshakeResponse], error)
	Query(context.Context, *connect.Request[ahpv1.QueryRequest]) (*connect.Response[ahpv1.QueryResponse], error)
	GetCapabilities(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error)
}

var _ unaryClients = (*Local)(nil)

// httpClients are the generated clients of one server over HTTP.
type httpClients struct {
	ahpv1connect.InterceptServiceClient
	ahpv1connect.TypedDecisionServiceClient
	ahpv1connect.ObservationServiceClient
	ahpv1connect.HarnessServiceClient
}

// newServer builds a server with the built-in policy; tweak, if any, adjusts the config.
func newServer(t *testing.T, tweak func(*Config)) *Server {
	t.Helper()
	cfg := Config{Logger: testkit.Discard(), Version: "test"}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// newLocal builds a server (see newServer) and its Local, closed when the test ends.
func newLocal(t *testing.T, opts LocalOptions, tweak func(*Config)) (*Server, *Local) {
	t.Helper()
	srv := newServer(t, tweak)
	l, err := srv.Local(opts)
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "Local", l.Close)
	return srv, l
}

// newHTTP builds the same server behind its http.Server, in memory, and returns HTTP/1.1
// clients for it.
func newHTTP(t *testing.T, tweak func(*Config), opts ...connect.ClientOption) unaryClients {
	t.Helper()
	mem := memhttp.Serve(t, newServer(t, tweak).HTTPServer())
	hc, url := mem.HTTP1Client(), mem.URL()
	return httpClients{
		ahpv1connect.NewInterceptServiceClient(hc, url, opts...),
		ahpv1connect.NewTypedDecisionServiceClient(hc, url, opts...),
		ahpv1connect.NewObservationServiceClient(hc, url, opts...),
		ahpv1connect.NewHarnessServiceClient(hc, url, opts...),
	}
}

// rpcCase is one call, made the same way through Local and over HTTP.
type rpcCase struct {
	name string
	call func(context.Context, unaryClients) (proto.Message, error)
	code connect.Code // the error expected; 0 for an answer
}

// call is a case's call of rpc (a method expression such as unaryClients.Observe) with msg. Each
// call sends its own copy, since a handler may fill in the request it is handed in-process.
func call[Req, Res any, PReq interface {
	*Req
	proto.Message
}](rpc func(unaryClients, context.Context, *connect.Request[Req]) (*connect.Response[Res], error), msg PReq) func(context.Context, unaryClients) (proto.Message, error) {
	return func(ctx context.Context, c unaryClients) (proto.Message, error) {
		return msgOf(rpc(c, ctx, connect.NewRequest((*Req)(proto.Clone(msg).(PReq)))))
	}
}

func rpcCases() []rpcCase {
	intercept := func(ev *ahpv1.Event) func(context.Context, unaryClients) (proto.Message, error) {
		return call(unaryClients.Intercept, &ahpv1.InterceptRequest{Event: ev, Capabilities: &ahpv1.Capabilities{
			Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_ASK},
		}})
	}
	return []rpcCase{
		{"intercept allowed", intercept(testkit.ShellEvent("e-allow", "ls -la")), 0},
		{"intercept denied", intercept(testkit.ShellEvent("e-deny", "rm -rf /")), 0},
		{"intercept asks", intercept(testkit.ShellEvent("e-ask", "git push --force origin main")), 0},
		{"intercept replayed", intercept(testkit.ShellEvent("e-deny", "rm -rf /")), 0},
		{"intercept conflicting replay", intercept(testkit.ShellEvent("e-deny", "rm -rf /tmp/x")), 0},
		{"intercept invalid event", intercept(&ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE}), connect.CodeInvalidArgument},
		{"intercept without event", intercept(nil), connect.CodeInvalidArgument},
		{"batch", call(unaryClients.InterceptBatch, &ahpv1.InterceptBatchRequest{Events: []*ahpv1.Event{testkit.ShellEvent("b1", "ls"), testkit.ShellEvent("b2", "mkfs.ext4 /dev/sda1")}}), 0},
		{"typed idle without its payload", call(unaryClients.Idle, &ahpv1.IdleRequest{Event: testkit.Event("idle-1", ahpv1.EventType_EVENT_TYPE_UNSPECIFIED)}), connect.CodeInvalidArgument},
		{"typed rate limit", call(unaryClients.HandleRateLimit, &ahpv1.HandleRateLimitRequest{Event: &ahpv1.Event{
			Id: "rl-1", Body: &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{
				SessionId: "s1", RetryAfterMs: 1500, CurrentUsage: "95000/100000 tokens",
				LimitType: &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Known{Known: ahpv1.RateLimitKind_RATE_LIMIT_KIND_LLM_TOKEN_LIMIT}},
			}},
		}}), 0},
		{"typed rate limit invalid", call(unaryClients.HandleRateLimit, &ahpv1.HandleRateLimitRequest{}), connect.CodeInvalidArgument},
		{"observe", call(unaryClients.Observe, &ahpv1.ObserveRequest{Event: testkit.Event("o1", ahpv1.EventType_EVENT_TYPE_SESSION_START)}), 0},
		{"observe duplicate", call(unaryClients.Observe, &ahpv1.ObserveRequest{Event: testkit.Event("o1", ahpv1.EventType_EVENT_TYPE_SESSION_START)}), 0},
		{"observe a decided type", call(unaryClients.Observe, &ahpv1.ObserveRequest{Event: testkit.ShellEvent("o2", "ls")}), 0},
		{"handshake", call(unaryClients.Handshake, &ahpv1.HandshakeRequest{ProtocolVersion: "2.4", AgentInfo: &ahpv1.AgentInfo{Framework: "test"}, SessionId: "s1"}), 0},
		{"handshake unsupported version", call(unaryClients.Handshake, &ahpv1.HandshakeRequest{ProtocolVersion: "3.0", AgentInfo: &ahpv1.AgentInfo{}}), connect.CodeFailedPrecondition},
		{"handshake invalid", call(unaryClients.Handshake, &ahpv1.HandshakeRequest{ProtocolVersion: "2.4"}), connect.CodeInvalidArgument},
		{"query", call(unaryClients.Query, &ahpv1.QueryRequest{SessionId: "s1", QueryType: "policy", Payload: structpb.NewStringValue("may I?")}), 0},
		{"query invalid", call(unaryClients.Query, &ahpv1.QueryRequest{}), connect.CodeInvalidArgument},
		{"capabilities", call(unaryClients.GetCapabilities, &ahpv1.GetCapabilitiesRequest{}), 0},
		{"nil request", call(unaryClients.GetCapabilities, (*ahpv1.GetCapabilitiesRequest)(nil)), 0},
	}
}

// wantError fails unless err has code and, as wire says, did or did not come over the wire (a
// server's answer rather than the client's own error).
func wantError(t *testing.T, what string, err error, code connect.Code, wire bool) {
	t.Helper()
	if got := connect.CodeOf(err); got != code {
		t.Errorf("%s: %v, want code %v", what, err, code)
	}
	if got := connect.IsWireError(err); got != wire {
		t.Errorf("%s: %v is a wire error: %v, want %v", what, err, got, wire)
	}
}

// msgOf returns r's message, or nil with err.
func msgOf[T any](r *connect.Response[T], err error) (proto.Message, error) {
	if err != nil {
		return nil, err
	}
	return any(r.Msg).(proto.Message), nil
}

// volatile fields differ between two servers deciding the same thing.
var volatile = map[protoreflect.Name]bool{"decision_id": true, "latency_us": true, "session_token": true}

// stable clears the volatile fields of m, recursively, and returns it.
func stable(m proto.Message) proto.Message {
	if m == nil {
		return nil
	}
	var clear func(protoreflect.Message)
	clear = func(r protoreflect.Message) {
		r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case volatile[fd.Name()]:
				r.Clear(fd)
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					clear(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { clear(mv.Message()); return true })
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				clear(v.Message())
			}
			return true
		})
	}
	clear(m.ProtoReflect())
	return m
}

// Every unary RPC answers through Local exactly as over HTTP: the same answers, and the same
// errors, codes, messages and wire-ness included.
func TestLocalAnswersAsOverHTTP(t *testing.T) {
	t.Parallel()
	_, local := newLocal(t, LocalOptions{}, nil)
	remote := newHTTP(t, nil)
	ctx := context.Background()
	for _, c := range rpcCases() {
		got, gotErr := c.call(ctx, local)
		want, wantErr := c.call(ctx, remote)
		if connect.CodeOf(wantErr) != c.code && (wantErr != nil || c.code != 0) {
			t.Errorf("%s: over HTTP %v, want code %v", c.name, wantErr, c.code)
		}
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: local err %v, over HTTP %v", c.name, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			if connect.CodeOf(gotErr) != connect.CodeOf(wantErr) {
				t.Errorf("%s: connect.CodeOf(gotErr) = %v, want %v: %v", c.name, connect.CodeOf(gotErr), connect.CodeOf(wantErr), gotErr)
			} else if gotErr.Error() != wantErr.Error() {
				t.Errorf("%s: gotErr.Error() = %v, want %v: %v", c.name, gotErr.Error(), wantErr.Error(), gotErr)
			} else if connect.IsWireError(gotErr) != connect.IsWireError(wantErr) {
				t.Errorf("%s: connect.IsWireError(gotErr) = %v, want %v: %v", c.name, connect.IsWireError(gotErr), connect.IsWireError(wantErr), gotErr)
			}
			continue
		}
		if !proto.Equal(stable(got), stable(want)) {
			t.Errorf("%s:\nlocal     %v\nover HTTP %v", c.name, got, want)
		}
	}
}

// The request limit is the server's connection limit (a wire error over HTTP) and does not apply
// in-process, where the caller's own transport bounded the request; the answer limit is the
// client's (not a wire error), in-process only when LocalOptions set it.
func TestLocalSizeLimits(t *testing.T) {
	t.Parallel()
	big := testkit.ShellEvent("big", strings.Repeat("x", 4096))
	small := func(c *Config) { c.MaxRequestBytes = 1024 }
	_, local := newLocal(t, LocalOptions{}, small)
	remote := newHTTP(t, small)
	ctx := context.Background()
	_, wantErr := remote.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: big}))
	wantError(t, "big request over HTTP", wantErr, connect.CodeResourceExhausted, true)
	if _, err := local.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: big})); err != nil {
		t.Errorf("big request in-process: %v, want it decided", err)
	}

	_, tight := newLocal(t, LocalOptions{MaxResponseBytes: 8}, nil)
	tightRemote := newHTTP(t, nil, connect.WithReadMaxBytes(8))
	_, gotErr := tight.GetCapabilities(ctx, connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
	_, wantErr = tightRemote.GetCapabilities(ctx, connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
	wantError(t, "big answer through Local", gotErr, connect.CodeResourceExhausted, false)
	wantError(t, "big answer over HTTP", wantErr, connect.CodeResourceExhausted, false)
}

// Local copies nothing: the handler works on the caller's request (the core fills in the event
// type the call names) and the answer is the handler's own message.
func TestLocalHandsRequestsOver(t *testing.T) {
	t.Parallel()
	_, local := newLocal(t, LocalOptions{}, nil)
	ev := testkit.Event("handover", ahpv1.EventType_EVENT_TYPE_UNSPECIFIED)
	ev.Body = &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{}}
	resp, err := local.Idle(context.Background(), connect.NewRequest(&ahpv1.IdleRequest{Event: ev}))
	if err != nil {
		t.Fatal(err)
	}
	if ev.GetType() != ahpv1.EventType_EVENT_TYPE_IDLE {
		t.Errorf("caller's event type after the call = %v, want the core's default %v (the request was copied)", ev.GetType(), ahpv1.EventType_EVENT_TYPE_IDLE)
	}
	if resp.Msg.GetDecision() == nil {
		t.Errorf("answer has no decision: %v", resp.Msg)
	}
}

// A caller that breaks the contract and changes a decision it was answered cannot change what a
// retry replays: the core's idempotency store keeps a copy of its own.
func TestLocalReplayIgnoresCallerEdits(t *testing.T) {
	t.Parallel()
	_, local := newLocal(t, LocalOptions{}, nil)
	ctx := context.Background()
	first, err := local.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("copy", "rm -rf /")}))
	if err != nil {
		t.Fatal(err)
	}
	want := proto.Clone(first.Msg.GetDecision())
	first.Msg.GetDecision().GetEffects()[0].GetDeny().Reason = "scribbled"
	first.Msg.Decision.Verdict = ahpv1.Verdict_VERDICT_ALLOW
	again, err := local.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("copy", "rm -rf /")}))
	if err != nil {
		t.Fatal(err)
	}
	got := again.Msg.GetDecision()
	if !got.GetReplayed() {
		t.Fatalf("second call not replayed: %v", got)
	}
	got.Replayed, got.LatencyUs = false, 0
	want.(*ahpv1.Decision).LatencyUs = 0
	if !proto.Equal(got, want) {
		t.Errorf("replay changed by the caller's edit:\ngot  %v\nwant %v", got, want)
	}
}

// A caller's context that ends first gives the client's own error, not a wire error.
func TestLocalCallerContext(t *testing.T) {
	t.Parallel()
	_, local := newLocal(t, LocalOptions{}, nil)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := local.Intercept(canceled, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("c1", "ls")}))
	wantError(t, "canceled", err, connect.CodeCanceled, false)
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	_, err = local.Intercept(expired, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("c2", "ls")}))
	wantError(t, "expired", err, connect.CodeDeadlineExceeded, false)
}

type ctxKey struct{}

// The handler's context carries the caller's deadline and cancellation, UnaryTimeout, and none of
// the caller's values.
func TestLocalHandlerContext(t *testing.T) {
	t.Parallel()
	_, l := newLocal(t, LocalOptions{}, func(c *Config) { c.UnaryTimeout = time.Minute })
	caller, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "secret"), 10*time.Second)
	defer cancel()
	var seen context.Context
	handler := func(ctx context.Context, _ *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
		seen = ctx
		return connect.NewResponse(&ahpv1.GetCapabilitiesResponse{}), nil
	}
	if _, err := unary(caller, l, "/test", connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}), handler); err != nil {
		t.Fatal(err)
	}
	want, _ := caller.Deadline()
	if got, ok := seen.Deadline(); !ok {
		t.Error("the handler has no deadline, want the caller's")
	} else if !got.Equal(want) {
		t.Errorf("handler deadline %v, want the caller's %v", got, want)
	}
	if seen.Value(ctxKey{}) != nil {
		t.Error("the handler sees the caller's context values")
	}

	// No deadline from the caller: UnaryTimeout bounds the call.
	if _, err := unary(context.Background(), l, "/test", connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}), handler); err != nil {
		t.Fatal(err)
	}
	if got, ok := seen.Deadline(); !ok {
		t.Error("the handler has no deadline, want UnaryTimeout's")
	} else if time.Until(got) > time.Minute {
		t.Errorf("time.Until(got) = %v, want at most time.Minute", time.Until(got))
	} else if time.Until(got) < 50*time.Second {
		t.Errorf("time.Until(got) = %v, want at least 50*time.Second", time.Until(got))
	}

	// Cancelling the caller cancels the handler.
	caller2, cancel2 := context.WithCancel(context.Background())
	blocked := make(chan struct{})
	go func() { <-blocked; cancel2() }()
	_, err := unary(caller2, l, "/test", connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}), func(ctx context.Context, _ *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
		close(blocked)
		<-ctx.Done()
		return nil, connect.NewError(connect.CodeCanceled, ctx.Err())
	})
	wantError(t, "canceled mid-call", err, connect.CodeCanceled, false)
}

// Handler errors arrive as wire errors with their code, message, details and metadata; a panic
// or a missing answer is Internal, as the recover option makes it.
func TestLocalHandlerErrors(t *testing.T) {
	t.Parallel()
	_, l := newLocal(t, LocalOptions{}, nil)
	ctx := context.Background()
	req := connect.NewRequest(&ahpv1.GetCapabilitiesRequest{})
	call := func(h func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error)) error {
		_, err := unary(ctx, l, "/ahp.v1.Test/Call", req, h)
		return err
	}

	detail, _ := connect.NewErrorDetail(&ahpv1.StreamError{Code: "x", Message: "y"})
	orig := connect.NewError(connect.CodeFailedPrecondition, errors.New("not now"))
	orig.AddDetail(detail)
	orig.Meta().Set("X-Why", "because")
	err := call(func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
		return nil, orig
	})
	wantError(t, "connect error", err, connect.CodeFailedPrecondition, true)
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("connect error came back as %#v, not a *connect.Error", err)
	}
	if ce.Message() != "not now" {
		t.Errorf("connect error message %q, want \"not now\"", ce.Message())
	}
	if n := len(ce.Details()); n != 1 {
		t.Errorf("connect error has %d details, want 1", n)
	}
	if v := ce.Meta().Get("X-Why"); v != "because" {
		t.Errorf("connect error metadata X-Why = %q, want \"because\"", v)
	}
	if errors.Is(err, orig) {
		t.Error("the connect error came back as the handler's own value, not a copy from the wire")
	}

	plain := errors.New("boom")
	err = call(func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
		return nil, plain
	})
	wantError(t, "plain error", err, connect.CodeUnknown, true)
	if errors.Is(err, plain) {
		t.Error("the plain error came back as the handler's own value, not a copy from the wire")
	}
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("plain error came back as %v, want it to say boom", err)
	}

	for name, h := range map[string]func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error){
		"panic": func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
			panic("oops")
		},
		"no response": func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
			return nil, nil
		},
	} {
		err := call(h)
		wantError(t, name, err, connect.CodeInternal, true)
		if err == nil || err.Error() != "internal: internal error" {
			t.Errorf("%s: %v, want \"internal: internal error\"", name, err)
		}
	}
}

// Close drains: calls in flight finish, later calls fail with Unavailable, as a dial to a stopped
// server does; a second Close is harmless.
func TestLocalClose(t *testing.T) {
	t.Parallel()
	// In the bubble, synctest.Wait returns once every other goroutine of it is blocked: then Close
	// is either waiting for the call in flight or (wrongly) done.
	synctest.Test(t, func(t *testing.T) {
		_, l := newLocal(t, LocalOptions{}, nil)
		entered, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		callDone := make(chan error, 1)
		go func() {
			_, err := unary(context.Background(), l, "/test", connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}), func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
				close(entered)
				<-release
				finished.Store(true)
				return connect.NewResponse(&ahpv1.GetCapabilitiesResponse{}), nil
			})
			callDone <- err
		}()
		<-entered
		closed := make(chan error, 1)
		go func() { closed <- l.Close() }()
		synctest.Wait()
		select {
		case err := <-closed:
			close(release) // so that the bubble can end
			t.Fatalf("Close returned (%v) with a call in flight", err)
		default:
		}
		close(release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		} else if !finished.Load() {
			t.Fatalf("Close: finished.Load() is false")
		}
		if err := <-callDone; err != nil {
			t.Errorf("the call in flight failed: %v", err)
		}

		_, err := l.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("late", "ls")}))
		wantError(t, "call after Close", err, connect.CodeUnavailable, false)
		if !errors.Is(err, ErrLocalClosed) {
			t.Errorf("call after Close: %v, want ErrLocalClosed", err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		ln := memhttp.NewListener()
		defer ln.Close()
		if err := l.Serve(ln); !errors.Is(err, ErrLocalClosed) {
			t.Errorf("Serve after Close: %v", err)
		}
	})
}

// Close gives up on a call that outlives ShutdownTimeout and says so.
func TestLocalCloseTimeout(t *testing.T) {
	t.Parallel()
	l, err := newServer(t, func(c *Config) { c.ShutdownTimeout = 20 * time.Millisecond }).Local(LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	go unary(context.Background(), l, "/test", connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}), func(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
		close(entered)
		<-release
		return connect.NewResponse(&ahpv1.GetCapabilitiesResponse{}), nil
	})
	<-entered
	if err := l.Close(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want a deadline error", err)
	}
}

// Serve adds the HTTP handler for streams; unary calls through Local and streams over HTTP share
// one core and hub, and Close ends both.
func TestLocalServeStreams(t *testing.T) {
	t.Parallel()
	_, l := newLocal(t, LocalOptions{}, nil)
	ln := memhttp.NewListener()
	if err := l.Serve(ln); err != nil {
		t.Fatal(err)
	}
	if err := l.Serve(ln); err == nil {
		t.Error("a second Serve succeeded")
	}
	hc, url := ln.Client(true), memhttp.URL
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	watch, err := ahpv1connect.NewObservationServiceClient(hc, url).Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	// Watch answers once the server has subscribed (it sends its headers then), so a decision
	// made now reaches it.
	if _, err := l.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("w1", "ls")})); err != nil {
		t.Fatal(err)
	}
	if !watch.Receive() {
		t.Fatalf("Watch saw no decision made through Local: %v", watch.Err())
	}

	stream := ahpv1connect.NewInterceptServiceClient(hc, url).InterceptStream(ctx)
	if err := stream.Send(&ahpv1.InterceptStreamRequest{Event: testkit.ShellEvent("s1", "rm -rf /")}); err != nil {
		t.Fatal(err)
	}
	answer, err := stream.Receive()
	if err != nil {
		t.Fatalf("InterceptStream: %v", err)
	}
	if answer.GetDecision().GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
		t.Fatalf("InterceptStream: answer.GetDecision().GetVerdict() = %v, want VERDICT_DENY", answer.GetDecision().GetVerdict())
	}
	stream.CloseRequest()
	stream.CloseResponse()

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for watch.Receive() {
	}
	if _, err := ahpv1connect.NewHarnessServiceClient(hc, url).GetCapabilities(ctx, connect.NewRequest(&ahpv1.GetCapabilitiesRequest{})); err == nil {
		t.Error("the HTTP handler still answers after Close")
	}
}

// Authentication and tracing run only on the HTTP path, so Local refuses servers that have them.
func TestLocalRefusesInterceptorsItWouldSkip(t *testing.T) {
	t.Parallel()
	var tracing connect.UnaryInterceptorFunc = func(next connect.UnaryFunc) connect.UnaryFunc { return next }
	srv, err := New(Config{Logger: testkit.Discard(), Tracing: tracing})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Local(LocalOptions{}); err == nil {
		t.Error("Local accepted a server with tracing")
	}
}

// The validation warm-up in New decides, records and counts nothing.
func TestNewWarmsUpWithoutEffects(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{NoRuntimeMetrics: true, Logger: testkit.Discard()})
	_, l := newLocal(t, LocalOptions{}, func(c *Config) { c.Metrics = m })
	count := func() float64 {
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		var n float64
		for _, f := range fams {
			if f.GetName() != "ahp_decisions_total" && f.GetName() != "ahp_observed_events_total" {
				continue
			}
			for _, s := range f.GetMetric() {
				n += s.GetCounter().GetValue()
			}
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("%v decisions and events counted before any call", n)
	}
	if _, err := l.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("one", "ls")})); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%v decisions and events counted after one decision", n)
	}
}

// The HTTP handler is built on first use, and only once.
func TestHandlerIsBuiltOnFirstUse(t *testing.T) {
	t.Parallel()
	srv, err := New(Config{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if srv.handlerBuilt.Load() {
		t.Fatal("New built the HTTP handler")
	}
	h := srv.Handler()
	if h == nil {
		t.Fatalf("Handler and HTTPServer disagree: h is nil")
	}
	if !srv.handlerBuilt.Load() {
		t.Fatalf("Handler and HTTPServer disagree: srv.handlerBuilt.Load() is false")
	}
	if srv.HTTPServer().Handler != h {
		t.Fatalf("Handler and HTTPServer disagree: srv.HTTPServer().Handler = %v, want %v", srv.HTTPServer().Handler, h)
	}
}
