package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
)

// An ObserveStream whose client sends nothing still ends at the maximum stream duration, on both
// HTTP versions: the handler is blocked in a body read, which the stream's context alone does
// not reach.
func TestIdleObserveStreamEndsAtMaxStreamDuration(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, func(c *server.Config) { c.MaxStreamDuration = 200 * time.Millisecond })
	for _, tc := range []struct {
		name string
		hc   *http.Client
	}{{"h2c", ts.mem.Client()}, {"http1", ts.mem.HTTP1Client()}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The guard only turns a hang into a failure; the stream should end after 200ms.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			body, idle := io.Pipe() // never written: the client stays silent
			// The HTTP/1 transport keeps reading the body after ctx ends; end it with ctx.
			defer context.AfterFunc(ctx, func() { idle.CloseWithError(ctx.Err()) })()
			defer idle.Close()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+ahpv1connect.ObservationServiceObserveStreamProcedure, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/connect+proto")
			resp, err := tc.hc.Do(req)
			if err != nil {
				t.Fatalf("no answer while the client is silent: %v", err)
			}
			defer resp.Body.Close()
			end, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read the end of the stream: %v", err)
			}
			if !strings.Contains(string(end), `"deadline_exceeded"`) || !strings.Contains(string(end), "maximum stream duration") {
				t.Fatalf("stream ended with %q, want deadline_exceeded naming the maximum stream duration", end)
			}
		})
	}
}
