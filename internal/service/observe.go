package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
)

// Observe implements ahpv1connect.ObservationServiceHandler.
func (s *Services) Observe(ctx context.Context, req *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	if err := s.validate(req.Msg); err != nil {
		return nil, err
	}
	dup, err := s.core.Observe(ctx, req.Msg.GetEvent())
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(&ahpv1.ObserveResponse{Duplicate: dup}), nil
}

// ObserveStream implements ahpv1connect.ObservationServiceHandler. The first invalid event ends the
// stream with InvalidArgument naming its position; events before it are recorded.
func (s *Services) ObserveStream(ctx context.Context, stream *connect.ClientStream[ahpv1.ObserveStreamRequest]) (*connect.Response[ahpv1.ObserveStreamResponse], error) {
	ctx, cancel := s.streamContext(ctx)
	defer cancel()
	limiter := s.streamLimiter()
	var accepted, duplicates uint64
	for i := 0; stream.Receive(); i++ {
		if err := ctx.Err(); err != nil {
			return nil, toConnect(err)
		}
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				return nil, toConnect(ctx.Err())
			}
		}
		req := stream.Msg()
		if err := s.validate(req); err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("message %d (after %d accepted): %w", i, accepted, err))
		}
		dup, err := s.core.Observe(ctx, req.GetEvent())
		if err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("message %d (after %d accepted): %w", i, accepted, toConnect(err)))
		}
		if dup {
			duplicates++
		} else {
			accepted++
		}
	}
	if err := stream.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.ObserveStreamResponse{Accepted: accepted, Duplicates: duplicates}), nil
}

// Watch implements ahpv1connect.ObservationServiceHandler: a live tail until the client goes away,
// the server shuts down, or the watcher falls too far behind (ResourceExhausted).
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
	// Send headers now so a client knows it is subscribed before the first item.
	if err := stream.Send(nil); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if parent.Err() == nil { // our duration limit, not the client leaving
				return connect.NewError(connect.CodeDeadlineExceeded, errors.New("watch reached the maximum stream duration; reconnect to resume"))
			}
			return nil
		case it := <-sub.Items():
			if err := stream.Send(watchResponse(it)); err != nil {
				return err
			}
		case <-sub.Ended():
			// Drain what was buffered before the end, then say why it ended.
			for {
				select {
				case it := <-sub.Items():
					if err := stream.Send(watchResponse(it)); err != nil {
						return err
					}
					continue
				default:
				}
				break
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

func watchResponse(it hub.Item) *ahpv1.WatchResponse {
	return &ahpv1.WatchResponse{Event: it.Event, Decision: it.Decision, Time: it.Time.UTC().Format(time.RFC3339Nano)}
}
