package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/transport/httprpc"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	"github.com/ahp-gateway/ahp/internal/transport/stdio"
	"github.com/ahp-gateway/ahp/internal/transport/unixsock"
	"github.com/ahp-gateway/ahp/internal/transport/ws"
	"github.com/coder/websocket"
)

// harnessVector is one line of internal/codec/harness/testdata/errors.jsonl: a message the
// Agent Harness Protocol reference server rejects, with its exact code and message.
type harnessVector struct {
	Name         string          `json:"name"`
	Method       string          `json:"method"`
	Params       json.RawMessage `json:"params"`
	Notification bool            `json:"notification"`
	Code         int             `json:"code"`
	Message      string          `json:"message"`
}

func harnessVectors(t *testing.T) []harnessVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "codec", "harness", "testdata", "errors.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []harnessVector
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var v harnessVector
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func (v harnessVector) wire() []byte {
	if v.Notification {
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, v.Method, v.Params))
	}
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`, v.Name, v.Method, v.Params))
}

type rpcReply struct {
	ID    any `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// embeddedBridge is the bridge over an in-process server with the default policy.
func embeddedBridge(t *testing.T) bridge.Handler {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	clients, closer, err := bridge.NewEmbedded(server.Config{Logger: log, Limits: bridge.ServerLimits(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	b, err := bridge.New(bridge.Config{Clients: clients, Timeout: 5 * time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// streamExchange writes every request line and reads one answer per request. Notifications are
// sent too: a stream transport must not answer them, so the answer count matches requests only.
func streamExchange(t *testing.T, w io.Writer, r io.Reader, vectors []harnessVector) map[string]rpcReply {
	t.Helper()
	requests := 0
	for _, v := range vectors {
		if _, err := w.Write(append(v.wire(), '\n')); err != nil {
			t.Fatal(err)
		}
		if !v.Notification {
			requests++
		}
	}
	got := map[string]rpcReply{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for len(got) < requests && sc.Scan() {
		var rep rpcReply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			t.Fatalf("answer is not JSON: %q", sc.Text())
		}
		id, _ := rep.ID.(string)
		if _, dup := got[id]; dup {
			t.Fatalf("two answers for %q", id)
		}
		got[id] = rep
	}
	if len(got) != requests {
		t.Fatalf("got %d answers for %d requests (%v)", len(got), requests, sc.Err())
	}
	return got
}

func checkVectors(t *testing.T, transport string, vectors []harnessVector, got map[string]rpcReply) {
	t.Helper()
	for _, v := range vectors {
		if v.Notification {
			if _, answered := got[v.Name]; answered {
				t.Errorf("%s %s: a notification was answered", transport, v.Name)
			}
			continue
		}
		rep, ok := got[v.Name]
		switch {
		case !ok:
			t.Errorf("%s %s: no answer", transport, v.Name)
		case rep.Error == nil:
			t.Errorf("%s %s: answered %s, want error %d", transport, v.Name, rep.Result, v.Code)
		case rep.Error.Code != v.Code || rep.Error.Message != v.Message:
			t.Errorf("%s %s: error %d %q, want %d %q", transport, v.Name, rep.Error.Code, rep.Error.Message, v.Code, v.Message)
		}
	}
}

// TestHarnessVectorsOnEveryTransport sends the Agent Harness Protocol reference's rejection vectors
// through stdio, HTTP, WebSocket and a Unix socket; each must give the reference's exact code and
// message, and no transport may answer a notification (HTTP answers a failed one as the
// reference does: 200 with -32603).
func TestHarnessVectorsOnEveryTransport(t *testing.T) {
	t.Parallel()
	vectors := harnessVectors(t)
	h := embeddedBridge(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := ndjson.Options{Logger: slog.New(slog.DiscardHandler)}

	t.Run("stdio", func(t *testing.T) {
		var in bytes.Buffer
		for _, v := range vectors {
			in.Write(append(v.wire(), '\n'))
		}
		var out bytes.Buffer
		if err := stdio.Serve(ctx, &in, &out, h, opts); err != nil {
			t.Fatal(err)
		}
		got := streamExchange(t, io.Discard, &out, vectors)
		checkVectors(t, "stdio", vectors, got)
	})

	t.Run("unix", func(t *testing.T) {
		path := testkit.SocketPath(t)
		ln, err := unixsock.Listen(path, unixsock.DefaultMode)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = unixsock.Serve(ctx, ln, h, unixsock.Options{Stream: opts}) }()
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		checkVectors(t, "unix", vectors, streamExchange(t, conn, conn, vectors))
	})

	t.Run("http", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = httprpc.Serve(ctx, ln, h, httprpc.Options{}) }()
		got := map[string]rpcReply{}
		for _, v := range vectors {
			resp, err := http.Post("http://"+ln.Addr().String()+"/ahp", "application/json", bytes.NewReader(v.wire()))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("http %s: status %d", v.Name, resp.StatusCode)
				continue
			}
			var rep rpcReply
			if err := json.Unmarshal(body, &rep); err != nil {
				t.Fatalf("http %s: %q", v.Name, body)
			}
			if v.Notification {
				// The reference answers a failed notification over HTTP with id "" and -32603.
				if rep.ID != "" || rep.Error == nil || rep.Error.Code != v.Code || rep.Error.Message != v.Message {
					t.Errorf("http notification %s: %s", v.Name, body)
				}
				continue
			}
			got[v.Name] = rep
		}
		vs := make([]harnessVector, 0, len(vectors))
		for _, v := range vectors {
			if !v.Notification {
				vs = append(vs, v)
			}
		}
		checkVectors(t, "http", vs, got)
	})

	t.Run("websocket", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := ws.NewServer(h, ws.Options{Logger: slog.New(slog.DiscardHandler)})
		go func() { _ = srv.Serve(ctx, ln) }()
		dctx, dcancel := context.WithTimeout(ctx, 60*time.Second)
		defer dcancel()
		c, _, err := websocket.Dial(dctx, "ws://"+ln.Addr().String()+"/ahp", &websocket.DialOptions{Subprotocols: []string{ws.Subprotocol}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		got := map[string]rpcReply{}
		for _, v := range vectors {
			if err := c.Write(dctx, websocket.MessageText, v.wire()); err != nil {
				t.Fatal(err)
			}
			if v.Notification {
				continue
			}
			_, data, err := c.Read(dctx)
			if err != nil {
				t.Fatal(err)
			}
			var rep rpcReply
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatalf("websocket %s: %q", v.Name, data)
			}
			id, _ := rep.ID.(string)
			if id != v.Name {
				t.Fatalf("websocket: answer for %q while waiting for %q (a notification was answered?)", id, v.Name)
			}
			got[id] = rep
		}
		checkVectors(t, "websocket", vectors, got)
	})
}
