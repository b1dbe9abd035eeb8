package service

import (
	"context"
	"errors"
	"io"
	"sync"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Intercept implements ahpv1connect.InterceptServiceHandler.
func (s *Services) Intercept(ctx context.Context, req *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	if err := s.validate(req.Msg); err != nil {
		return nil, err
	}
	d, err := s.core.Intercept(ctx, req.Msg.GetEvent(), req.Msg.GetCapabilities())
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(&ahpv1.InterceptResponse{Decision: d}), nil
}

// InterceptBatch implements ahpv1connect.InterceptServiceHandler.
func (s *Services) InterceptBatch(ctx context.Context, req *connect.Request[ahpv1.InterceptBatchRequest]) (*connect.Response[ahpv1.InterceptBatchResponse], error) {
	if err := s.validate(req.Msg); err != nil {
		return nil, err
	}
	ds, err := s.core.Batch(ctx, req.Msg.GetEvents(), req.Msg.GetCapabilities())
	if err != nil {
		return nil, toConnect(err)
	}
	return connect.NewResponse(&ahpv1.InterceptBatchResponse{Decisions: ds}), nil
}

// InterceptStream implements ahpv1connect.InterceptServiceHandler. Events are decided concurrently
// (up to Options.StreamConcurrency at a time); each answer carries its event id. A bad event gets a
// per-event error and the stream stays open.
func (s *Services) InterceptStream(ctx context.Context, stream *connect.BidiStream[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]) error {
	ctx, cancel := s.streamContext(ctx)
	defer cancel()
	limiter := s.streamLimiter()
	var (
		sendMu  sync.Mutex
		sendErr error
		wg      sync.WaitGroup
		slots   = make(chan struct{}, s.opts.StreamConcurrency)
	)
	send := func(resp *ahpv1.InterceptStreamResponse) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if sendErr != nil {
			return
		}
		if err := stream.Send(resp); err != nil {
			sendErr = err
			cancel()
		}
	}
	var recvErr error
	for {
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				break
			}
		}
		req, err := stream.Receive()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				recvErr = err
			}
			break
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			send(s.decideStreamed(ctx, req))
		}()
	}
	wg.Wait()
	sendMu.Lock()
	defer sendMu.Unlock()
	switch {
	case sendErr != nil:
		return sendErr
	case recvErr != nil:
		return recvErr
	}
	return toConnect(ctx.Err())
}

func (s *Services) decideStreamed(ctx context.Context, req *ahpv1.InterceptStreamRequest) *ahpv1.InterceptStreamResponse {
	resp := &ahpv1.InterceptStreamResponse{EventId: req.GetEvent().GetId()}
	err := s.validate(req)
	var d *ahpv1.Decision
	if err == nil {
		d, err = s.core.Intercept(ctx, req.GetEvent(), req.GetCapabilities())
	}
	if err != nil {
		var cerr *connect.Error
		if !errors.As(toConnect(err), &cerr) {
			cerr = connect.NewError(connect.CodeInternal, err)
		}
		resp.Error = &ahpv1.StreamError{Code: cerr.Code().String(), Message: cerr.Message()}
		return resp
	}
	resp.Decision = d
	return resp
}
