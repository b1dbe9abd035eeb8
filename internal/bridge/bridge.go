package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"

	"github.com/ahp-gateway/ahp/internal/jsonrpc"
)

// Bridge is the Handler of ahp-jsonrpc-bridge: it reads one JSON-RPC message of either AHP
// dialect, calls the upstream's typed RPCs with a deadline, and renders the answer, or the failure
// policy's answer, in the caller's dialect. It is safe for concurrent use; a transport may call
// Handle from as many goroutines as it likes.
type Bridge struct {
	cfg   Config
	log   *slog.Logger
	count counters
}

var _ Handler = (*Bridge)(nil)

// New checks cfg, fills in its defaults and returns a Bridge.
func New(cfg Config) (*Bridge, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Bridge{cfg: cfg, log: cfg.Logger}, nil
}

// Config returns the configuration in force, defaults filled in.
func (b *Bridge) Config() Config { return b.cfg }

// Handle implements Handler. The contract with the transports:
//
//   - msg is one message as the transport framed it; the NDJSON transports deliver it without
//     its line terminator. One trailing LF is tolerated and is not part of the message (an
//     HTTP or WebSocket body may end with one). On TransportStdio and
//     TransportUnix an Agent Hooks message must be a single line: a raw CR or LF inside it is a
//     framing error (-32700), unless the message is a notification, which is never answered.
//   - Reply.Body, when not nil, is one compact JSON-RPC response without a newline; write it (and
//     a LF on the NDJSON transports). When it is nil, write nothing.
//   - Reply.HTTPStatus is for TransportHTTP: 200 whenever there is a Body (JSON-RPC errors
//     included); 204 for an accepted notification, and for an Agent Harness message ignored
//     without an answer; 500 for an Agent Hooks hooks/observe the upstream did not record; 400 for
//     any other Agent Hooks message refused or ignored without an answer (an invalid
//     notification, a response). Method, media type and size checks (405, 415, 413) are the
//     transport's.
//   - ctx bounds the whole message and each upstream call gets Config.Timeout on top, so Handle
//     returns within the timeout plus local work whatever the upstream does.
//   - Handle never panics and may be called concurrently; answers carry the request id, so a
//     transport may write them in completion order.
//
// The message is parsed once (jsonrpc.Read); the dialect is routed from its envelope and reads
// its params from the same parse.
func (b *Bridge) Handle(ctx context.Context, msg []byte, t Transport) (reply Reply) {
	c := &call{transport: t}
	defer func() {
		if v := recover(); v != nil {
			reply = b.recovered(c, v)
		}
	}()
	msg = bytes.TrimSuffix(msg, []byte("\n")) // a reslice: nothing is copied
	env := jsonrpc.Read(msg)
	c.dialect = b.route(msg, env)
	if c.dialect == DialectHarness {
		return b.handleHarness(ctx, c, env)
	}
	return b.handleHooks(ctx, c, msg, env)
}

// call is what Handle learned about a message so far, for the panic handler: a panic must not
// answer a notification, and should answer a request to its id.
type call struct {
	transport Transport
	dialect   Dialect
	method    string
	// idJSON is the request id as it goes back on the wire; nil until known, or for notifications.
	idJSON []byte
}

// route picks the dialect of msg: the pinned one, or in auto mode Agent Harness when the method
// is a string starting with "ahp/" and Agent Hooks otherwise.
func (b *Bridge) route(msg []byte, env *jsonrpc.Message) Dialect {
	if b.cfg.Dialect != DialectAuto {
		return b.cfg.Dialect
	}
	if env.Object != nil {
		if env.MethodOK && strings.HasPrefix(env.Method, "ahp/") {
			return DialectHarness
		}
		return DialectHooks
	}
	if env.Doc != nil || !env.Syntax() {
		return DialectHooks // JSON, but not an object
	}
	return routeUnparsable(msg)
}

// routeUnparsable routes a message jsonwire.Parse refused. encoding/json still finds a method in
// some of them (it takes invalid UTF-8 inside strings), and such a message goes to the dialect
// that method names, which answers its own parse error.
func routeUnparsable(msg []byte) Dialect {
	// Without a backslash every string is written literally, so a method "ahp/…" would show as
	// the bytes "ahp/ – their absence settles it without parsing.
	if bytes.IndexByte(msg, '\\') < 0 && !bytes.Contains(msg, []byte(`"ahp/`)) {
		return DialectHooks
	}
	// A map, not a struct: encoding/json matches struct fields case-insensitively ("METHOD").
	var env map[string]json.RawMessage
	var method string
	if json.Unmarshal(msg, &env) == nil && json.Unmarshal(env["method"], &method) == nil && strings.HasPrefix(method, "ahp/") {
		return DialectHarness
	}
	return DialectHooks
}

// recovered turns a panic into the dialect's internal error for a request with a known id, and
// into silence otherwise. It is a bug either way, so it is logged at error level and counted.
func (b *Bridge) recovered(c *call, v any) Reply {
	b.count.panics.Add(1)
	b.log.Error("bridge: handling a message panicked", "dialect", c.dialect.String(), "method", c.method, "panic", fmt.Sprint(v))
	if c.idJSON == nil {
		return Reply{HTTPStatus: http.StatusInternalServerError}
	}
	if c.dialect == DialectHarness {
		return harnessErrorReply(c.idJSON, harnessCodeInternal, "Internal error: bridge failure")
	}
	return Reply{Body: hooksErrorBody(c.idJSON, hooksInternalError()), HTTPStatus: http.StatusOK}
}

// callUpstream makes one unary call under the bridge's per-call timeout and returns the answer, or
// the failure classified while the call's deadline still applies.
func callUpstream[Req, Resp any](ctx context.Context, b *Bridge, rpc func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error), req *Req) (*Resp, *upstreamError) {
	return callUpstreamWithin(ctx, b, b.cfg.Timeout, rpc, req)
}

// decisionTimeout is the deadline of a call the server may hold for an approval.
func (b *Bridge) decisionTimeout() time.Duration { return max(b.cfg.Timeout, b.cfg.ApprovalWait) }

// decider is an Intercept client that can decide without connect's request and response
// wrappers (the multiplexed upstream client).
type decider interface {
	decide(ctx context.Context, req *ahpv1.InterceptRequest) (*ahpv1.Decision, error)
}

// decide is Intercept under the decision deadline: the decision, or the failure classified while
// that deadline still applies (an answer without a decision is a bad response).
func (b *Bridge) decide(ctx context.Context, req *ahpv1.InterceptRequest) (*ahpv1.Decision, *upstreamError) {
	dc, ok := b.cfg.Clients.Intercept.(decider)
	if !ok {
		resp, ue := callUpstreamWithin(ctx, b, b.decisionTimeout(), b.cfg.Clients.Intercept.Intercept, req)
		if ue != nil {
			return nil, ue
		}
		if d := resp.GetDecision(); d != nil {
			return d, nil
		}
		return nil, badResponse("InterceptResponse has no decision")
	}
	ctx, cancel := context.WithTimeout(ctx, b.decisionTimeout())
	defer cancel()
	d, err := dc.decide(ctx, req)
	if err != nil {
		return nil, classify(ctx, err)
	}
	if d == nil {
		return nil, badResponse("InterceptResponse has no decision")
	}
	return d, nil
}

// callUpstreamWithin is callUpstream with deadline d.
func callUpstreamWithin[Req, Resp any](ctx context.Context, b *Bridge, d time.Duration, rpc func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error), req *Req) (*Resp, *upstreamError) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := rpc(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, classify(ctx, err)
	}
	return resp.Msg, nil
}
