package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/inflight"
	"github.com/ahp-gateway/ahp/internal/service"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// ErrLocalClosed is the cause of the Unavailable error a call to a closed Local fails with, as a
// call to a server that has stopped fails to connect.
var ErrLocalClosed = errors.New("server: closed")

// LocalOptions configure Local.
type LocalOptions struct {
	// MaxResponseBytes bounds one answer, as connect.WithReadMaxBytes bounds it for a client over
	// the network; a bigger one fails with ResourceExhausted. Checking it costs a walk of every
	// answer (proto.Size); 0, the default, is no limit.
	MaxResponseBytes int
}

// Local serves a Server's unary RPCs to callers in the same process without HTTP: its methods
// have the signatures of the ahpv1connect clients and call the service handlers directly, with
// the semantics of the same call over the network through the server's handler options and
// interceptors. Only the encoding and the transport are left out, and with them the copies and
// size computations a wire implies:
//
//   - the request is handed over: the handler and the core keep the messages it holds (session
//     memory, the Watch hub and the audit log hold the event) and may fill in defaults (an
//     unspecified event type), so the caller must not change a request once it is sent;
//   - the answer is the caller's, except the decisions in it, which the core shares with the
//     Watch hub, the audit log and its idempotency store: read them, never change them;
//   - no byte limit applies to a request: Config.MaxRequestBytes bounds what the server reads
//     from a connection, and an in-process request is bounded by what its caller read (the
//     bridge's transports bound each JSON-RPC message, the hook adapter its input). An answer
//     larger than LocalOptions.MaxResponseBytes, when set, fails with ResourceExhausted as a
//     client refuses it;
//   - the handler's context has the caller's deadline and cancellation but none of its values, and
//     Config.UnaryTimeout bounds it;
//   - a panic in the handler is an Internal error, logged as over HTTP;
//   - errors arrive as a client receives them: wire errors (connect.IsWireError) with the code,
//     message, details and metadata the server sent; a caller's context that ended first gives
//     the client's own Canceled or DeadlineExceeded.
//
// For the streaming RPCs, Serve runs the HTTP handler on a listener of the caller's choosing (an
// in-memory one, say) once something needs it. Close drains as Serve does when its context ends.
type Local struct {
	s          *Server
	opts       LocalOptions
	stopReload func()

	calls inflight.Group // unary calls; closed by Close

	mu     sync.Mutex
	closed bool         // Close has begun
	hs     *http.Server // set by Serve
	served chan error

	closeOnce sync.Once
	closeErr  error
}

// Local starts s for callers in this process: policy hot reload runs as under Serve (when
// configured), and nothing listens. Use either Local or Serve with one Server, not both.
//
// Authentication and tracing are interceptors that only run on the HTTP path, so a Server
// configured with Auth or Tracing cannot be used through Local; serve its Handler instead.
func (s *Server) Local(opts LocalOptions) (*Local, error) {
	if s.cfg.Auth != nil || s.cfg.Tracing != nil {
		return nil, errors.New("server: authentication and tracing need the HTTP handler; in-process calls would skip them")
	}
	return &Local{s: s, opts: opts, stopReload: s.startReloading(context.Background())}, nil
}

// Serve serves s's HTTP handler (every service, health and reflection) on ln until Close, for
// what Local's methods do not offer: the streaming RPCs. It returns at once. It fails when l is
// closed or already serving.
func (l *Local) Serve(ln net.Listener) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrLocalClosed
	case l.hs != nil:
		return errors.New("server: Local is already serving")
	}
	l.hs = l.s.HTTPServer()
	l.served = make(chan error, 1)
	go func(hs *http.Server, served chan<- error) { served <- hs.Serve(ln) }(l.hs, l.served)
	return nil
}

// Close drains like Serve does when its context ends: health turns NOT_SERVING, Watch streams
// end, calls in flight (unary ones and those on the HTTP handler) finish within ShutdownTimeout,
// hot reload stops and the audit log is closed with every accepted record written. Later calls
// fail with Unavailable. Close is idempotent.
func (l *Local) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.calls.Close()
		hs, served := l.hs, l.served
		l.mu.Unlock()

		l.s.stopServing()
		ctx, cancel := context.WithTimeout(context.Background(), l.s.cfg.ShutdownTimeout)
		defer cancel()
		var err error
		if hs != nil {
			err = hs.Shutdown(ctx)
			if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
				err = serveErr
			}
		}
		if werr := l.calls.Wait(ctx); werr != nil && err == nil {
			err = fmt.Errorf("in-process calls still running: %w", werr)
		}
		l.stopReload()
		if cerr := l.s.closeAudit(ctx); cerr != nil && err == nil {
			err = cerr
		}
		l.closeErr = err
	})
	return l.closeErr
}

// unary makes one in-process call of h as Local describes; procedure names it in logs.
func unary[Req, Res any](ctx context.Context, l *Local, procedure string, req *connect.Request[Req], h func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error)) (*connect.Response[Res], error) {
	if !l.calls.Begin() {
		return nil, connect.NewError(connect.CodeUnavailable, ErrLocalClosed)
	}
	defer l.calls.End()
	if err := ctx.Err(); err != nil {
		return nil, contextError(err)
	}

	msg := new(Req)
	if req != nil && req.Msg != nil {
		msg = req.Msg
	}
	hreq := connect.NewRequest(msg)
	if req != nil {
		for k, v := range req.Header() {
			hreq.Header()[k] = append([]string(nil), v...)
		}
	}

	hctx, cancel := context.WithTimeout(detached{ctx}, l.s.cfg.UnaryTimeout)
	defer cancel()
	hctx = approval.WithHoldContext(hctx, detached{ctx}) // a hold may outlive UnaryTimeout
	resp, err := callHandler(hctx, l, procedure, hreq, h)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, contextError(cerr)
		}
		return nil, asWireError(err)
	}
	if resp.Msg == nil { // a client decodes an empty body as the zero message
		resp.Msg = new(Res)
	}
	if limit := l.opts.MaxResponseBytes; limit > 0 {
		if size := proto.Size(any(resp.Msg).(proto.Message)); size > limit {
			return nil, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("message size %d is larger than configured max %d", size, limit))
		}
	}
	return resp, nil
}

// callHandler runs h, turning a panic into the Internal error the recover option makes of it over
// HTTP. A handler that returns neither an answer nor an error panics there too (connect reads the
// answer), so it gets the same treatment.
func callHandler[Req, Res any](ctx context.Context, l *Local, procedure string, req *connect.Request[Req], h func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error)) (resp *connect.Response[Res], err error) {
	spec := connect.Spec{StreamType: connect.StreamTypeUnary, Procedure: procedure}
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, l.s.recovered(ctx, spec, req.Header(), v)
		}
	}()
	resp, err = h(ctx, req)
	if err == nil && resp == nil {
		return nil, l.s.recovered(ctx, spec, req.Header(), "handler returned no response")
	}
	return resp, err
}

// detached is a context with its parent's deadline and cancellation but none of its values: a
// handler reached over the network sees nothing the caller put in its context (a principal the
// bridge's own authentication found, for one).
type detached struct{ parent context.Context }

func (d detached) Deadline() (time.Time, bool) { return d.parent.Deadline() }
func (d detached) Done() <-chan struct{}       { return d.parent.Done() }
func (d detached) Err() error                  { return d.parent.Err() }
func (d detached) Value(any) any               { return nil }

// AfterFunc lets context.WithTimeout follow the parent without a goroutine of its own.
func (d detached) AfterFunc(f func()) (stop func() bool) { return context.AfterFunc(d.parent, f) }

// contextError is what a Connect client returns when the caller's context ends first.
func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	}
	return connect.NewError(connect.CodeCanceled, err)
}

// asWireError is err as a Connect client receives it from the server: the code, message, details
// and metadata survive, the Go error chain does not. An error that is not a *connect.Error goes
// over the wire as Unknown.
func asWireError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return connect.NewWireError(connect.CodeUnknown, errors.New(err.Error()))
	}
	out := connect.NewWireError(ce.Code(), errors.New(ce.Message()))
	for _, d := range ce.Details() {
		out.AddDetail(d)
	}
	for k, v := range ce.Meta() {
		out.Meta()[k] = append([]string(nil), v...)
	}
	return out
}

// warmValidation has svc build, beside the policy load rather than on the first call, what it
// and protobuf build lazily for the requests clients send first and most (Intercept, Observe;
// every other request carries the same Event): protovalidate's rules and protobuf's tables for
// the messages involved, so that a per-event process does not build them inside its one call. The
// probe event has no id and no type, so validation refuses it before it reaches the core: nothing
// is decided, recorded or published.
func warmValidation(svc *service.Services) {
	input, _ := structpb.NewStruct(map[string]any{"command": ""})
	probe := &ahpv1.Event{Session: &ahpv1.Session{}, Tool: &ahpv1.Tool{Input: input}}
	req := &ahpv1.InterceptRequest{Event: probe, Capabilities: &ahpv1.Capabilities{}}
	_ = proto.Size(req)
	ctx := context.Background()
	_, _ = svc.Intercept(ctx, connect.NewRequest(req))
	_, _ = svc.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: probe}))
}

// The unary RPCs of the four services, with the signatures of their ahpv1connect clients.

var (
	_ ahpv1connect.TypedDecisionServiceClient = (*Local)(nil)
	_ ahpv1connect.HarnessServiceClient       = (*Local)(nil)
)

// Intercept is InterceptService.Intercept, called in-process as Local describes.
func (l *Local) Intercept(ctx context.Context, req *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return unary(ctx, l, ahpv1connect.InterceptServiceInterceptProcedure, req, l.s.svc.Intercept)
}

// InterceptBatch is InterceptService.InterceptBatch.
func (l *Local) InterceptBatch(ctx context.Context, req *connect.Request[ahpv1.InterceptBatchRequest]) (*connect.Response[ahpv1.InterceptBatchResponse], error) {
	return unary(ctx, l, ahpv1connect.InterceptServiceInterceptBatchProcedure, req, l.s.svc.InterceptBatch)
}

// Idle is TypedDecisionService.Idle.
func (l *Local) Idle(ctx context.Context, req *connect.Request[ahpv1.IdleRequest]) (*connect.Response[ahpv1.IdleResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServiceIdleProcedure, req, l.s.svc.Idle)
}

// DetectIntent is TypedDecisionService.DetectIntent.
func (l *Local) DetectIntent(ctx context.Context, req *connect.Request[ahpv1.DetectIntentRequest]) (*connect.Response[ahpv1.DetectIntentResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServiceDetectIntentProcedure, req, l.s.svc.DetectIntent)
}

// PerceiveContext is TypedDecisionService.PerceiveContext.
func (l *Local) PerceiveContext(ctx context.Context, req *connect.Request[ahpv1.PerceiveContextRequest]) (*connect.Response[ahpv1.PerceiveContextResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServicePerceiveContextProcedure, req, l.s.svc.PerceiveContext)
}

// RecallMemory is TypedDecisionService.RecallMemory.
func (l *Local) RecallMemory(ctx context.Context, req *connect.Request[ahpv1.RecallMemoryRequest]) (*connect.Response[ahpv1.RecallMemoryResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServiceRecallMemoryProcedure, req, l.s.svc.RecallMemory)
}

// Plan is TypedDecisionService.Plan.
func (l *Local) Plan(ctx context.Context, req *connect.Request[ahpv1.PlanRequest]) (*connect.Response[ahpv1.PlanResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServicePlanProcedure, req, l.s.svc.Plan)
}

// Reason is TypedDecisionService.Reason.
func (l *Local) Reason(ctx context.Context, req *connect.Request[ahpv1.ReasonRequest]) (*connect.Response[ahpv1.ReasonResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServiceReasonProcedure, req, l.s.svc.Reason)
}

// HandleRateLimit is TypedDecisionService.HandleRateLimit.
func (l *Local) HandleRateLimit(ctx context.Context, req *connect.Request[ahpv1.HandleRateLimitRequest]) (*connect.Response[ahpv1.HandleRateLimitResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServiceHandleRateLimitProcedure, req, l.s.svc.HandleRateLimit)
}

// Confirm is TypedDecisionService.Confirm.
func (l *Local) Confirm(ctx context.Context, req *connect.Request[ahpv1.ConfirmRequest]) (*connect.Response[ahpv1.ConfirmResponse], error) {
	return unary(ctx, l, ahpv1connect.TypedDecisionServiceConfirmProcedure, req, l.s.svc.Confirm)
}

// Observe is ObservationService.Observe.
func (l *Local) Observe(ctx context.Context, req *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	return unary(ctx, l, ahpv1connect.ObservationServiceObserveProcedure, req, l.s.svc.Observe)
}

// Handshake is HarnessService.Handshake.
func (l *Local) Handshake(ctx context.Context, req *connect.Request[ahpv1.HandshakeRequest]) (*connect.Response[ahpv1.HandshakeResponse], error) {
	return unary(ctx, l, ahpv1connect.HarnessServiceHandshakeProcedure, req, l.s.svc.Handshake)
}

// Query is HarnessService.Query.
func (l *Local) Query(ctx context.Context, req *connect.Request[ahpv1.QueryRequest]) (*connect.Response[ahpv1.QueryResponse], error) {
	return unary(ctx, l, ahpv1connect.HarnessServiceQueryProcedure, req, l.s.svc.Query)
}

// GetCapabilities is HarnessService.GetCapabilities.
func (l *Local) GetCapabilities(ctx context.Context, req *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
	return unary(ctx, l, ahpv1connect.HarnessServiceGetCapabilitiesProcedure, req, l.s.svc.GetCapabilities)
}
