package bridge

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// Backoff bounds for retrying the shared stream after it failed without answering anything.
const (
	minStreamBackoff = time.Second
	maxStreamBackoff = time.Minute
	// DefaultStreamPatience bounds how long a call waits on a stream that has not answered
	// anything yet before it goes unary (at most half the call's deadline).
	DefaultStreamPatience = 250 * time.Millisecond
)

// multiplexedIntercept is an InterceptServiceClient whose Intercept calls travel over one
// long-lived InterceptStream, tagged with a request_id and matched to their answers. A unary call
// costs a new HTTP/2 stream, HPACK-coded headers and two writes on each side; a message on an open
// stream is one DATA frame each way, which shortens the round trip of a bridge in its own process
// (docs/performance.md).
//
// The stream is only a faster road to the same answer. Whenever it cannot deliver a decision (it
// is not open yet after a failure, it breaks with calls in flight, the server rejects the event,
// the upstream does not offer bidirectional streams) the call is made again as a plain unary
// Intercept within the caller's deadline; the server's idempotency makes such a retry return the
// decision already made. Errors therefore always come from the unary call, with their usual codes.
type multiplexedIntercept struct {
	ahpv1connect.InterceptServiceClient // unary calls: InterceptBatch, InterceptStream, fallback

	log         *slog.Logger
	patience    time.Duration // how long a call waits for a new stream's first answer
	nextID      atomic.Uint64
	unsupported atomic.Bool // the upstream answered without request_id: never stream again

	mu      sync.Mutex
	cur     *muxStream
	closed  bool
	retryAt time.Time     // no new stream before this, after one failed without answering
	backoff time.Duration // the next wait after such a failure
}

func newMultiplexedIntercept(unary ahpv1connect.InterceptServiceClient, log *slog.Logger, patience time.Duration) *multiplexedIntercept {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if patience <= 0 {
		patience = DefaultStreamPatience
	}
	return &multiplexedIntercept{InterceptServiceClient: unary, log: log, patience: patience}
}

// Intercept implements ahpv1connect.InterceptServiceClient.
func (m *multiplexedIntercept) Intercept(ctx context.Context, req *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	if s := m.stream(); s != nil {
		if d, ok := s.call(ctx, m.nextID.Add(1), req.Msg); ok {
			return connect.NewResponse(&ahpv1.InterceptResponse{Decision: d}), nil
		}
	}
	// Also when ctx is already done: the unary client then reports that as it always does.
	return m.InterceptServiceClient.Intercept(ctx, req)
}

// decide is Intercept for the bridge (Bridge.decide), without connect's wrappers on the stream.
func (m *multiplexedIntercept) decide(ctx context.Context, req *ahpv1.InterceptRequest) (*ahpv1.Decision, error) {
	if s := m.stream(); s != nil {
		if d, ok := s.call(ctx, m.nextID.Add(1), req); ok {
			return d, nil
		}
	}
	resp, err := m.InterceptServiceClient.Intercept(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetDecision(), nil
}

// closeGrace bounds how long Close waits for the server to end the shared stream after the
// bridge closed its side.
const closeGrace = time.Second

// Close ends the shared stream, gracefully: the bridge closes its side, the server answers what
// it took and ends its side, which leaves the connection idle for the transport to close. Calls
// still waiting go unary; later calls are unary.
func (m *multiplexedIntercept) Close() {
	m.mu.Lock()
	m.closed = true
	s := m.cur
	m.mu.Unlock()
	if s == nil {
		return
	}
	s.sendMu.Lock()
	_ = s.stream.CloseRequest()
	s.sendMu.Unlock()
	closed := errors.New("bridge: upstream closed")
	select {
	case <-s.recvToken:
		// Read the server's remaining answers up to the end of its side; past the grace period,
		// ending the stream interrupts the read.
		stop := time.AfterFunc(closeGrace, func() { s.end(closed) })
		for s.receiveOne() {
		}
		stop.Stop()
	case <-time.After(closeGrace): // a caller is reading; ending the stream stops it
	}
	s.end(closed)
}

// stream returns the open stream, opening one if none is open and the backoff allows; nil means
// "call unary".
func (m *multiplexedIntercept) stream() *muxStream {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != nil || m.closed || m.unsupported.Load() || time.Now().Before(m.retryAt) {
		return m.cur
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &muxStream{owner: m, cancel: cancel, waiting: make(map[string]chan *ahpv1.Decision), recvToken: make(chan struct{}, 1)}
	s.recvToken <- struct{}{}
	s.stream = m.InterceptServiceClient.InterceptStream(ctx)
	m.cur = s
	return s
}

// ended is told by a stream that it is over, and why; answered says whether it delivered any
// decision.
func (m *multiplexedIntercept) ended(s *muxStream, cause error, answered bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == s {
		m.cur = nil
	}
	switch {
	case m.closed:
	case answered:
		m.backoff = 0
		m.log.Debug("upstream InterceptStream ended; the next call opens a new one", "cause", cause)
	default:
		m.backoff = min(max(2*m.backoff, minStreamBackoff), maxStreamBackoff)
		m.retryAt = time.Now().Add(m.backoff)
		if m.unsupported.Load() {
			m.log.Warn("upstream does not echo request_id on InterceptStream; Intercept calls are unary from now on")
		} else {
			m.log.Warn("upstream InterceptStream failed before answering; Intercept calls are unary until it is retried",
				"cause", cause, "retry_in", m.backoff)
		}
	}
}

// muxStream is one InterceptStream and the calls waiting on it.
//
// There is no receiving goroutine: a waiting call that finds no one reading the stream reads it
// itself (it takes recvToken), handing other calls their answers, until its own answer is in. A
// lone caller thus reads its answer without a goroutine hand-off. Once the stream is over the
// token is not given back, and the holder that saw the end has closed the response.
type muxStream struct {
	owner  *multiplexedIntercept
	stream *connect.BidiStreamForClient[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]
	cancel context.CancelFunc

	sendMu    sync.Mutex
	recvToken chan struct{} // holds a token while no one reads the stream

	mu       sync.Mutex
	waiting  map[string]chan *ahpv1.Decision // nil once the stream is over
	answered bool
}

// answerChans keeps the one-slot channels calls wait on, so a call does not make one each.
var answerChans = sync.Pool{New: func() any { return make(chan *ahpv1.Decision, 1) }}

// call sends one event and waits for its decision. ok is false when the stream gave no decision
// (the caller then goes unary) or ctx ended.
func (s *muxStream) call(ctx context.Context, n uint64, req *ahpv1.InterceptRequest) (_ *ahpv1.Decision, ok bool) {
	id := strconv.FormatUint(n, 36)
	ch := answerChans.Get().(chan *ahpv1.Decision)
	s.mu.Lock()
	if s.waiting == nil {
		s.mu.Unlock()
		return nil, false
	}
	s.waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		if !ok {
			s.forget(id)
		}
	}()

	// A Send blocks while the server reads nothing (flow control); the caller's deadline then
	// ends the stream, which unblocks it and sends the other calls on it to the unary road.
	// The same holds while this call leads the reading (lead): ending the stream is the only way
	// to interrupt a Receive. One registration covers both, for the whole call.
	stop := context.AfterFunc(ctx, func() { s.end(context.Cause(ctx)) })
	defer stop()
	s.sendMu.Lock()
	msg := &ahpv1.InterceptStreamRequest{Event: req.GetEvent(), Capabilities: req.GetCapabilities(), RequestId: id}
	if dl, ok := ctx.Deadline(); ok {
		// The stream carries no deadline of its own; the server holds an approval no longer.
		msg.TimeoutMs = uint64(max(time.Until(dl).Milliseconds(), 1))
	}
	err := s.stream.Send(msg)
	s.sendMu.Unlock()
	if err != nil {
		s.end(err)
		return nil, false
	}
	wait := time.Duration(-1)
	if !s.proven() {
		// A stream that has not answered yet may never answer (a proxy that buffers whole
		// request bodies, a server that does not stream): wait for it only so long, and keep
		// the rest of the deadline for the unary call.
		wait = s.owner.patience
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl)/2)
		}
	}
	var patience <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		patience = t.C
	}
	for {
		select {
		case d, open := <-ch:
			if open {
				// receiveOne took ch out of waiting before its one send, and nothing else holds
				// it: it is empty and can serve another call. A closed one cannot.
				answerChans.Put(ch)
			}
			return d, open && d != nil
		case <-s.recvToken:
			s.lead(ch, wait)
		case <-patience:
			s.end(errors.New("bridge: no answer on the new stream"))
			return nil, false
		case <-ctx.Done():
			// A stream that let a deadline pass is suspect: later calls get a new one.
			s.end(context.Cause(ctx))
			return nil, false
		}
	}
}

// lead reads the stream for the calls waiting on it until ch, the leader's own channel, has its
// answer or is closed, then gives the token back (unless the stream ended). The leader's deadline
// (registered by call for the whole call) and patience end the stream, which is the only way to
// interrupt a Receive.
func (s *muxStream) lead(ch chan *ahpv1.Decision, wait time.Duration) {
	if wait >= 0 {
		t := time.AfterFunc(wait, func() { s.end(errors.New("bridge: no answer on the new stream")) })
		defer t.Stop()
	}
	for len(ch) == 0 {
		if !s.receiveOne() {
			return // the stream is over: keep the token
		}
	}
	s.recvToken <- struct{}{}
}

// proven reports whether the stream has delivered a decision.
func (s *muxStream) proven() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

func (s *muxStream) forget(id string) {
	s.mu.Lock()
	if s.waiting != nil {
		delete(s.waiting, id)
	}
	s.mu.Unlock()
}

// receiveOne reads one answer and hands it to its caller; it reports false once the stream is
// over (it then closed the response, which with the request closed in end is what tells the
// server the stream is over). An answer carrying an error gives its caller nil, so that the
// unary call reports the error with its usual code. The caller holds recvToken.
func (s *muxStream) receiveOne() bool {
	resp, err := s.stream.Receive()
	if err == nil && resp.GetRequestId() == "" {
		// A server that does not echo request_id cannot be multiplexed with: unary from now on.
		s.owner.unsupported.Store(true)
		err = errors.New("bridge: upstream does not echo request_id")
	}
	if err != nil {
		_ = s.stream.CloseResponse()
		s.end(err)
		return false
	}
	s.mu.Lock()
	ch := s.waiting[resp.GetRequestId()]
	delete(s.waiting, resp.GetRequestId())
	if resp.GetDecision() != nil && resp.GetError() == nil {
		s.answered = true
	}
	s.mu.Unlock()
	if ch != nil { // nil: the caller gave up already
		if resp.GetError() != nil {
			ch <- nil
		} else {
			ch <- resp.GetDecision()
		}
	}
	return true
}

// end closes the stream once: waiting calls are released to go unary and the owner forgets it.
func (s *muxStream) end(cause error) {
	s.mu.Lock()
	waiting := s.waiting
	s.waiting = nil
	answered := s.answered
	s.mu.Unlock()
	if waiting == nil {
		return
	}
	for _, ch := range waiting {
		close(ch)
	}
	s.cancel()
	s.sendMu.Lock()
	_ = s.stream.CloseRequest()
	s.sendMu.Unlock()
	select {
	case <-s.recvToken: // no one is reading: close the response here, and keep the token
		_ = s.stream.CloseResponse()
	default: // the reader's Receive fails now; it closes the response
	}
	s.owner.ended(s, cause, answered)
}
