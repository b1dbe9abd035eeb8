package service

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// countingFlusher counts the flushes that reach the real writer.
type countingFlusher struct {
	*httptest.ResponseRecorder
	flushes int
}

func (c *countingFlusher) Flush() { c.flushes++ }

func TestBatchFlushesHoldsWatchFlushesOnly(t *testing.T) {
	for _, c := range []struct {
		path        string
		gated       bool
		wantFlushes int
	}{
		{ahpv1connect.ObservationServiceWatchProcedure, true, 1},
		{ahpv1connect.ObservationServiceObserveStreamProcedure, false, 3},
	} {
		w := &countingFlusher{ResponseRecorder: httptest.NewRecorder()}
		var sawGate bool
		h := batchFlushes(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g := flushGateFrom(r.Context())
			sawGate = g != nil
			g.hold()
			for _, part := range []string{"a", "b", "c"} {
				w.Write([]byte(part))
				w.(http.Flusher).Flush()
			}
			g.release()
			g.release() // a second release has nothing due
		}), 0)
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, c.path, nil))
		if sawGate != c.gated || w.flushes != c.wantFlushes || w.Body.String() != "abc" {
			t.Errorf("%s: gate %v, %d flushes, body %q; want gate %v, %d flushes, body abc", c.path, sawGate, w.flushes, w.Body.String(), c.gated, c.wantFlushes)
		}
	}
}

func TestFlushGatePassesFlushesThroughWhenNotHeld(t *testing.T) {
	w := &countingFlusher{ResponseRecorder: httptest.NewRecorder()}
	g := &flushGate{ResponseWriter: w, flusher: w}
	g.Flush()
	g.release() // nothing held, nothing due
	if w.flushes != 1 {
		t.Fatalf("%d flushes, want 1", w.flushes)
	}
	if http.NewResponseController(g).Flush() != nil || w.flushes != 2 {
		t.Fatalf("ResponseController.Flush through the gate: %d flushes, want 2", w.flushes)
	}
}
