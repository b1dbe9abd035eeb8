package ws_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
	tt "github.com/ahp-gateway/ahp/internal/transport/transporttest"
	"github.com/ahp-gateway/ahp/internal/transport/ws"
)

const testTimeout = 10 * time.Second

// testContext bounds what a test waits for by testTimeout; it ends with the test.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, ctx context.Context, url string, subprotocols ...string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: subprotocols})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func newServer(t *testing.T, h bridge.Handler, opts ws.Options) string {
	t.Helper()
	srv := httptest.NewServer(ws.NewServer(h, opts))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func send(t *testing.T, ctx context.Context, c *websocket.Conn, typ websocket.MessageType, msg string) {
	t.Helper()
	if err := c.Write(ctx, typ, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, ctx context.Context, c *websocket.Conn) tt.Response {
	t.Helper()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if typ != websocket.MessageText {
		t.Fatalf("answer in a %v frame", typ)
	}
	r, err := tt.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// receiveID reads the next answer on c and fails the test unless its id is the JSON value id.
func receiveID(t *testing.T, ctx context.Context, c *websocket.Conn, id string) {
	t.Helper()
	if r := receive(t, ctx, c); string(r.ID) != id {
		t.Fatalf("answer has id %s, want %s", r.ID, id)
	}
}

func TestTextFramesAnyPathAndSubprotocols(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	url := newServer(t, &tt.Handler{}, ws.Options{})
	for _, tc := range []struct {
		path  string
		offer []string
		want  string
	}{
		{"/ahp", []string{"ahp"}, "ahp"},
		{"/anything/else?token=x", nil, ""},
		{"/", []string{"other", "ahp"}, "ahp"},
		{"/", []string{"other"}, ""},
	} {
		c := dial(t, ctx, url+tc.path, tc.offer...)
		if c.Subprotocol() != tc.want {
			t.Errorf("%s %v: subprotocol %q, want %q", tc.path, tc.offer, c.Subprotocol(), tc.want)
		}
		send(t, ctx, c, websocket.MessageText, tt.Request(`"r1"`, "echo", ""))
		r := receive(t, ctx, c)
		if e, _ := r.Echo(); string(r.ID) != `"r1"` || e.Transport != int(bridge.TransportWebSocket) {
			t.Errorf("%s: answer id %s, transport %d", tc.path, r.ID, e.Transport)
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
}

func TestNotificationsAndBinaryFramesGetNoAnswer(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	c := dial(t, ctx, newServer(t, &tt.Handler{}, ws.Options{}), "ahp")
	send(t, ctx, c, websocket.MessageText, tt.Notification("echo", ""))
	send(t, ctx, c, websocket.MessageBinary, tt.Request(`"binary"`, "echo", ""))
	send(t, ctx, c, websocket.MessageText, tt.Request(`"text"`, "echo", ""))
	// The first answer is the text request's: nothing came for the other two.
	receiveID(t, ctx, c, `"text"`)
}

func TestFrameOverTheLimitKeepsTheConnection(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	c := dial(t, ctx, newServer(t, &tt.Handler{}, ws.Options{MaxMessageBytes: 1 << 10}))
	pad := strings.Repeat("x", 200_000)
	send(t, ctx, c, websocket.MessageText, tt.Request(`"big"`, "echo", `{"p":"`+pad+`"}`))
	send(t, ctx, c, websocket.MessageText, tt.Notification("echo", `{"p":"`+pad+`"}`))
	send(t, ctx, c, websocket.MessageText, tt.Request(`"small"`, "echo", ""))
	r := receive(t, ctx, c)
	if string(r.ID) != `"big"` || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("first answer %+v", r)
	}
	receiveID(t, ctx, c, `"small"`)
}

func TestLargeAnswersAndLimitSizedMessages(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const limit = 1 << 20
	c := dial(t, ctx, newServer(t, &tt.Handler{}, ws.Options{MaxMessageBytes: limit}))
	overhead := len(tt.Request(`"max"`, "huge", `{"bytes":3000000,"p":""}`))
	msg := tt.Request(`"max"`, "huge", `{"bytes":3000000,"p":"`+strings.Repeat("x", limit-overhead)+`"}`)
	if len(msg) != limit {
		t.Fatalf("message of %d bytes", len(msg))
	}
	send(t, ctx, c, websocket.MessageText, msg)
	_, b, err := c.Read(ctx)
	if err != nil || len(b) < 3000000 || !strings.Contains(string(b[:40]), `"id":"max"`) {
		t.Fatalf("answer of %d bytes, %v", len(b), err)
	}
}

func TestConcurrencyAnswersAsReady(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	c := dial(t, ctx, newServer(t, &tt.Handler{}, ws.Options{Concurrency: 4}))
	send(t, ctx, c, websocket.MessageText, tt.Request(`"slow"`, "sleep", `{"ms":400}`))
	send(t, ctx, c, websocket.MessageText, tt.Request(`"fast"`, "echo", ""))
	receiveID(t, ctx, c, `"fast"`)
	receiveID(t, ctx, c, `"slow"`)
}

func TestServeAnswersInFlightThenClosesWithGoingAway(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	h := &tt.Handler{}
	addr, stop, served := testkit.ServeTCP(t, ws.NewServer(h, ws.Options{}).Serve)

	c := dial(t, ctx, "ws://"+addr+"/ahp", "ahp")
	send(t, ctx, c, websocket.MessageText, tt.Request(`"inflight"`, tt.MethodBlock, ""))
	if err := h.HoldThroughShutdown(ctx, stop, "tcp", addr); err != nil {
		t.Fatal(err)
	}
	receiveID(t, ctx, c, `"inflight"`)
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("after the answer: %v, want close 1001", err)
	}
	if err := testkit.Receive(t, served, "Serve did not return"); err != nil {
		t.Fatal(err)
	}
}

func TestPlainHTTPIsRefused(t *testing.T) {
	t.Parallel()
	url := newServer(t, &tt.Handler{}, ws.Options{})
	resp, err := http.Post("http"+strings.TrimPrefix(url, "ws")+"/ahp", "application/json", strings.NewReader(tt.Request(`"1"`, "echo", "")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// A connection that stays silent for IdleTimeout is closed by the server; one that talks is not.
func TestIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	c := dial(t, ctx, newServer(t, &tt.Handler{}, ws.Options{IdleTimeout: 200 * time.Millisecond}), "ahp")
	send(t, ctx, c, websocket.MessageText, tt.Request(`"r1"`, "echo", ""))
	receiveID(t, ctx, c, `"r1"`)
	if _, _, err := c.Read(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("Read on an idle connection = %v (test context: %v), want the server to close it", err, ctx.Err())
	}
}

// With MaxConnections open, the next upgrade is refused; the open connection keeps working.
func TestMaxConnectionsRefusesTheNextUpgrade(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	url := newServer(t, &tt.Handler{}, ws.Options{MaxConnections: 1})
	c := dial(t, ctx, url, "ahp")
	send(t, ctx, c, websocket.MessageText, tt.Request(`"r1"`, "echo", ""))
	receiveID(t, ctx, c, `"r1"`) // served, so counted
	if second, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"ahp"}}); err == nil {
		second.CloseNow()
		t.Fatal("the upgrade over MaxConnections succeeded")
	}
	send(t, ctx, c, websocket.MessageText, tt.Request(`"r2"`, "echo", ""))
	receiveID(t, ctx, c, `"r2"`)
}
