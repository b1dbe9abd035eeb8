package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/hub"
	"golang.org/x/time/rate"
)

// Observe implements ahpv1connect.ObservationServiceHandler.
func (s *Services) Observe(ctx context.Context, req *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	return answer(s, req.Msg, func() (*ahpv1.ObserveResponse, error) {
		dup, err := s.core.Observe(ctx, req.Msg.GetEvent())
		return &ahpv1.ObserveResponse{Duplicate: dup}, err
	})
}

// ObserveStream implements ahpv1connect.ObservationServiceHandler. A message carries one event or
// a batch; each message is validated whole before any of its events is recorded. The first
// invalid message ends the stream with InvalidArgument naming its position (and, in a batch, the
// event at fault); events of earlier messages are recorded. The stream rate limit counts events.
// At the maximum stream duration the stream ends with DeadlineExceeded, also while the client
// sends nothing.
func (s *Services) ObserveStream(ctx context.Context, stream *connect.ClientStream[ahpv1.ObserveStreamRequest]) (*connect.Response[ahpv1.ObserveStreamResponse], error) {
	parent := ctx
	ctx, cancel := s.streamContext(ctx)
	defer cancel()
	// Receive blocks in a read of the request body, which ctx does not reach: when ctx ends, the
	// body's read deadline ends that read.
	defer context.AfterFunc(ctx, endReads(ctx))()
	limiter := s.streamLimiter()
	var accepted, duplicates uint64
	one := make([]*ahpv1.Event, 1)
	for i := 0; stream.Receive(); i++ {
		if err := ctx.Err(); err != nil {
			return nil, toConnect(err)
		}
		req := stream.Msg()
		if err := s.validator.Validate(req); err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("message %d (after %d accepted): %w", i, accepted, err))
		}
		events := req.GetEvents()
		if ev := req.GetEvent(); ev != nil {
			one[0] = ev
			events = one
		}
		if limiter != nil {
			if err := waitEvents(ctx, limiter, len(events)); err != nil {
				return nil, toConnect(ctx.Err())
			}
		}
		for j, ev := range events {
			dup, err := s.core.Observe(ctx, ev)
			if err != nil {
				at := fmt.Sprintf("message %d", i)
				if req.GetEvent() == nil {
					at = fmt.Sprintf("message %d, events[%d]", i, j)
				}
				// Keep the core's code (an unwritable required audit log is Unavailable, not the
				// caller's fault) and say where the stream stopped.
				var cerr *connect.Error
				if !errors.As(toConnect(err), &cerr) {
					cerr = connect.NewError(connect.CodeInternal, errors.New("internal error"))
				}
				return nil, connect.NewError(cerr.Code(), fmt.Errorf("%s (after %d accepted): %s", at, accepted, cerr.Message()))
			}
			if dup {
				duplicates++
			} else {
				accepted++
			}
		}
		one[0] = nil
	}
	// Our duration limit, not the client leaving or its own deadline (over HTTP/1 the failed read
	// cancels parent too).
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(parent.Err(), context.DeadlineExceeded) {
		return nil, connect.NewError(connect.CodeDeadlineExceeded, fmt.Errorf("observe stream reached the maximum stream duration (after %d accepted); send the rest on a new stream", accepted))
	}
	if err := stream.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.ObserveStreamResponse{Accepted: accepted, Duplicates: duplicates}), nil
}

// readControlKey is the context key of an ObserveStream request's http.ResponseController.
type readControlKey struct{}

// controlReads wraps the observation service's handler: ObserveStream requests carry their
// http.ResponseController in their context, for endReads.
func controlReads(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != ahpv1connect.ObservationServiceObserveStreamProcedure {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), readControlKey{}, rc)))
	})
}

// endReads returns a function that makes the request body's pending and later reads fail at
// once. Without a controller in ctx (a request that did not come through controlReads) it does
// nothing.
func endReads(ctx context.Context) func() {
	rc, _ := ctx.Value(readControlKey{}).(*http.ResponseController)
	return func() {
		if rc != nil {
			_ = rc.SetReadDeadline(time.Now())
		}
	}
}

// waitEvents takes n events' worth of tokens, in steps no larger than the limiter's burst (a
// batch may be larger than the burst a per-event rate allows).
func waitEvents(ctx context.Context, l *rate.Limiter, n int) error {
	for n > 0 {
		step := min(n, l.Burst())
		if err := l.WaitN(ctx, step); err != nil {
			return err
		}
		n -= step
	}
	return nil
}

// Watch implements ahpv1connect.ObservationServiceHandler: a live tail until the client goes away,
// the server shuts down, the watcher falls too far behind (ResourceExhausted), or a write to it
// does not finish within WatchWriteTimeout (a client that stopped reading).
//
// The hub hands items over in batches (see package hub); Watch wakes once per batch and sends the
// batch's items back to back, each as a response built once per item for all watchers and, with
// the codecs of WatchCodecs, encoded once per item and codec.
//
// With a flush interval (WatchRequest.flush_interval_ms) Watch writes at most once per interval:
// items that arrive within an interval of the last write wait for its end and go out together, in
// one flush. A watcher's buffer that becomes half full (hub's Subscription.Filling) is written at
// once, so waiting never makes the hub cut a watcher off; the stream's end is never delayed.
func (s *Services) Watch(ctx context.Context, req *connect.Request[ahpv1.WatchRequest], stream *connect.ServerStream[ahpv1.WatchResponse]) error {
	if err := s.validate(req.Msg); err != nil {
		return err
	}
	if s.opts.Watcher == nil {
		return connect.NewError(connect.CodeUnavailable, errors.New("watch is not enabled on this server"))
	}
	parent := ctx
	ctx, cancel := s.streamContext(ctx)
	defer cancel()
	sub := s.opts.Watcher.Subscribe(hub.Filter{
		SessionID:     req.Msg.GetSessionId(),
		EventTypes:    req.Msg.GetEventTypes(),
		ToolKinds:     req.Msg.GetToolKinds(),
		DecisionsOnly: req.Msg.GetDecisionsOnly(),
	}, s.opts.WatchBuffer)
	defer sub.Close()
	gate := flushGateFrom(ctx)
	// The end of the stream is written after Watch returns, within the write timeout too (see
	// batchFlushes).
	defer gate.hold()
	// Send headers now so a client knows it is subscribed before the first item.
	gate.hold()
	err := stream.Send(nil)
	gate.release()
	if err != nil {
		return err
	}
	interval := time.Duration(req.Msg.GetFlushIntervalMs()) * time.Millisecond
	var hold holdBack
	defer hold.stop()
	for {
		select {
		case <-ctx.Done():
			if parent.Err() == nil { // our duration limit, not the client leaving
				return connect.NewError(connect.CodeDeadlineExceeded, errors.New("watch reached the maximum stream duration; reconnect to resume"))
			}
			// The client left or its deadline passed: end with that (Canceled, DeadlineExceeded),
			// never with OK, which a client whose own deadline timer has not fired yet would take
			// for a stream the server closed normally.
			return parent.Err()
		case <-sub.Ready():
			if interval > 0 && !hold.wait(ctx, sub, interval) {
				continue // ctx ended: the next round says why
			}
			if err := sendBuffered(gate, stream, sub); err != nil {
				return err
			}
			hold.sent()
		case <-sub.Ended():
			// Send what was buffered before the end (nothing is added after it), then say why it
			// ended.
			if err := sendBuffered(gate, stream, sub); err != nil {
				return err
			}
			switch err := sub.Err(); {
			case errors.Is(err, hub.ErrSlowSubscriber), errors.Is(err, hub.ErrOverloaded):
				return connect.NewError(connect.CodeResourceExhausted, err)
			case err != nil:
				return connect.NewError(connect.CodeUnavailable, err)
			}
			return nil
		}
	}
}

// holdBack spaces a watcher's writes by its flush interval.
type holdBack struct {
	last  time.Time // of the last write; zero before the first
	timer *time.Timer
}

// wait returns once the interval since the last write has passed, the buffer is half full or the
// subscription ended (true: write now), or ctx ended (false). Then the wake-ups that came while it
// waited are taken: what they announced is in the buffer and goes out with this write.
func (h *holdBack) wait(ctx context.Context, sub *hub.Subscription, interval time.Duration) bool {
	d := time.Until(h.last.Add(interval))
	if h.last.IsZero() || d <= 0 {
		// This write takes what a pending Filling announced; it must not cut the next wait short.
		drain(sub.Filling())
		return true
	}
	if h.timer == nil {
		h.timer = time.NewTimer(d)
	} else {
		h.timer.Reset(d)
	}
	select {
	case <-h.timer.C:
	case <-sub.Filling():
		h.timer.Stop()
	case <-sub.Ended():
		h.timer.Stop()
	case <-ctx.Done():
		h.timer.Stop()
		return false
	}
	drain(sub.Ready())
	drain(sub.Filling())
	return true
}

// sent notes a write.
func (h *holdBack) sent() { h.last = time.Now() }

func (h *holdBack) stop() {
	if h.timer != nil {
		h.timer.Stop()
	}
}

// drain takes a pending token from c, if any.
func drain(c <-chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// sendBuffered sends the items buffered when it is called, in order and back to back, then
// returns so that the caller looks at the stream's end again; items buffered meanwhile have
// signalled Ready anew. Each item leaves the buffer only when it is sent, so the buffer keeps
// measuring how far this watcher is behind (the hub cuts it off when the buffer is full).
//
// connect-go writes and flushes every message on its own (ServerStream.Send flushes the response
// writer), so the items are not one network write; what batching saves here is a wake-up and a
// select per item, and sharing saves building and encoding a response per item and watcher.
func sendBuffered(gate *flushGate, stream *connect.ServerStream[ahpv1.WatchResponse], sub *hub.Subscription) error {
	// One flush and one write deadline for what was buffered, not one per item.
	gate.hold()
	defer gate.release()
	items := sub.Items()
	for range len(items) {
		select {
		case it := <-items:
			// Through the connection, as the stream's Send takes only a *WatchResponse: the codecs
			// of WatchCodecs write the item's shared encoding (watchcodec.go).
			if err := stream.Conn().Send(sharedWatchResponse(it)); err != nil {
				return err
			}
		default: // only this goroutine reads, so this does not happen
			return nil
		}
	}
	return nil
}

// watchResponseKey names the response in the values a hub item shares among its subscribers.
type watchResponseKey struct{}

// sharedWatchResponse returns the response for it, built by the first watcher to send the item and
// reused by every other: one allocation and timestamp formatting per item instead of per watcher,
// and, with the codecs of WatchCodecs, one encoding per codec. It must not be modified; sending
// only reads it (marshaling a message concurrently is safe).
func sharedWatchResponse(it hub.Item) *encodedWatchResponse {
	return it.Shared(watchResponseKey{}, buildWatchResponse).(*encodedWatchResponse)
}

func buildWatchResponse(it hub.Item) any {
	return &encodedWatchResponse{WatchResponse: watchResponse(it), item: it}
}

func watchResponse(it hub.Item) *ahpv1.WatchResponse {
	return &ahpv1.WatchResponse{Event: it.Event, Decision: it.Decision, Time: it.Time.UTC().Format(time.RFC3339Nano)}
}
