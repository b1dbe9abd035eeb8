package service

import (
	"context"
	"net/http"
	"time"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// connect-go flushes the response after every message a streaming handler sends; on HTTP/2 that
// is one DATA frame and one write system call per message. A watcher that is handed several items
// at once would pay that for each of them, and with many watchers those writes are most of the
// server's work. batchFlushes lets Watch hold the flushes while it sends what a watcher has
// buffered and flush once at the end: the same bytes, in the same order, in fewer writes.
//
// The gate also bounds how long Watch may wait on a client that does not read: each batch (and
// the headers, and the end of the stream) must be written within the write timeout, or the write
// fails, the handler returns and the watcher's buffers are freed.

// flushGateKey is the context key of a Watch request's flushGate.
type flushGateKey struct{}

// batchFlushes wraps the observation service's handler: Watch requests get a flushGate with the
// write timeout (zero: none) in their context; every other request passes through untouched.
func batchFlushes(next http.Handler, writeTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if !ok || r.URL.Path != ahpv1connect.ObservationServiceWatchProcedure {
			next.ServeHTTP(w, r)
			return
		}
		g := &flushGate{ResponseWriter: w, flusher: f, rc: http.NewResponseController(w), timeout: writeTimeout}
		next.ServeHTTP(g, r.WithContext(context.WithValue(r.Context(), flushGateKey{}, g)))
		// Watch returns holding the gate, so the end of the stream, written after it, goes out
		// here within the timeout; then the deadline is lifted, as a reused HTTP/1.1 connection
		// would otherwise keep it.
		g.release()
	})
}

// flushGate is a ResponseWriter whose Flush can be held back, and whose writes between hold and
// release must end within a timeout. Only the handler's goroutine uses it (connect sends and
// flushes from the goroutine that calls Send).
type flushGate struct {
	http.ResponseWriter
	flusher http.Flusher
	rc      *http.ResponseController
	timeout time.Duration // zero: writes may take as long as they take
	held    bool          // Flush only notes that a flush is due
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

// hold defers flushes until release and puts the write deadline on what is written until then.
// A nil gate (a request that did not come through batchFlushes) does nothing.
func (g *flushGate) hold() {
	if g != nil {
		g.held = true
		g.deadline(time.Now().Add(g.timeout))
	}
}

// release ends the hold, makes the one flush that was due, if any, and lifts the deadline: a
// watcher that waits for items must not be cut off for its idleness (HTTP/2 resets a stream whose
// deadline passes even when nothing is being written).
func (g *flushGate) release() {
	if g == nil {
		return
	}
	g.held = false
	if g.due {
		g.due = false
		g.flusher.Flush()
	}
	g.deadline(time.Time{})
}

// deadline sets the write deadline when there is a timeout. A writer that cannot take deadlines
// (none of net/http's) is left without one.
func (g *flushGate) deadline(t time.Time) {
	if g.timeout > 0 {
		_ = g.rc.SetWriteDeadline(t)
	}
}

// flushGateFrom returns the gate batchFlushes put in ctx, or nil.
func flushGateFrom(ctx context.Context) *flushGate {
	g, _ := ctx.Value(flushGateKey{}).(*flushGate)
	return g
}
