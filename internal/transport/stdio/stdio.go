// Package stdio serves the bridge on a process's standard input and output, the way a harness
// runs a backend as a child process: newline-delimited JSON, protocol bytes only on stdout.
//
// Serve is the persistent binding (one process, many messages, until EOF). ServeOnce is the Agent
// Hooks Protocol's per_event binding (one message in, at most one answer out). Both take the
// streams as an io.Reader and an io.Writer, so they run the same against os.Stdin/os.Stdout and
// against pipes in a test.
package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
)

// Serve handles messages from stdin until EOF (or ctx is done), writing answers to stdout, and
// returns once every message in flight has been answered; see ndjson.Serve.
func Serve(ctx context.Context, stdin io.Reader, stdout io.Writer, h bridge.Handler, opts ndjson.Options) error {
	return ndjson.Serve(ctx, stdin, stdout, h, bridge.TransportStdio, opts)
}

// ServeOnce reads one message (up to the first newline, or to EOF without one), hands it to h and
// writes its answer, if any, to stdout. It does not wait for EOF after the message. Leading blank
// lines are skipped; empty input gets no answer. Options.Concurrency is ignored.
//
// It returns nil whenever the protocol exchange itself went through, whatever the answer says:
// in the per_event binding the answer, not the exit status, carries the decision. It returns an
// error only when stdin or stdout fail. If ctx is done before a message arrives, it returns nil
// without an answer.
func ServeOnce(ctx context.Context, stdin io.Reader, stdout io.Writer, h bridge.Handler, opts ndjson.Options) error {
	limit := opts.MaxMessageBytes
	if limit <= 0 {
		limit = transport.DefaultMaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	type frame struct {
		msg []byte
		err error
	}
	// Read on a goroutine so that a signal can end a wait for input that never comes.
	got := make(chan frame, 1)
	go func() {
		msg, err := ndjson.NewReader(stdin, limit).Next()
		got <- frame{msg, err}
	}()
	var f frame
	select {
	case <-ctx.Done():
		log.Warn("stopped before a message arrived")
		return nil
	case f = <-got:
	}

	var reply []byte
	var oversize *ndjson.OversizeError
	switch {
	case errors.As(f.err, &oversize):
		reply = transport.OversizeReply(oversize.Head, oversize.Limit)
		log.Warn("message over the size limit", "limit", limit, "answered", reply != nil)
	case errors.Is(f.err, io.EOF):
		log.Warn("no message on stdin")
		return nil
	case f.err != nil:
		return fmt.Errorf("stdio: read: %w", f.err)
	default:
		reply = h.Handle(context.WithoutCancel(ctx), f.msg, bridge.TransportStdio).Body
	}
	if reply == nil {
		return nil
	}
	err := ndjson.NewWriter(stdout).WriteMessage(reply)
	if errors.Is(err, ndjson.ErrMalformedReply) {
		log.Error("handler reply is not one line of JSON; not sent", "bytes", len(reply))
		return nil
	}
	if err != nil {
		return fmt.Errorf("stdio: write: %w", err)
	}
	return nil
}
