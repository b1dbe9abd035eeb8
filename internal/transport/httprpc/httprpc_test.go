package httprpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/httprpc"
	tt "github.com/ahp-gateway/ahp/internal/transport/transporttest"
)

func newServer(t *testing.T, opts httprpc.Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(httprpc.NewHandler(&tt.Handler{}, opts))
	t.Cleanup(srv.Close)
	return srv
}

func TestStatusMatrix(t *testing.T) {
	t.Parallel()
	srv := newServer(t, httprpc.Options{MaxMessageBytes: 1000})
	client := srv.Client()
	client.Timeout = 10 * time.Second
	big := tt.Request(`"big"`, "echo", `{"p":"`+strings.Repeat("x", 1000)+`"}`)
	cases := []struct {
		name, method, path, contentType, encoding, body string
		status                                          int
		bodyHas                                         string
	}{
		{"hooks request", "POST", "/hooks", "application/json", "", tt.Request(`"e1"`, "echo", ""), 200, `"id":"e1"`},
		{"harness request", "POST", "/ahp", "application/json", "", tt.Request(`"r1"`, "echo", ""), 200, `"id":"r1"`},
		{"charset utf-8", "POST", "/hooks", "application/json; charset=UTF-8", "", tt.Request(`"e1"`, "echo", ""), 200, `"id":"e1"`},
		{"notification", "POST", "/ahp", "application/json", "", tt.Notification("echo", ""), 204, ""},
		{"observe accepted", "POST", "/hooks", "application/json", "", tt.Notification("accepted", ""), 202, ""},
		{"garbage goes to the handler", "POST", "/hooks", "application/json", "", "{nope", 200, `-32700`},
		{"a batch goes to the handler", "POST", "/hooks", "application/json", "", `[` + tt.Request(`"e1"`, "echo", "") + `]`, 200, `"error"`},
		{"other path", "POST", "/other", "application/json", "", tt.Request(`"e1"`, "echo", ""), 404, ""},
		{"path with a trailing slash", "POST", "/hooks/", "application/json", "", tt.Request(`"e1"`, "echo", ""), 404, ""},
		{"GET", "GET", "/hooks", "", "", "", 405, ""},
		{"PUT", "PUT", "/ahp", "application/json", "", tt.Request(`"e1"`, "echo", ""), 405, ""},
		{"text/plain", "POST", "/hooks", "text/plain", "", tt.Request(`"e1"`, "echo", ""), 415, ""},
		{"no content type", "POST", "/ahp", "", "", tt.Request(`"e1"`, "echo", ""), 415, ""},
		{"+json suffix", "POST", "/hooks", "application/vnd.x+json", "", tt.Request(`"e1"`, "echo", ""), 415, ""},
		{"latin-1", "POST", "/hooks", "application/json; charset=iso-8859-1", "", tt.Request(`"e1"`, "echo", ""), 415, ""},
		{"gzip", "POST", "/hooks", "application/json", "gzip", tt.Request(`"e1"`, "echo", ""), 415, ""},
		{"identity encoding", "POST", "/hooks", "application/json", "identity", tt.Request(`"e1"`, "echo", ""), 415, ""},
		{"over the limit", "POST", "/hooks", "application/json", "", big, 413, ""},
		{"over the limit on /ahp", "POST", "/ahp", "application/json", "", big, 413, ""},
	}
	for _, tc := range cases {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		if tc.encoding != "" {
			req.Header.Set("Content-Encoding", tc.encoding)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d (body %q)", tc.name, resp.StatusCode, tc.status, body)
			continue
		}
		switch {
		case tc.status == 405 && resp.Header.Get("Allow") != "POST":
			t.Errorf("%s: Allow %q", tc.name, resp.Header.Get("Allow"))
		case (tc.status == 204 || tc.status == 202) && len(body) != 0:
			t.Errorf("%s: body %q, want none", tc.name, body)
		case tc.status == 200 && resp.Header.Get("Content-Type") != "application/json":
			t.Errorf("%s: Content-Type %q", tc.name, resp.Header.Get("Content-Type"))
		case !strings.Contains(string(body), tc.bodyHas):
			t.Errorf("%s: body %q, want %q in it", tc.name, body, tc.bodyHas)
		}
	}
}

func TestChunkedBodyOverTheLimit(t *testing.T) {
	t.Parallel()
	srv := newServer(t, httprpc.Options{MaxMessageBytes: 1000})
	pr, pw := io.Pipe()
	go func() {
		for range 20 {
			if _, err := io.WriteString(pw, strings.Repeat("x", 100)); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", srv.URL+"/hooks", pr) // unknown length: chunked
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestUnreadableBodyIs400(t *testing.T) {
	t.Parallel()
	h := httprpc.NewHandler(&tt.Handler{}, httprpc.Options{})
	req := httptest.NewRequest("POST", "/hooks", errReader{})
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d", rec.Code)
	}
}

// A Handler never panics (Bridge.Handle recovers and answers in the caller's dialect); the
// transport does not hide one that breaks the contract.
func TestHandlerPanicIsNotRecovered(t *testing.T) {
	t.Parallel()
	h := httprpc.NewHandler(&tt.Handler{}, httprpc.Options{})
	req := httptest.NewRequest("POST", "/ahp", strings.NewReader(tt.Request(`"p"`, tt.MethodPanic, "")))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	defer func() {
		if recover() == nil {
			t.Errorf("the handler's panic was recovered by the transport (status %d)", rec.Code)
		}
	}()
	h.ServeHTTP(rec, req)
}

func TestHandlerSeesHTTPTransportAndStatus(t *testing.T) {
	t.Parallel()
	var seen bridge.Transport
	h := httprpc.NewHandler(bridge.HandlerFunc(func(_ context.Context, msg []byte, tr bridge.Transport) bridge.Reply {
		seen = tr
		return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`), HTTPStatus: http.StatusBadRequest}
	}), httprpc.Options{HooksPath: "/rpc", HarnessPath: "/rpc"})
	req := httptest.NewRequest("POST", "/rpc?x=1", strings.NewReader(`[]`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || seen != bridge.TransportHTTP || !strings.Contains(rec.Body.String(), "-32600") {
		t.Fatalf("status %d, transport %d, body %q", rec.Code, seen, rec.Body.String())
	}
}

func TestServeSpeaksH2CAndStopsGracefully(t *testing.T) {
	t.Parallel()
	h := &tt.Handler{}
	addr, cancel, served := testkit.ServeTCP(t, func(ctx context.Context, ln net.Listener) error {
		return httprpc.Serve(ctx, ln, h, httprpc.Options{})
	})

	client := testkit.H2CClient()
	client.Timeout = 10 * time.Second
	slow := make(chan string, 1)
	go func() {
		resp, err := client.Post("http://"+addr+"/ahp", "application/json", strings.NewReader(tt.Request(`"slow"`, tt.MethodBlock, "")))
		if err != nil {
			slow <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slow <- resp.Proto + " " + string(b)
	}()
	wait, stopWaiting := context.WithTimeout(context.Background(), 10*time.Second)
	defer stopWaiting()
	if err := h.HoldThroughShutdown(wait, cancel, "tcp", addr); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Receive(t, slow, "no answer"); !strings.HasPrefix(got, "HTTP/2.0 ") || !strings.Contains(got, `"id":"slow"`) {
		t.Fatalf("in-flight request got %q", got)
	}
	if err := testkit.Receive(t, served, "Serve did not return"); err != nil {
		t.Fatal(err)
	}
}

// fixedReply answers every message with the same body.
type fixedReply []byte

func (f fixedReply) Handle(context.Context, []byte, bridge.Transport) bridge.Reply {
	return bridge.Reply{Body: f, HTTPStatus: http.StatusOK}
}

// BenchmarkServeHTTP is the HTTP framing's own cost per hooks/intercept POST (the checks, reading
// the body, writing the answer), against a recorder and a handler that answers at once.
func BenchmarkServeHTTP(b *testing.B) {
	h := httprpc.NewHandler(fixedReply(`{"jsonrpc":"2.0","id":"e1","result":{"effects":[],"protocolVersion":"0.1"}}`), httprpc.Options{})
	msg := tt.Request(`"e1"`, "hooks/intercept", strings.Repeat("x", 500))
	rd := strings.NewReader(msg)
	req := httptest.NewRequest(http.MethodPost, "/hooks", rd)
	req.Header.Set("Content-Type", "application/json")
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(msg)
		req.Body = io.NopCloser(rd)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
