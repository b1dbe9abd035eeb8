// Package bridge turns JSON-RPC messages of either AHP dialect into typed ahp.v1 calls and renders
// the answers back, exactly as each protocol's spec and reference implementation expect. It knows
// nothing of bytes on a wire: each transport package (stdio, HTTP, WebSocket, Unix socket) frames
// messages and hands them to a Handler one at a time.
package bridge

import "context"

// Transport names the transport a message arrived on; a few protocol rules depend on it (the
// Harness reference answers a failed notification only over HTTP, for instance).
type Transport int

const (
	// TransportStdio is newline-delimited JSON on stdin/stdout (persistent or per event).
	TransportStdio Transport = iota + 1
	// TransportHTTP is one JSON-RPC object per POST body.
	TransportHTTP
	// TransportWebSocket is one JSON-RPC object per text frame.
	TransportWebSocket
	// TransportUnix is newline-delimited JSON on a Unix socket connection.
	TransportUnix
)

// Reply is what a transport must send back for one message.
type Reply struct {
	// Body is the JSON-RPC response (compact, no trailing newline), or nil when nothing is sent.
	Body []byte
	// HTTPStatus is the status an HTTP transport uses: 200 with a Body; 202 or 204 without one;
	// other statuses as the dialect's HTTP binding requires. Other transports ignore it.
	HTTPStatus int
}

// Handler handles one complete JSON-RPC message (one line, one POST body, one frame). It never
// panics and never returns an error: every problem becomes a JSON-RPC error reply or, for
// notifications, no reply at all. It is safe for concurrent use.
type Handler interface {
	Handle(ctx context.Context, msg []byte, t Transport) Reply
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, msg []byte, t Transport) Reply

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, msg []byte, t Transport) Reply {
	return f(ctx, msg, t)
}
