package service

import (
	"context"
	"net/http"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// connect-go flushes the response after every message a streaming handler sends; on HTTP/2 that
// is one DATA frame and one write system call per message. A watcher that is handed several items
// at once would pay that for each of them, and with many watchers those writes are most of the
// server's work. batchFlushes lets Watch hold the flushes while it sends what a watcher has
// buffered and flush once at the end: the same bytes, in the same order, in fewer writes.

// flushGateKey is the context key of a Watch request's flushGate.
type flushGateKey struct{}

// batchFlushes wraps the observation service's handler: Watch requests get a flushGate in their
// context; every other request passes through untouched.
func batchFlushes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if !ok || r.URL.Path != ahpv1connect.ObservationServiceWatchProcedure {
			next.ServeHTTP(w, r)
			return
		}
		g := &flushGate{ResponseWriter: w, flusher: f}
		next.ServeHTTP(g, r.WithContext(context.WithValue(r.Context(), flushGateKey{}, g)))
	})
}

// flushGate is a ResponseWriter whose Flush can be held back. Only the handler's goroutine uses
// it (connect sends and flushes from the goroutine that calls Send).
type flushGate struct {
	http.ResponseWriter
	flusher http.Flusher
	held    bool // Flush only notes that a flush is due
	due     bool
}

// Flush implements http.Flusher.
func (g *flushGate) Flush() {
	if g.held {
		g.due = true
		return
	}
	g.flusher.Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *flushGate) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// hold defers flushes until release. A nil gate (a request that did not come through
// batchFlushes) does nothing.
func (g *flushGate) hold() {
	if g != nil {
		g.held = true
	}
}

// release ends the hold and makes the one flush that was due, if any.
func (g *flushGate) release() {
	if g == nil {
		return
	}
	g.held = false
	if g.due {
		g.due = false
		g.flusher.Flush()
	}
}

// flushGateFrom returns the gate batchFlushes put in ctx, or nil.
func flushGateFrom(ctx context.Context) *flushGate {
	g, _ := ctx.Value(flushGateKey{}).(*flushGate)
	return g
}
