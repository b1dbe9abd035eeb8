package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bench"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// rawJSONClient sends Connect JSON Intercept requests over one HTTP/1.1 keep-alive connection
// from bytes prepared once and reads each answer into a reused buffer: after the first call it
// allocates nothing, so a benchmark's B/op and allocs/op are the server's alone (net/http,
// connect-go, the codec, validation, the core). The body is that of ahp-bench's Connect JSON
// target (bench.Workload.AppendInterceptJSON) with a fixed-width event id, so that its length
// never changes.
type rawJSONClient struct {
	conn   net.Conn
	br     *bufio.Reader
	req    []byte
	idAt   [2]int // offsets of the two copies of the id's digits in req
	answer []byte
}

const rawIDDigits = 12

func newRawJSONClient(tb testing.TB, addr, command, extraHeaders string) *rawJSONClient {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() })
	id := fmt.Sprintf("bench-%0*d", rawIDDigits, 0)
	body := `{"event":{"id":"` + id + `","source":"urn:ahp-bench","type":"EVENT_TYPE_TOOL_BEFORE","time":"2026-12-01T21:00:00Z",` +
		`"session":{"id":"bench-w0"},"tool":{"callId":"call-` + id + `","name":"Bash","kind":"TOOL_KIND_SHELL",` +
		`"input":{"command":` + strconv.Quote(command) + `}}}}`
	head := "POST " + ahpv1connect.InterceptServiceInterceptProcedure + " HTTP/1.1\r\nHost: " + addr +
		"\r\nContent-Type: application/json\r\n" + extraHeaders + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	c := &rawJSONClient{conn: conn, br: bufio.NewReaderSize(conn, 16<<10), req: []byte(head + body), answer: make([]byte, 0, 4096)}
	first := bytes.Index(c.req, []byte(id)) + len("bench-")
	second := bytes.LastIndex(c.req, []byte(id)) + len("bench-")
	c.idAt = [2]int{first, second}
	return c
}

// call sends request seq and returns the answer's body, valid until the next call.
func (c *rawJSONClient) call(seq uint64) ([]byte, error) {
	for _, at := range c.idAt {
		digits := c.req[at : at+rawIDDigits]
		n := seq
		for i := len(digits) - 1; i >= 0; i-- {
			digits[i] = byte('0' + n%10)
			n /= 10
		}
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return nil, err
	}
	status, length := 0, -1
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		switch {
		case status == 0:
			if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
				return nil, fmt.Errorf("bad status line %q", line)
			}
			status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		case len(line) > 15 && bytes.EqualFold(line[:15], []byte("Content-Length:")):
			n, err := strconv.Atoi(string(bytes.TrimSpace(line[15:])))
			if err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", line)
			}
			length = n
		}
	}
	if length < 0 || length > cap(c.answer) {
		return nil, fmt.Errorf("answer without a usable Content-Length (%d)", length)
	}
	c.answer = c.answer[:length]
	if _, err := io.ReadFull(c.br, c.answer); err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", status, c.answer)
	}
	return c.answer, nil
}

// rawSeq numbers the requests of every rawJSONClient, so that no two share an event id (an
// idempotency hit would skip the decision).
var rawSeq atomic.Uint64

// runRawIntercepts calls Intercept b.N times, each with a fresh event id, and checks each answer
// holds want.
func runRawIntercepts(b *testing.B, c *rawJSONClient, want string) {
	b.Helper()
	// Warm up: the connection's buffers, the session's rings, the stores' first entries.
	for range 200 {
		if _, err := c.call(rawSeq.Add(1)); err != nil {
			b.Fatal(err)
		}
	}
	wantB := []byte(want)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		answer, err := c.call(rawSeq.Add(1))
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(answer, wantB) {
			b.Fatalf("answer %s does not hold %s", answer, want)
		}
	}
}

// BenchmarkInterceptConnectJSON is a Connect JSON Intercept over HTTP/1.1 on loopback, the
// request ahp-bench's OPA comparison sends, counted on the server side only (the client
// allocates nothing):
//   - server: a full ahp-server through Serve (host check, connection caps, the JSON codec,
//     validation, the 50-rule shell-regex policy of the comparison, session memory, idempotency,
//     the watch hub), an event that matches no rule (the issue's ≤ 4 KB / ≤ 40 allocations goal),
//     without a client timeout (ahp-bench's JSON target) and with one (Connect-Timeout-Ms, as
//     connect-go clients with a deadline send it);
//   - noop: the same http.Server settings and connect-go with its default options in front of a
//     handler that answers at once, the floor of net/http and connect-go; noop-server-codec the
//     same with the server's JSON codec.
func BenchmarkInterceptConnectJSON(b *testing.B) {
	b.Run("server", func(b *testing.B) {
		files, err := bench.WritePolicies(b.TempDir(), "bench", 50)
		if err != nil {
			b.Fatal(err)
		}
		srv, err := server.New(server.Config{PolicyFile: files.CEL, PolicyPollInterval: -1, Logger: testkit.Discard()})
		if err != nil {
			b.Fatal(err)
		}
		addr, _, _ := testkit.ServeTCP(b, srv.Serve)
		b.Run("no-timeout", func(b *testing.B) {
			runRawIntercepts(b, newRawJSONClient(b, addr, "ls -la", ""), `"VERDICT_ALLOW"`)
		})
		// A client with a deadline, as connect-go clients send it.
		b.Run("client-timeout", func(b *testing.B) {
			runRawIntercepts(b, newRawJSONClient(b, addr, "ls -la", "Connect-Timeout-Ms: 10000\r\n"), `"VERDICT_ALLOW"`)
		})
		// With Prometheus metrics, as ahp-server runs by default.
		b.Run("metrics", func(b *testing.B) {
			srv, err := server.New(server.Config{
				PolicyFile: files.CEL, PolicyPollInterval: -1, Logger: testkit.Discard(),
				Metrics: metrics.New(metrics.Options{Logger: testkit.Discard()}),
			})
			if err != nil {
				b.Fatal(err)
			}
			addr, _, _ := testkit.ServeTCP(b, srv.Serve)
			runRawIntercepts(b, newRawJSONClient(b, addr, "ls -la", ""), `"VERDICT_ALLOW"`)
		})
	})
	noop := func(b *testing.B, opts ...connect.HandlerOption) {
		srv, err := server.New(server.Config{Logger: testkit.Discard()})
		if err != nil {
			b.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle(ahpv1connect.NewInterceptServiceHandler(noopIntercept{}, opts...))
		hs := srv.HTTPServer()
		hs.Handler = mux
		addr := testkit.ServeLoopback(b, hs)
		runRawIntercepts(b, newRawJSONClient(b, addr[len("http://"):], "ls -la", ""), `"VERDICT_ALLOW"`)
	}
	b.Run("noop", func(b *testing.B) { noop(b) })
	// The same with the server's JSON codec: what net/http and connect-go cost in front of any
	// handler, with the request decoded as the server decodes it.
	b.Run("noop-server-codec", func(b *testing.B) { noop(b, server.JSONCodecOptions()...) })
}
