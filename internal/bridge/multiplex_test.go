package bridge_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// countingUpstream serves h and counts unary Intercept calls and InterceptStream streams.
type countingUpstream struct {
	url            string
	unary, streams atomic.Int64
}

func startCounting(t *testing.T, h http.Handler) *countingUpstream {
	t.Helper()
	c := &countingUpstream{}
	c.url = startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case ahpv1connect.InterceptServiceInterceptProcedure:
			c.unary.Add(1)
		case ahpv1connect.InterceptServiceInterceptStreamProcedure:
			c.streams.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	return c
}

// patient is the StreamPatience of tests that count calls on the stream: a loaded machine must
// not send a slow first answer to the unary road.
const patient = 20 * time.Second

// countedUpstream serves h (nil: a real ahp-server with the default policy) behind a
// countingUpstream and returns clients for it and a context for the test's calls.
func countedUpstream(t *testing.T, h http.Handler, opts bridge.UpstreamOptions) (*countingUpstream, bridge.Clients, context.Context) {
	t.Helper()
	if h == nil {
		srv, err := server.New(server.Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		h = srv.Handler()
	}
	up := startCounting(t, h)
	clients, closer, err := bridge.NewUpstream(up.url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return up, clients, ctx
}

func intercept(ctx context.Context, c ahpv1connect.InterceptServiceClient, ev *ahpv1.Event) (*ahpv1.Decision, error) {
	resp, err := c.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
	if err != nil {
		return nil, err
	}
	return resp.Msg.GetDecision(), nil
}

// TestInterceptCallsShareOneStream sends concurrent calls, pairs of them with the same event id
// but different commands, and checks that each gets its own decision over a single stream.
func TestInterceptCallsShareOneStream(t *testing.T) {
	t.Parallel()
	up, clients, ctx := countedUpstream(t, nil, bridge.UpstreamOptions{StreamPatience: patient})

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		for _, c := range []struct{ command, want string }{{"ls -la", "VERDICT_ALLOW"}, {"rm -rf /", "VERDICT_DENY"}} {
			wg.Go(func() {
				d, err := intercept(ctx, clients.Intercept, testkit.ShellEvent(fmt.Sprintf("same-%d", i), c.command))
				switch {
				case err != nil:
					errs <- err
				case d.GetVerdict().String() != c.want:
					errs <- fmt.Errorf("%s (event same-%d): verdict %s, want %s", c.command, i, d.GetVerdict(), c.want)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := up.unary.Load(); n != 0 {
		t.Errorf("%d unary calls, want 0 (every call on one stream)", n)
	}
	if s := up.streams.Load(); s != 1 {
		t.Errorf("%d streams, want 1 (every call on one stream)", s)
	}
}

// TestStreamRejectionsComeFromTheUnaryCall: an event the server rejects is asked again unary, so
// the caller sees the server's own error response, exactly as without the stream.
func TestStreamRejectionsComeFromTheUnaryCall(t *testing.T) {
	t.Parallel()
	up, clients, ctx := countedUpstream(t, nil, bridge.UpstreamOptions{StreamPatience: patient})

	if _, err := intercept(ctx, clients.Intercept, testkit.ShellEvent("ok-1", "ls")); err != nil {
		t.Fatal(err)
	}
	_, err := intercept(ctx, clients.Intercept, testkit.ShellEvent("", "ls"))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("invalid event: %v; want invalid_argument", err)
	}
	if !connect.IsWireError(err) {
		t.Fatalf("invalid event: %v is the client's own error; want the server's", err)
	}
	if !strings.Contains(err.Error(), "event.id") {
		t.Fatalf("invalid event: %v; want it to name event.id", err)
	}
	if _, err := intercept(ctx, clients.Intercept, testkit.ShellEvent("ok-2", "ls")); err != nil {
		t.Fatal(err)
	}
	if n := up.unary.Load(); n != 1 {
		t.Errorf("%d unary calls, want 1 (the rejected event alone asked again unary)", n)
	}
	if s := up.streams.Load(); s != 1 {
		t.Errorf("%d streams, want 1 (the rejected event alone asked again unary)", s)
	}
}

// silentTagServer answers InterceptStream without echoing request_id, like a server from before
// the field existed, and Intercept normally.
type silentTagServer struct {
	ahpv1connect.UnimplementedInterceptServiceHandler
}

func (silentTagServer) Intercept(_ context.Context, req *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return connect.NewResponse(&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{DecisionId: "unary-" + req.Msg.GetEvent().GetId(), Verdict: ahpv1.Verdict_VERDICT_ALLOW}}), nil
}

func (silentTagServer) InterceptStream(_ context.Context, stream *connect.BidiStream[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]) error {
	for {
		req, err := stream.Receive()
		if err != nil {
			return nil
		}
		d := &ahpv1.Decision{DecisionId: "stream-" + req.GetEvent().GetId(), Verdict: ahpv1.Verdict_VERDICT_ALLOW}
		if err := stream.Send(&ahpv1.InterceptStreamResponse{EventId: req.GetEvent().GetId(), Decision: d}); err != nil {
			return err
		}
	}
}

// TestServersThatDoNotEchoTheTagAreCalledUnary: answers without request_id cannot be matched to
// calls, so the bridge stops streaming to that server for good and every call goes unary.
func TestServersThatDoNotEchoTheTagAreCalledUnary(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(silentTagServer{}))
	var logs testkit.LogBuffer
	up, clients, ctx := countedUpstream(t, mux, bridge.UpstreamOptions{StreamPatience: patient, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i := range 5 {
		id := fmt.Sprintf("e%d", i)
		d, err := intercept(ctx, clients.Intercept, testkit.ShellEvent(id, "ls"))
		if err != nil {
			t.Fatal(err)
		}
		if d.GetDecisionId() != "unary-"+id {
			t.Errorf("call %d answered by %q; want the unary answer", i, d.GetDecisionId())
		}
	}
	if n := up.unary.Load(); n != 5 {
		t.Errorf("%d unary calls, want 5 (5 unary calls after one stream attempt)", n)
	}
	if s := up.streams.Load(); s != 1 {
		t.Errorf("%d streams, want 1 (5 unary calls after one stream attempt)", s)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") {
		t.Errorf("nothing logged at warning level; logs:\n%s", got)
	} else if !strings.Contains(got, "does not echo request_id") {
		t.Errorf("the warning does not say the server does not echo request_id; logs:\n%s", got)
	}
}

// TestUnaryOnlyNeverStreams checks the opt-out.
func TestUnaryOnlyNeverStreams(t *testing.T) {
	t.Parallel()
	up, clients, ctx := countedUpstream(t, nil, bridge.UpstreamOptions{UnaryOnly: true})
	for i := range 3 {
		if _, err := intercept(ctx, clients.Intercept, testkit.ShellEvent(fmt.Sprintf("u%d", i), "ls")); err != nil {
			t.Fatal(err)
		}
	}
	if n := up.unary.Load(); n != 3 {
		t.Errorf("%d unary calls, want 3 (3 and 0)", n)
	}
	if s := up.streams.Load(); s != 0 {
		t.Errorf("%d streams, want 0 (3 and 0)", s)
	}
}
