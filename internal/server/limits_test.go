package server_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
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

// rawCodec sends a rawMessage's bytes as they are, under the proto codec's name, so that a test
// can send any payload.
type rawCodec struct{}

type rawMessage struct{ b []byte }

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) { return v.(*rawMessage).b, nil }

func (rawCodec) Unmarshal([]byte, any) error { return nil }

// A compressed message that inflates far past the request limit is refused after inflating about
// the limit, not all of it, on every protocol, unary and streaming. connect reports a message's
// full size only when it has inflated all of it, so the size in the error shows how far it went.
func TestGzipBombIsRefusedAtTheLimit(t *testing.T) {
	t.Parallel()
	const limit = 16 << 10
	ts := start(t, basePolicy, func(c *server.Config) { c.MaxRequestBytes = limit })
	bomb := &rawMessage{make([]byte, 512*limit)} // zeros: gzip sends it in about 8 KiB
	reportedSize := regexp.MustCompile(`message size (\d+)`)
	eachProtocol(t, func(t *testing.T, proto protocol) {
		if proto.name == "connect+json" {
			t.Skip("the same protocol as connect; the payload is raw bytes under the proto codec")
		}
		opts := append([]connect.ClientOption{connect.WithCodec(rawCodec{}), connect.WithSendGzip()}, proto.opts...)
		ctx := context.Background()
		check := func(t *testing.T, err error) {
			t.Helper()
			if connect.CodeOf(err) != connect.CodeResourceExhausted {
				t.Fatalf("connect.CodeOf(err) = %v, want ResourceExhausted (%v)", connect.CodeOf(err), err)
			}
			if m := reportedSize.FindStringSubmatch(err.Error()); m != nil {
				if n, _ := strconv.Atoi(m[1]); n > limit+1 {
					t.Fatalf("the server inflated %d bytes of a message limited to %d: %v", n, limit, err)
				}
			}
		}
		t.Run("unary", func(t *testing.T) {
			c := connect.NewClient[rawMessage, rawMessage](ts.hc, ts.url+ahpv1connect.InterceptServiceInterceptProcedure, opts...)
			_, err := c.CallUnary(ctx, connect.NewRequest(bomb))
			check(t, err)
		})
		t.Run("stream", func(t *testing.T) {
			c := connect.NewClient[rawMessage, rawMessage](ts.hc, ts.url+ahpv1connect.ObservationServiceObserveStreamProcedure, opts...)
			cs := c.CallClientStream(ctx)
			_ = cs.Send(bomb) // the error, if any, is CloseAndReceive's
			_, err := cs.CloseAndReceive()
			check(t, err)
		})
	})
}
