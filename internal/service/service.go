// Package service adapts the decision core to the four Connect services of ahp.v1. Handlers are
// thin: validate the request (protovalidate), call the core, map its errors to Connect codes.
//
// Who checks what, once:
//   - the dialect codecs (internal/codec/hooks, internal/codec/harness) own each dialect's wire
//     rules and their exact error texts; nothing after them repeats those;
//   - this package owns the schema rules every protocol and client meets, the protovalidate
//     annotations of ahp.v1 (required fields, non-empty ids, defined enums, list sizes), checked
//     once per request at this boundary, before the core sees it;
//   - the core owns only the semantic rules no schema can state (see package core).
package service

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"golang.org/x/time/rate"
	"google.golang.org/protobuf/proto"
)

// Watcher is what Watch needs from the event hub.
type Watcher interface {
	// Subscribe starts a live tail with the given filter and buffer size.
	Subscribe(f hub.Filter, buffer int) *hub.Subscription
}

// Options configure the services.
type Options struct {
	// Watcher feeds Watch (required for Watch to work; nil makes Watch fail with Unavailable).
	Watcher Watcher
	// WatchBuffer is each watcher's buffer in items (default 1024); a watcher that falls this far
	// behind is cut off.
	WatchBuffer int
	// WatchWriteTimeout bounds each write to a watcher, one per batch of items (default 10s;
	// negative: none); a watcher whose client does not read that long is cut off.
	WatchWriteTimeout time.Duration
	// StreamConcurrency bounds in-flight events per InterceptStream (default 16).
	StreamConcurrency int
	// MaxStreamDuration ends any stream (InterceptStream, ObserveStream, Watch) after this long
	// with DeadlineExceeded; clients reconnect (default 1h; negative disables).
	MaxStreamDuration time.Duration
	// StreamRate caps messages per second read from one InterceptStream, and events per second
	// (a batch counts each of its events) from one ObserveStream; a faster client is slowed down
	// (flow control), not failed (default 0: unlimited).
	StreamRate float64
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
}

// DefaultWatchWriteTimeout is the WatchWriteTimeout unless Options set another.
const DefaultWatchWriteTimeout = 10 * time.Second

// Services implements every ahp.v1 service over a core.
type Services struct {
	core      *core.Core
	opts      Options
	validator protovalidate.Validator

	drainOnce sync.Once
	draining  chan struct{} // closed by Drain
}

var (
	_ ahpv1connect.InterceptServiceHandler     = (*Services)(nil)
	_ ahpv1connect.TypedDecisionServiceHandler = (*Services)(nil)
	_ ahpv1connect.ObservationServiceHandler   = (*Services)(nil)
	_ ahpv1connect.HarnessServiceHandler       = (*Services)(nil)
)

// New returns the services.
func New(c *core.Core, opts Options) (*Services, error) {
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = 1024
	}
	if opts.WatchWriteTimeout == 0 {
		opts.WatchWriteTimeout = DefaultWatchWriteTimeout
	}
	if opts.StreamConcurrency <= 0 {
		opts.StreamConcurrency = 16
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxStreamDuration == 0 {
		opts.MaxStreamDuration = time.Hour
	}
	v, err := protovalidate.New()
	if err != nil {
		return nil, err
	}
	return &Services{core: c, opts: opts, validator: v, draining: make(chan struct{})}, nil
}

// Register mounts the four services on mux and returns their fully-qualified names (for health
// checks and reflection).
func (s *Services) Register(mux *http.ServeMux, opts ...connect.HandlerOption) []string {
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(s, opts...))
	mux.Handle(ahpv1connect.NewTypedDecisionServiceHandler(s, opts...))
	path, observation := ahpv1connect.NewObservationServiceHandler(s, opts...)
	mux.Handle(path, batchFlushes(controlReads(observation), max(s.opts.WatchWriteTimeout, 0)))
	mux.Handle(ahpv1connect.NewHarnessServiceHandler(s, opts...))
	return []string{
		ahpv1connect.InterceptServiceName,
		ahpv1connect.TypedDecisionServiceName,
		ahpv1connect.ObservationServiceName,
		ahpv1connect.HarnessServiceName,
	}
}

// Drain is the start of a shutdown: open InterceptStreams stop taking events, answer the ones they
// took and end with Unavailable, so that clients reconnect elsewhere. Unary calls are unaffected.
func (s *Services) Drain() {
	s.drainOnce.Do(func() { close(s.draining) })
}

// streamContext bounds a stream's lifetime by MaxStreamDuration.
func (s *Services) streamContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.opts.MaxStreamDuration < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opts.MaxStreamDuration)
}

// streamLimiter paces reads from one stream; nil means unlimited.
func (s *Services) streamLimiter() *rate.Limiter {
	if s.opts.StreamRate <= 0 {
		return nil
	}
	burst := int(s.opts.StreamRate)
	if burst < 1 {
		burst = 1
	}
	return rate.NewLimiter(rate.Limit(s.opts.StreamRate), burst)
}

// answer is every unary handler: validate msg, the request, then call the core through decide
// and map its error.
func answer[Res any](s *Services, msg proto.Message, decide func() (*Res, error)) (*connect.Response[Res], error) {
	if err := s.validate(msg); err != nil {
		return nil, err
	}
	res, err := decide()
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(res), nil
}

// validate checks protovalidate rules; the error names the field and is InvalidArgument.
func (s *Services) validate(msg proto.Message) error {
	if err := s.validator.Validate(msg); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	return nil
}

// toConnect maps a core error (or a context error) to a Connect error. Messages come from the core,
// which never puts field values in them.
func toConnect(err error) error {
	if err == nil {
		return nil
	}
	if ce, ok := core.AsError(err); ok {
		code := connect.CodeInternal
		switch ce.Code {
		case core.CodeInvalidArgument:
			code = connect.CodeInvalidArgument
		case core.CodeFailedPrecondition:
			code = connect.CodeFailedPrecondition
		case core.CodeUnavailable:
			code = connect.CodeUnavailable
		}
		return connect.NewError(code, errors.New(ce.Error()))
	}
	switch {
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, err)
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	}
	var cerr *connect.Error
	if errors.As(err, &cerr) {
		return cerr
	}
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}
