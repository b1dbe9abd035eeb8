package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
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

// Marshal returns a copy: connect puts what Marshal returns into its buffer pool, so returning the
// message's own bytes let another call read its answer into a payload still being sent (a data
// race between parallel subtests sharing one payload).
func (rawCodec) Marshal(v any) ([]byte, error) { return append([]byte(nil), v.(*rawMessage).b...), nil }

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
	eachWireProtocol(t, func(t *testing.T, proto protocol) {
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

// serveTCP serves a server configured by tweak on a loopback port until the test ends and returns
// its address.
func serveTCP(t *testing.T, tweak func(*server.Config)) string {
	t.Helper()
	cfg := server.Config{Logger: testkit.Discard()}
	tweak(&cfg)
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := testkit.ServeTCP(t, srv.Serve)
	return addr
}

// dial connects to addr; every read on the connection fails after the guard, which only turns a
// hang into a failure.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// slowRequest is the headers of a unary call announcing a body it does not send.
const slowRequest = "POST " + ahpv1connect.InterceptServiceInterceptProcedure + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
	"Content-Type: application/proto\r\nContent-Length: 100000\r\n\r\n"

// readUntilClosed reads c until the server closes it and returns what it read; it fails the test
// if the guard passes first.
func readUntilClosed(t *testing.T, c net.Conn, what string) string {
	t.Helper()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%s: the server kept the connection open: %v (read %q)", what, err, got)
	}
	return string(got)
}

// An unauthenticated call is refused before its body is sent, and its connection closed: a
// client trickling its body holds nothing.
func TestUnauthenticatedSlowBodyIsRefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	addr := serveTCP(t, func(c *server.Config) { c.Auth = authenticator(t) })
	c := dial(t, addr)
	if _, err := io.WriteString(c, slowRequest); err != nil {
		t.Fatal(err)
	}
	got := readUntilClosed(t, c, "no credential, no body")
	if !strings.HasPrefix(got, "HTTP/1.1 401 ") {
		t.Fatalf("answer = %q, want 401", got)
	}
}

// Unauthenticated clients trickling their bodies do not hold up a shutdown: their connections
// are closed once refused, so Serve returns at once rather than after ShutdownTimeout.
func TestShutdownIsNotHeldByUnauthenticatedSlowBodies(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Auth: authenticator(t), ShutdownTimeout: time.Hour, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, served := testkit.ServeTCP(t, srv.Serve)
	for i := range 10 {
		c := dial(t, addr)
		if _, err := io.WriteString(c, slowRequest); err != nil {
			t.Fatal(err)
		}
		if got := readUntilClosed(t, c, fmt.Sprintf("slow client %d", i)); !strings.HasPrefix(got, "HTTP/1.1 401 ") {
			t.Fatalf("slow client %d: answer = %q, want 401", i, got)
		}
	}
	stop()
	if err := testkit.Receive(t, served, "Serve did not return"); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// A call that sends its body too slowly is cut off at the body read timeout.
func TestSlowBodyIsCutOffAtTheReadTimeout(t *testing.T) {
	t.Parallel()
	addr := serveTCP(t, func(c *server.Config) { c.BodyReadTimeout = 200 * time.Millisecond })
	c := dial(t, addr)
	if _, err := io.WriteString(c, slowRequest+"\x0a"); err != nil { // one byte, then silence
		t.Fatal(err)
	}
	readUntilClosed(t, c, "slow body")
}

// An HTTP/2 connection that sends its preface (the magic and an empty SETTINGS frame) and nothing
// else is closed at the idle timeout.
func TestPrefaceOnlyH2CConnectionIsClosedAtTheIdleTimeout(t *testing.T) {
	t.Parallel()
	addr := serveTCP(t, func(c *server.Config) { c.IdleTimeout = 200 * time.Millisecond })
	c := dial(t, addr)
	const settings = "\x00\x00\x00\x04\x00\x00\x00\x00\x00" // length 0, type SETTINGS, stream 0
	if _, err := io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"+settings); err != nil {
		t.Fatal(err)
	}
	readUntilClosed(t, c, "preface only")
}

// Connections over a cap are closed at once and counted; those within it are served.
func TestConnectionCaps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason         string
		total, perAddr int
	}{
		{metrics.ConnectionsTotalCap, 3, -1},
		{metrics.ConnectionsPerAddressCap, -1, 3},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			m := metrics.New(metrics.Options{NoRuntimeMetrics: true})
			addr := serveTCP(t, func(c *server.Config) {
				c.Metrics, c.MaxConnections, c.MaxConnectionsPerAddress = m, tc.total, tc.perAddr
			})
			for i := range 3 {
				c := dial(t, addr)
				// An answer shows that the server accepted and counted the connection.
				if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
					t.Fatal(err)
				}
				if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 ") {
					t.Fatalf("connection %d within the cap: %q, %v", i, line, err)
				}
			}
			readUntilClosed(t, dial(t, addr), "the fourth connection")
			if got := gauge(t, m, "ahp_http_connections", ""); got != 3 {
				t.Errorf("ahp_http_connections = %v, want 3", got)
			}
			if got := gauge(t, m, "ahp_http_connections_refused_total", tc.reason); got != 1 {
				t.Errorf("ahp_http_connections_refused_total{reason=%q} = %v, want 1", tc.reason, got)
			}
		})
	}
}

// gauge returns the value of the series name (with reason label reason, when not empty) in m.
func gauge(t *testing.T, m *metrics.Metrics, name, reason string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if reason != "" && (len(s.GetLabel()) != 1 || s.GetLabel()[0].GetValue() != reason) {
				continue
			}
			if g := s.GetGauge(); g != nil {
				return g.GetValue()
			}
			return s.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s{reason=%q}", name, reason)
	return 0
}

// The read deadline of a call that sends one message cuts off a slow body on HTTP/2 as on
// HTTP/1, and does not end a Watch (a server stream) that outlives it on either: the slow call
// failing is the proof that the deadline passed while the watchers were open.
func TestReadTimeoutSparesServerStreams(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, func(c *server.Config) { c.BodyReadTimeout = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a guard against hangs
	defer cancel()
	var watches []*connect.ServerStreamForClient[ahpv1.WatchResponse]
	for _, hc := range []*http.Client{ts.mem.Client(), ts.mem.HTTP1Client()} {
		w, err := ahpv1connect.NewObservationServiceClient(hc, ts.url).Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: "spared"}))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		watches = append(watches, w)
	}

	body, silent := io.Pipe() // never written: the body never arrives
	defer context.AfterFunc(ctx, func() { silent.CloseWithError(ctx.Err()) })()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+ahpv1connect.InterceptServiceInterceptProcedure, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/proto")
	resp, err := ts.mem.Client().Do(req) // HTTP/2
	if ctx.Err() != nil {
		t.Fatalf("a call whose body never came was still open after 10 s (read timeout 200ms): %v", err)
	}
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("a call whose body never came was answered 200")
		}
	}

	ev := testkit.ShellEvent("spared-1", "ls")
	ev.Session.Id = "spared"
	if _, err := ts.intercept().Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
		t.Fatal(err)
	}
	for i, w := range watches {
		if !w.Receive() {
			t.Fatalf("watch %d (%s) ended after the read timeout: %v", i, []string{"h2c", "http1"}[i], w.Err())
		}
		if id := w.Msg().GetEvent().GetId(); id != "spared-1" {
			t.Errorf("watch %d got event %q, want spared-1", i, id)
		}
	}
}
