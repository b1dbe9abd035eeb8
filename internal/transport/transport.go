// Package transport holds what the bridge's transports share: the message size limit, the answer
// to a message over it, HTTP body intake and answers (also the hook adapters' HTTP form), and
// graceful HTTP serving. Each transport is its own small package:
//
//   - ndjson: newline-delimited JSON framing and the serve loop for one stream
//   - stdio: the Hooks stdio binding (persistent and per_event) and Harness stdio, over ndjson
//   - unixsock: ndjson on every connection of a Unix socket
//   - httprpc: one JSON-RPC object per POST body (Hooks HTTP binding and Harness POST /ahp)
//   - ws: one JSON-RPC object per WebSocket text frame
//
// Transports only frame bytes: every complete message goes to a bridge.Handler, which decides the
// dialect, the answer and whether there is one. A transport never answers on its own except for a
// message it could not hand over whole (over the size limit, or not acceptable at the HTTP level).
//
// Panics: a Handler never panics (bridge.Handler's contract). Bridge.Handle is the bridge process's
// one recover, where a panic can still be answered in the caller's dialect; transports do not
// recover again, so a Handler that breaks the contract crashes the process (over HTTP, net/http
// aborts the request's connection) instead of having its message dropped silently.
package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ahp-gateway/ahp/internal/jsonrpc"
)

// DefaultMaxMessageBytes is the default size limit of one message (4 MiB), the same as the Agent
// Hooks Protocol Go SDK's frame limit.
const DefaultMaxMessageBytes = 4 << 20

// DefaultShutdownTimeout bounds how long a server waits for in-flight messages when it stops.
const DefaultShutdownTimeout = 10 * time.Second

// CodeInvalidRequest is the JSON-RPC 2.0 "Invalid Request" error code, used for a message over the
// size limit: the message may be perfectly valid JSON, so -32700 (parse error) would be wrong.
const CodeInvalidRequest = -32600

// OversizeReply returns the JSON-RPC error answering a message of more than limit bytes, given the
// part of it that was read (head, at most limit bytes). The answer carries the request's id when
// head shows one (a top-level "id" that is a string or a number and comes before anything
// unreadable); otherwise OversizeReply returns nil and nothing must be sent, because a message
// whose id is unknown may be a notification, and notifications are never answered.
func OversizeReply(head []byte, limit int) []byte {
	id, ok := leadingID(head)
	if !ok {
		return nil
	}
	return jsonrpc.ErrorResponse(id, CodeInvalidRequest, "Invalid Request: message is over the "+strconv.Itoa(limit)+"-byte limit")
}

// leadingID reads the top-level "id" of a JSON object from its first bytes. It walks the object's
// members in order and stops at the first one it cannot read whole, so an id that comes after a
// huge "params" is not found. That is the usual order anyway (jsonrpc, id, method, params).
func leadingID(head []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		if key != "id" {
			continue
		}
		// A number that ends exactly where head ends may have been cut short.
		if dec.InputOffset() >= int64(len(head)) {
			return nil, false
		}
		// Only ids JSON-RPC allows a request to have; null, objects and arrays identify nothing.
		if len(value) == 0 || !utf8.Valid(value) || !(value[0] == '"' || value[0] == '-' || (value[0] >= '0' && value[0] <= '9')) {
			return nil, false
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			return nil, false
		}
		return compact.Bytes(), true
	}
	return nil, false
}

// ServeHTTP serves srv on ln until ctx is done, then shuts it down: it stops accepting, waits up
// to grace for in-flight requests and then closes what is left. It returns nil after a graceful
// stop and the serving error otherwise.
func ServeHTTP(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultShutdownTimeout
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if err != nil {
		_ = srv.Close()
	}
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// HTTPProtocols returns the protocols the bridge's HTTP servers speak: HTTP/1.1 and HTTP/2 over
// cleartext (h2c), as ahp-server does.
func HTTPProtocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}
