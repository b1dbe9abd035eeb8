package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
)

// Intercept implements ahpv1connect.InterceptServiceHandler.
func (s *Services) Intercept(ctx context.Context, req *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return answer(s, req.Msg, func() (*ahpv1.InterceptResponse, error) {
		d, err := s.core.Intercept(ctx, req.Msg.GetEvent(), req.Msg.GetCapabilities())
		return &ahpv1.InterceptResponse{Decision: d}, err
	})
}

// InterceptBatch implements ahpv1connect.InterceptServiceHandler.
func (s *Services) InterceptBatch(ctx context.Context, req *connect.Request[ahpv1.InterceptBatchRequest]) (*connect.Response[ahpv1.InterceptBatchResponse], error) {
	return answer(s, req.Msg, func() (*ahpv1.InterceptBatchResponse, error) {
		ds, err := s.core.Batch(ctx, req.Msg.GetEvents(), req.Msg.GetCapabilities())
		return &ahpv1.InterceptBatchResponse{Decisions: ds}, err
	})
}

// InterceptStream implements ahpv1connect.InterceptServiceHandler. Events are decided concurrently
// (up to Options.StreamConcurrency at a time); each answer carries its event id and request_id. A
// bad event gets a per-event error and the stream stays open. When the server starts draining,
// the stream stops taking events, answers those it took and ends with Unavailable, so that
// clients move to another server instead of holding the shutdown up.
func (s *Services) InterceptStream(ctx context.Context, stream *connect.BidiStream[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]) error {
	ctx, cancel := s.streamContext(ctx)
	defer cancel()
	st := &interceptStream{
		s: s, stream: stream, cancel: cancel,
		slots: make(chan struct{}, s.opts.StreamConcurrency),
		stop:  make(chan struct{}),
	}
	// The reading goroutine may still be blocked in Receive when this handler returns; connect
	// then closes the request body, which ends the read.
	read := make(chan error, 1)
	go func() { read <- st.read(ctx) }()
	var recvErr, endErr error
	select {
	case recvErr = <-read:
	case <-ctx.Done():
	case <-s.draining:
		endErr = connect.NewError(connect.CodeUnavailable, errors.New("server is shutting down; reconnect to continue"))
	}
	st.close()
	st.wg.Wait()
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	switch {
	case st.sendErr != nil:
		return st.sendErr
	case recvErr != nil:
		return recvErr
	case endErr != nil:
		return endErr
	}
	return toConnect(ctx.Err())
}

// interceptStream is the state of one InterceptStream shared by its reading goroutine and the
// goroutines deciding its events.
type interceptStream struct {
	s      *Services
	stream *connect.BidiStream[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	stop    chan struct{} // closed by close: no decision starts after it

	sendMu  sync.Mutex
	sendErr error
}

// read takes events until the client closes its side (nil), a read fails, or the stream is
// stopped, starting a decision for each.
func (st *interceptStream) read(ctx context.Context) error {
	limiter := st.s.streamLimiter()
	for {
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				return nil
			}
		}
		req, err := st.stream.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		select {
		case st.slots <- struct{}{}:
		case <-st.stop:
			return nil
		}
		st.mu.Lock()
		if st.stopped {
			st.mu.Unlock()
			return nil
		}
		st.wg.Add(1)
		st.mu.Unlock()
		go func() {
			defer st.wg.Done()
			defer func() { <-st.slots }()
			st.send(st.s.decideRecovered(ctx, req))
		}()
	}
}

// close stops new decisions; those already started finish.
func (st *interceptStream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.stopped {
		st.stopped = true
		close(st.stop)
	}
}

func (st *interceptStream) send(resp *ahpv1.InterceptStreamResponse) {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	if st.sendErr != nil {
		return
	}
	if err := st.stream.Send(resp); err != nil {
		st.sendErr = err
		st.cancel()
	}
}

// decideRecovered is decideStreamed with a panic turned into that event's Internal error: the
// event runs on its own goroutine, where connect's recover option cannot reach it.
func (s *Services) decideRecovered(ctx context.Context, req *ahpv1.InterceptStreamRequest) (resp *ahpv1.InterceptStreamResponse) {
	defer func() {
		if v := recover(); v != nil {
			s.opts.Logger.Error("panic deciding an InterceptStream event", "panic", fmt.Sprint(v))
			resp = &ahpv1.InterceptStreamResponse{
				EventId: req.GetEvent().GetId(), RequestId: req.GetRequestId(),
				Error: &ahpv1.StreamError{Code: connect.CodeInternal.String(), Message: "internal error"},
			}
		}
	}()
	return s.decideStreamed(ctx, req)
}

func (s *Services) decideStreamed(ctx context.Context, req *ahpv1.InterceptStreamRequest) *ahpv1.InterceptStreamResponse {
	resp := &ahpv1.InterceptStreamResponse{EventId: req.GetEvent().GetId(), RequestId: req.GetRequestId()}
	err := s.validate(req)
	var d *ahpv1.Decision
	if err == nil {
		if ms := req.GetTimeoutMs(); ms > 0 {
			// The caller's deadline for this event bounds a hold for an approval.
			hold, cancel := context.WithTimeout(ctx, time.Duration(min(ms, uint64(math.MaxInt64/int64(time.Millisecond))))*time.Millisecond)
			defer cancel()
			ctx = approval.WithHoldContext(ctx, hold)
		}
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
