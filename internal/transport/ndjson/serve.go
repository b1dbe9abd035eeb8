package ndjson

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport"
)

// Options configures Serve. Zero values take the defaults.
type Options struct {
	// MaxMessageBytes is the size limit of one message (default transport.DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Concurrency is how many messages of one stream are handled at once (default 1: in order, as
	// the Harness reference does). Above 1, answers are written as they are ready, so they may come
	// out of order; peers correlate them by id, as both AHP stdio bindings require.
	Concurrency int
	// Logger receives diagnostics (default: discarded). Nothing but protocol goes to the stream.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Serve reads messages from r, hands each to h and writes every non-empty reply to w, one per line,
// until r ends, ctx is done or w fails.
//
// When ctx is done Serve stops taking new messages, lets the ones in flight finish and write their
// answers, and returns; in-flight messages are handled under a context that ctx's cancellation
// does not reach (the Handler applies its own deadline). Serve returns nil at the end of input or
// after ctx is done, and otherwise the read or write error. It does not close r or w; a read
// blocked in r when Serve returns is left to the caller (close r to end it).
func Serve(ctx context.Context, r io.Reader, w io.Writer, h bridge.Handler, t bridge.Transport, opts Options) error {
	opts = opts.withDefaults()
	s := &stream{h: h, t: t, out: NewWriter(w), log: opts.Logger, limit: opts.MaxMessageBytes, hctx: context.WithoutCancel(ctx)}
	if opts.Concurrency == 1 {
		return s.serveSequential(ctx, r)
	}
	return s.serveConcurrent(ctx, r, opts.Concurrency)
}

// serveSequential is Serve at Concurrency 1. Reading happens on its own goroutine so that ctx can
// interrupt a read that may never return (stdin cannot be given a deadline), and that goroutine
// also handles each message it reads: handing the message to another goroutine would cost a
// wake-up per message, which shows on a stdio round trip (docs/performance.md). Serve's own
// goroutine only waits for the end, an error or ctx.
//
// mu is held while a message is handled or answered, so Serve, once ctx is done, waits for the
// message in flight by taking mu, and marks the stream stopped so nothing read later is handled.
// Nothing is read ahead: the next read starts once the answer is written.
func (s *stream) serveSequential(ctx context.Context, r io.Reader) error {
	var (
		mu      sync.Mutex
		stopped bool // under mu: Serve has returned
	)
	result := make(chan error, 1) // how reading ended: nil at the end of input, or the error
	go func() {
		rd := NewReader(r, s.limit)
		for {
			msg, err := rd.Next()
			mu.Lock()
			// ctx is checked here too, not only by Serve, so that a message read after ctx is
			// done is never handled, however the two goroutines are scheduled.
			if stopped || ctx.Err() != nil {
				mu.Unlock()
				return
			}
			// A write error is looked for after every answer, so none is pending at a read error.
			var oversize *OversizeError
			switch {
			case err == nil:
				s.handle(msg)
			case errors.As(err, &oversize):
				s.answerOversize(oversize)
			case errors.Is(err, io.EOF):
				result <- nil
				mu.Unlock()
				return
			default:
				result <- fmt.Errorf("ndjson: read: %w", err)
				mu.Unlock()
				return
			}
			if err := s.writeErr(); err != nil {
				result <- err
				mu.Unlock()
				return
			}
			mu.Unlock()
		}
	}()

	select {
	case err := <-result:
		return err
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	stopped = true
	// The message in flight when ctx ended has been answered. A failed write of that answer is
	// still reported: it is the stream's first failure, and the caller may want to know.
	return s.writeErr()
}

// serveConcurrent is Serve above Concurrency 1: a reading goroutine hands each message over to
// the loop, which starts a goroutine per message, at most concurrency at once.
func (s *stream) serveConcurrent(ctx context.Context, r io.Reader, concurrency int) error {
	type frame struct {
		msg []byte
		err error
	}
	frames := make(chan frame)
	stop := make(chan struct{})
	defer close(stop)
	// Reading happens on its own goroutine so that ctx can interrupt a read that may never return
	// (stdin cannot be given a deadline). The channel is unbuffered: at most one message is read
	// ahead, so memory stays bounded by the limit.
	go func() {
		rd := NewReader(r, s.limit)
		for {
			msg, err := rd.Next()
			select {
			case frames <- frame{msg, err}:
			case <-stop:
				return
			}
			var oversize *OversizeError
			if err != nil && !errors.As(err, &oversize) {
				return
			}
		}
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, concurrency)
	for {
		if err := s.writeErr(); err != nil {
			return err
		}
		var f frame
		select {
		case <-ctx.Done():
			return nil
		case f = <-frames:
		}
		var oversize *OversizeError
		switch {
		case errors.As(f.err, &oversize):
			s.answerOversize(oversize)
			continue
		case errors.Is(f.err, io.EOF):
			return nil
		case f.err != nil:
			return fmt.Errorf("ndjson: read: %w", f.err)
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			s.handle(f.msg)
		}()
	}
}

// stream is the state Serve shares with the goroutines handling its messages.
type stream struct {
	h     bridge.Handler
	t     bridge.Transport
	out   *Writer
	log   *slog.Logger
	limit int
	hctx  context.Context

	mu  sync.Mutex
	err error // first write error
}

func (s *stream) handle(msg []byte) {
	if reply := s.h.Handle(s.hctx, msg, s.t); reply.Body != nil {
		s.write(reply.Body)
	}
}

func (s *stream) answerOversize(e *OversizeError) {
	reply := transport.OversizeReply(e.Head, e.Limit)
	if reply == nil {
		s.log.Warn("message over the size limit dropped; its id could not be read, so it gets no answer", "limit", e.Limit)
		return
	}
	s.log.Warn("message over the size limit answered with an error", "limit", e.Limit)
	s.write(reply)
}

func (s *stream) write(msg []byte) {
	err := s.out.WriteMessage(msg)
	switch {
	case errors.Is(err, ErrMalformedReply):
		s.log.Error("handler reply is not one line of JSON; not sent", "bytes", len(msg))
	case err != nil:
		s.mu.Lock()
		if s.err == nil {
			s.err = fmt.Errorf("ndjson: write: %w", err)
		}
		s.mu.Unlock()
	}
}

func (s *stream) writeErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
