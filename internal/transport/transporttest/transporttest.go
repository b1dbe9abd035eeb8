// Package transporttest provides a fake bridge.Handler for the transports' tests. Its behaviour is
// chosen per message by the JSON-RPC method, so one handler covers echo, slow, blocked, huge,
// malformed and panicking answers, and notifications that must never be answered. Tests wait for
// it with WaitCalls and release blocked messages with Unblock, never for a while.
package transporttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
)

// Methods understood by Handler. Any other method is echoed like MethodEcho.
const (
	// MethodEcho answers {"method":…,"transport":…,"bytes":len(msg)}.
	MethodEcho = "echo"
	// MethodSleep waits params.ms milliseconds (or until ctx ends), then echoes.
	MethodSleep = "sleep"
	// MethodBlock waits until Unblock (or until ctx ends), then echoes.
	MethodBlock = "block"
	// MethodHuge answers with a string result of params.bytes bytes.
	MethodHuge = "huge"
	// MethodPretty answers with indented (multi-line) JSON.
	MethodPretty = "pretty"
	// MethodMalformed answers with a body that is not JSON and spans two lines.
	MethodMalformed = "malformed"
	// MethodPanic panics, breaking the bridge.Handler contract.
	MethodPanic = "panic"
	// MethodAccepted, as a notification, gets HTTP status 202 instead of 204.
	MethodAccepted = "accepted"
)

// Handler is a fake dialect layer. Requests (messages with an id) are answered; notifications are
// not, with HTTP status 204 (202 for MethodAccepted); unparsable input gets a -32700 error with a
// null id.
type Handler struct {
	calls, inFlight, maxInFlight atomic.Int64

	mu        sync.Mutex
	called    chan struct{} // closed at the next call; nil while nobody waits
	unblocked chan struct{} // closed by Unblock
}

// Calls reports how many messages Handle has seen.
func (h *Handler) Calls() int64 { return h.calls.Load() }

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		MS    int `json:"ms"`
		Bytes int `json:"bytes"`
	} `json:"params"`
}

// Handle implements bridge.Handler.
func (h *Handler) Handle(ctx context.Context, msg []byte, t bridge.Transport) bridge.Reply {
	h.calls.Add(1)
	h.mu.Lock()
	if h.called != nil {
		close(h.called)
		h.called = nil
	}
	unblocked := h.unblockedChan()
	h.mu.Unlock()
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	for {
		m := h.maxInFlight.Load()
		if n <= m || h.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}

	var m message
	if err := json.Unmarshal(msg, &m); err != nil {
		return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`), HTTPStatus: http.StatusOK}
	}
	if m.Method == MethodPanic {
		panic("transporttest: panic requested")
	}
	switch m.Method {
	case MethodSleep:
		select {
		case <-time.After(time.Duration(m.Params.MS) * time.Millisecond):
		case <-ctx.Done():
		}
	case MethodBlock:
		select {
		case <-unblocked:
		case <-ctx.Done():
		}
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		if m.Method == MethodAccepted {
			return bridge.Reply{HTTPStatus: http.StatusAccepted}
		}
		return bridge.Reply{HTTPStatus: http.StatusNoContent}
	}
	var body string
	switch m.Method {
	case MethodHuge:
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":"%s"}`, m.ID, strings.Repeat("x", m.Params.Bytes))
	case MethodPretty:
		body = fmt.Sprintf("{\n  \"jsonrpc\": \"2.0\",\r\n  \"id\": %s,\n  \"result\": {\"text\": \"a\\nb\"}\n}", m.ID)
	case MethodMalformed:
		body = "not\njson"
	default:
		res, _ := json.Marshal(map[string]any{"method": m.Method, "transport": int(t), "bytes": len(msg)})
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
	}
	return bridge.Reply{Body: []byte(body), HTTPStatus: http.StatusOK}
}

// Request returns a compact JSON-RPC request line (without "\n") for method with id (a JSON value)
// and params (a JSON object, or "" for none).
func Request(id, method, params string) string {
	if params == "" {
		params = "{}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params)
}

// Notification returns a compact JSON-RPC notification (without "\n").
func Notification(method, params string) string {
	if params == "" {
		params = "{}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
}

// Response is the part of an answer the tests look at.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Echo is the result of MethodEcho, MethodSleep and MethodBlock.
type Echo struct {
	Method    string `json:"method"`
	Transport int    `json:"transport"`
	Bytes     int    `json:"bytes"`
}

// Echo parses the result as an Echo.
func (r Response) Echo() (Echo, error) {
	var e Echo
	err := json.Unmarshal(r.Result, &e)
	return e, err
}

// Decode parses an answer, reporting an error for anything that is not one JSON-RPC response.
func Decode(b []byte) (Response, error) {
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("answer %q: %w", b, err)
	}
	if len(r.ID) == 0 {
		return r, fmt.Errorf("answer %q has no id", b)
	}
	return r, nil
}
