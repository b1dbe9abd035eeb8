package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// driver puts one mode's load on one system under test.
type driver interface {
	// op sends request seq for worker w and checks the answer.
	op(ctx context.Context, w int, seq uint64) error
	// endPhase runs after each load phase, when no op is running: it ends what lasts one phase
	// (observe streams) and adds what it finds (accepted counts, mismatches) to st.
	endPhase(ctx context.Context, st *Stats)
	// close releases the driver's streams and processes; the servers are the run's.
	close() error
}

// answerTimer is a driver whose requests go on after their answer (per_event: the process
// exits). timedOp replaces op and reports when the answer came.
type answerTimer interface {
	timedOp(ctx context.Context, w int, seq uint64) (answered time.Time, err error)
}

// checkDecision checks a canonical decision for request seq.
func checkDecision(d *ahpv1.Decision, seq uint64, expect *Expectation) error {
	switch {
	case d == nil:
		return errors.New("answer without a decision")
	case d.GetSynthetic():
		return errors.New("synthetic decision (the server failed over instead of deciding)")
	case d.GetReplayed():
		return errors.New("replayed decision for a fresh event id")
	}
	return expect.Check(seq, VerdictOf(d))
}

// unaryDriver calls Intercept once per request.
type unaryDriver struct {
	wl     *Workload
	client ahpv1connect.InterceptServiceClient
	expect *Expectation
}

func (d *unaryDriver) op(ctx context.Context, w int, seq uint64) error {
	resp, err := d.client.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: d.wl.ToolBefore(w, seq)}))
	if err != nil {
		return fmt.Errorf("Intercept: %w", err)
	}
	return checkDecision(resp.Msg.GetDecision(), seq, d.expect)
}

func (d *unaryDriver) endPhase(context.Context, *Stats) {}
func (d *unaryDriver) close() error                     { return nil }

// streamDriver sends every request on one InterceptStream shared by all workers; a reader
// goroutine hands each answer to the worker waiting for its event id (answers may come in any
// order).
type streamDriver struct {
	wl      *Workload
	expect  *Expectation
	cancel  context.CancelFunc
	stream  *connect.BidiStreamForClient[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]
	sendMu  sync.Mutex
	pending *correlator[*ahpv1.InterceptStreamResponse]
	done    chan struct{}
}

func newStreamDriver(client ahpv1connect.InterceptServiceClient, wl *Workload, expect *Expectation) *streamDriver {
	ctx, cancel := context.WithCancel(context.Background())
	d := &streamDriver{
		wl: wl, expect: expect, cancel: cancel, stream: client.InterceptStream(ctx),
		pending: newCorrelator[*ahpv1.InterceptStreamResponse](), done: make(chan struct{}),
	}
	go d.receive()
	return d
}

func (d *streamDriver) receive() {
	defer close(d.done)
	for {
		resp, err := d.stream.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("InterceptStream ended")
			}
			d.pending.fail(fmt.Errorf("InterceptStream: %w", err))
			return
		}
		d.pending.deliver(resp.GetEventId(), resp)
	}
}

func (d *streamDriver) op(ctx context.Context, w int, seq uint64) error {
	ev := d.wl.ToolBefore(w, seq)
	wait, err := d.pending.expect(ev.GetId())
	if err != nil {
		return err
	}
	// A Send stuck on flow control would hold every worker; past the request's deadline the
	// stream is given up (its reader then fails every wait).
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			d.cancel()
		}
	})
	d.sendMu.Lock()
	err = d.stream.Send(&ahpv1.InterceptStreamRequest{Event: ev})
	d.sendMu.Unlock()
	stop()
	if err != nil {
		d.pending.forget(ev.GetId())
		return fmt.Errorf("InterceptStream send: %w", err)
	}
	resp, err := wait(ctx)
	if err != nil {
		d.pending.forget(ev.GetId())
		return err
	}
	if e := resp.GetError(); e != nil {
		return fmt.Errorf("InterceptStream: event rejected: %s: %s", e.GetCode(), e.GetMessage())
	}
	return checkDecision(resp.GetDecision(), seq, d.expect)
}

func (d *streamDriver) endPhase(context.Context, *Stats) {}

func (d *streamDriver) close() error {
	d.sendMu.Lock()
	err := d.stream.CloseRequest()
	d.sendMu.Unlock()
	<-d.done
	d.cancel()
	if cerr := d.stream.CloseResponse(); err == nil {
		err = cerr
	}
	return err
}

// observeDriver gives each worker its own ObserveStream for the length of a phase; at the end of
// the phase every stream is closed and the server's accepted count must equal the events sent.
type observeDriver struct {
	wl      *Workload
	client  ahpv1connect.ObservationServiceClient
	timeout time.Duration // for a Send, and for the server's answer at the end of a phase
	ctx     context.Context
	cancel  context.CancelFunc
	workers []observeWorker
	batch   int // events per message
}

type observeWorker struct {
	stream  *connect.ClientStreamForClient[ahpv1.ObserveStreamRequest, ahpv1.ObserveStreamResponse]
	cancel  context.CancelFunc // ends the stream
	sent    uint64
	pending []*ahpv1.Event // buffered for the next batch message
	lost    uint64         // events of a batch whose Send failed, beyond the one that sent it
	failed  bool           // the stream broke; its events are already counted as errors
}

// MaxBatch is the most events ahp-server takes in one ObserveStream message.
const MaxBatch = 1000

func newObserveDriver(client ahpv1connect.ObservationServiceClient, wl *Workload, concurrency int, timeout time.Duration, batch int) *observeDriver {
	ctx, cancel := context.WithCancel(context.Background())
	return &observeDriver{wl: wl, client: client, timeout: timeout, ctx: ctx, cancel: cancel, workers: make([]observeWorker, concurrency), batch: max(batch, 1)}
}

func (d *observeDriver) op(ctx context.Context, w int, seq uint64) error {
	ow := &d.workers[w]
	if ow.failed {
		return errors.New("ObserveStream broke earlier in this phase")
	}
	if ow.stream == nil {
		var sctx context.Context
		sctx, ow.cancel = context.WithCancel(d.ctx)
		ow.stream = d.client.ObserveStream(sctx)
	}
	if d.batch == 1 {
		return d.send(ctx, ow, &ahpv1.ObserveStreamRequest{Event: d.wl.ToolAfter(w, seq)}, 1)
	}
	ow.pending = append(ow.pending, d.wl.ToolAfter(w, seq))
	if len(ow.pending) < d.batch {
		return nil
	}
	return d.flush(ctx, ow)
}

// flush sends the worker's buffered events as one message.
func (d *observeDriver) flush(ctx context.Context, ow *observeWorker) error {
	n := len(ow.pending)
	if n == 0 || ow.failed {
		return nil
	}
	err := d.send(ctx, ow, &ahpv1.ObserveStreamRequest{Events: ow.pending}, uint64(n))
	if err != nil {
		ow.lost += uint64(n - 1) // the caller's request reports the error of one of them
	}
	ow.pending = ow.pending[:0]
	return err
}

// send sends one message of n events.
func (d *observeDriver) send(ctx context.Context, ow *observeWorker, msg *ahpv1.ObserveStreamRequest, n uint64) error {
	// Send has no context of its own: past the request's deadline, end the stream under it.
	cancel := ow.cancel
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	err := ow.stream.Send(msg)
	stop()
	if err != nil {
		ow.failed = true
		return fmt.Errorf("ObserveStream send: %w", err)
	}
	ow.sent += n
	return nil
}

func (d *observeDriver) endPhase(_ context.Context, st *Stats) {
	var accepted uint64
	for i := range d.workers {
		ow := &d.workers[i]
		if ow.stream == nil {
			continue
		}
		if len(ow.pending) > 0 && !ow.failed {
			// The tail of the phase: events buffered for a batch that did not fill.
			sctx, cancel := context.WithTimeout(d.ctx, d.timeout)
			n := uint64(len(ow.pending))
			if err := d.flush(sctx, ow); err != nil {
				st.AddErrors(fmt.Sprintf("ObserveStream: %v (the last, partial batch)", connect.CodeOf(err)), n)
			}
			cancel()
		}
		ow.pending = nil
		if ow.lost > 0 {
			st.AddErrors("ObserveStream: events of a batch whose send failed", ow.lost)
		}
		giveUp := time.AfterFunc(d.timeout, ow.cancel)
		resp, err := ow.stream.CloseAndReceive()
		giveUp.Stop()
		ow.cancel()
		switch {
		case err != nil:
			st.AddErrors(fmt.Sprintf("ObserveStream: %v (its events were not confirmed)", connect.CodeOf(err)), ow.sent)
		case resp.Msg.GetDuplicates() != 0:
			st.AddErrors("ObserveStream: fresh events counted as duplicates", resp.Msg.GetDuplicates())
			accepted += resp.Msg.GetAccepted()
		case resp.Msg.GetAccepted() != ow.sent:
			st.AddErrors("ObserveStream: accepted count differs from events sent", absDiff(resp.Msg.GetAccepted(), ow.sent))
			accepted += resp.Msg.GetAccepted()
		default:
			accepted += resp.Msg.GetAccepted()
		}
		*ow = observeWorker{}
	}
	st.Accepted = &accepted
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

func (d *observeDriver) close() error {
	d.cancel()
	return nil
}
