package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// sharedDir is the project's shared directory ($AHP_SHARED_DIR, by default ../shared next to the
// checkout), which holds the upstream Agent Hooks conformance fixtures.
var sharedDir = func() string {
	if d := os.Getenv("AHP_SHARED_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared")
}()

// hooks.testdataDir and harnessTestdata are the codecs' test data, which this package reuses.
var (
	hooksTestdata   = filepath.Join("..", "codec", "hooks", "testdata")
	harnessTestdata = filepath.Join("..", "codec", "harness", "testdata")
)

// quietLogger discards logs; tests that check logs make their own.
func quietLogger() *slog.Logger { return testkit.Discard() }

// startHTTP runs h on a loopback port speaking HTTP/1.1 and h2c, where the bridge's upstream
// client can dial it, and returns its URL.
func startHTTP(t testing.TB, h http.Handler) string {
	t.Helper()
	return testkit.StartLoopback(t, h)
}

// startServer runs a real ahp-server (embedded default policy) on a loopback port with its
// production http.Server settings, and returns its URL.
func startServer(t testing.TB, tweak func(*server.Config)) string {
	t.Helper()
	cfg := server.Config{Logger: quietLogger(), Version: "2.4.0"}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.ServeLoopback(t, srv.HTTPServer())
}

// upstreamClients connects to url the way ahp-jsonrpc-bridge does.
func upstreamClients(t testing.TB, url string) bridge.Clients {
	t.Helper()
	clients, closer, err := bridge.NewUpstream(url, bridge.UpstreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return clients
}

// embeddedClients runs ahp-server in-process.
func embeddedClients(t testing.TB) bridge.Clients {
	t.Helper()
	clients, closer, err := bridge.NewEmbedded(server.Config{Logger: quietLogger(), Version: "2.4.0"})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "the embedded server", closer.Close)
	return clients
}

// newBridge builds a Bridge over clients with a quiet logger; tweak adjusts the config.
func newBridge(t testing.TB, clients bridge.Clients, tweak func(*bridge.Config)) *bridge.Bridge {
	t.Helper()
	// A patient per-call deadline: on a loaded machine a first call (a new connection, a cold
	// server) can take longer than the 2 s default. Tests of deadlines set their own.
	cfg := bridge.Config{Clients: clients, Logger: quietLogger(), Timeout: 20 * time.Second}
	if tweak != nil {
		tweak(&cfg)
	}
	b, err := bridge.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modes are the two ways a bridge reaches the decision core; most tests run in both.
var modes = []struct {
	name    string
	clients func(testing.TB) bridge.Clients
}{
	{"upstream", func(t testing.TB) bridge.Clients { return upstreamClients(t, startServer(t, nil)) }},
	{"embedded", embeddedClients},
}

// handle sends one message with a generous context.
func handle(t testing.TB, h bridge.Handler, msg string, tr bridge.Transport) bridge.Reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.Handle(ctx, []byte(msg), tr)
}

// response is a decoded JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// decodeReply parses a reply body, failing the test when there is none or it is not JSON-RPC.
func decodeReply(t testing.TB, r bridge.Reply) response {
	t.Helper()
	if r.Body == nil {
		t.Fatalf("no reply (HTTP status %d), want one", r.HTTPStatus)
	}
	var resp response
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("reply is not a JSON-RPC response: %v\n%s", err, r.Body)
	}
	if resp.JSONRPC != "2.0" {
		t.Fatalf("reply jsonrpc = %q\n%s", resp.JSONRPC, r.Body)
	}
	if (resp.Result == nil) == (resp.Error == nil) {
		t.Fatalf("reply needs exactly one of result and error\n%s", r.Body)
	}
	if r.HTTPStatus != http.StatusOK {
		t.Errorf("HTTP status %d with a body, want 200", r.HTTPStatus)
	}
	return resp
}

// wantError checks a reply's id, code and (unless empty) exact message.
func wantError(t testing.TB, r bridge.Reply, id string, code int, message string) response {
	t.Helper()
	resp := decodeReply(t, r)
	if resp.Error == nil {
		t.Fatalf("got a result, want error %d\n%s", code, r.Body)
	}
	if string(resp.ID) != id {
		t.Errorf("id = %s, want %s", resp.ID, id)
	}
	if resp.Error.Code != code {
		t.Errorf("code = %d, want %d\n%s", resp.Error.Code, code, r.Body)
	}
	if message != "" && resp.Error.Message != message {
		t.Errorf("message = %q\nwant      %q", resp.Error.Message, message)
	}
	return resp
}

// wantResult checks a reply's id and returns its result.
func wantResult(t testing.TB, r bridge.Reply, id string) json.RawMessage {
	t.Helper()
	resp := decodeReply(t, r)
	if resp.Error != nil {
		t.Fatalf("got error %d %q, want a result\n%s", resp.Error.Code, resp.Error.Message, r.Body)
	}
	if string(resp.ID) != id {
		t.Errorf("id = %s, want %s", resp.ID, id)
	}
	return resp.Result
}

// wantNoReply checks that nothing is sent back.
func wantNoReply(t testing.TB, r bridge.Reply, httpStatus int) {
	t.Helper()
	if r.Body != nil {
		t.Fatalf("got a reply, want none:\n%s", r.Body)
	}
	if httpStatus != 0 && r.HTTPStatus != httpStatus {
		t.Errorf("HTTP status %d, want %d", r.HTTPStatus, httpStatus)
	}
}

// withoutKey removes a key from every object of a JSON document (e.g. a decision id that
// differs per run) and returns it re-encoded with sorted keys.
func withoutKey(t testing.TB, doc []byte, key string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, key)
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// readLines reads a JSON-lines file.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out
}

// deadListener returns the URL of a loopback address where nothing listens any more.
func deadURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// slogTo is a text logger at debug level writing to w, one record at a time.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(testkit.LockedWriter(w), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// drain reads and discards a request body, as a server would before answering.
func drain(r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }
