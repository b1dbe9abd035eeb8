package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// HTTPOptions configure an HTTP gateway.
type HTTPOptions struct {
	// Transport makes the requests to the target (default http.DefaultTransport).
	Transport http.RoundTripper
	// LoopbackHostsOnly refuses requests whose Host header is not a loopback name or address
	// (localhost, 127.0.0.1, [::1]), which protects a gateway listening on loopback from DNS
	// rebinding: a web page cannot make a browser talk to it under another name.
	LoopbackHostsOnly bool
}

// HTTP is the MCP gateway for an MCP server reached with the Streamable HTTP transport: an
// http.Handler for the MCP client, which forwards every request to one target endpoint. The
// HTTP exchange is relayed as it is — headers (Mcp-Session-Id, MCP-Protocol-Version,
// Authorization), GET event streams, DELETE, JSON and event-stream answers — except that a POST
// carrying a tools/call is decided first, as on stdio: a refusal is answered by the gateway (a JSON
// tool result with isError), a rewrite is what the target receives. The target's answer to a
// decided call, JSON or event stream, passes through untouched while the gateway reads it for the
// tool.after observation.
//
// Each POST body is bounded by Config.MaxMessageBytes (413 beyond it); a body the SDK cannot
// decode as one JSON-RPC message is refused (400), so the target never reads a message the gateway
// read differently; a batch (MCP before 2025-06-18) holding a tools/call is refused, others pass.
// Message effects of allowed calls are logged, not added to the answer (the answer is streamed
// as the target sends it).
type HTTP struct {
	p      *Proxy
	target *url.URL
	rp     *httputil.ReverseProxy
	obs    *observer
	log    *slog.Logger
	opts   HTTPOptions
	salt   []byte

	mu  sync.Mutex
	who identity // server name and claims, learned once for the one target
}

// NewHTTP returns the gateway for the Streamable HTTP endpoint target (http or https). Close it
// to send the observations still queued.
func (p *Proxy) NewHTTP(target string, opts HTTPOptions) (*HTTP, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("mcpproxy: the target must be an http:// or https:// URL with a host")
	}
	if u.User != nil {
		return nil, errors.New("mcpproxy: the target URL must not carry credentials (the client's Authorization header is passed through)")
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport
	}
	h := &HTTP{p: p, target: u, log: p.log.With("mcp_target", u.Host), opts: opts, salt: make([]byte, 16)}
	if _, err := rand.Read(h.salt); err != nil {
		return nil, err
	}
	h.who = identity{server: p.cfg.ServerName}
	h.obs = newObserver(p.cfg.Clients.Observation, p.cfg.StartErr == nil, p.cfg.Timeout, p.cfg.ObserveQueueBytes, h.log)
	go h.obs.run()
	h.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			out := *u
			pr.Out.URL = &out
			pr.Out.Host = u.Host
		},
		Transport:      opts.Transport,
		FlushInterval:  -1, // event streams go out event by event
		ModifyResponse: h.watchResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.log.Warn("the MCP server could not be reached", "error", err.Error())
			writeJSONRPCError(w, http.StatusBadGateway, watchOf(r.Context()).idOrNil(), jsonrpc.CodeInternalError, "the MCP server could not be reached")
		},
	}
	return h, nil
}

// Close stops taking observations and waits a little for the queued ones to be sent.
func (h *HTTP) Close() error {
	h.obs.close(h.p.cfg.Timeout)
	return nil
}

// watch is what the response of a forwarded POST is read for.
type watch struct {
	id jsonrpc.ID
	// onAnswer receives the answer to id, if one can be read from the response.
	onAnswer func(*jsonrpc.Response)
}

type watchKey struct{}

func watchOf(ctx context.Context) *watch {
	w, _ := ctx.Value(watchKey{}).(*watch)
	return w
}

func (w *watch) idOrNil() jsonrpc.ID {
	if w == nil {
		return jsonrpc.ID{}
	}
	return w.id
}

func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.LoopbackHostsOnly && !loopbackHost(r.Host) {
		http.Error(w, "forbidden: Host is not a loopback name", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodPost {
		h.rp.ServeHTTP(w, r) // the GET event stream, DELETE of a session
		return
	}
	limit := h.p.cfg.MaxMessageBytes
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.log.Warn("refused a message from the MCP client over the size limit", "limit_bytes", limit)
			writeJSONRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("MCP message over the %d-byte limit", limit))
			return
		}
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "the request body could not be read")
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		h.batch(w, r, body)
		return
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "not a JSON-RPC message")
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case ok && req.IsCall() && req.Method == methodToolsCall:
		h.toolCall(w, r, req)
	case ok && req.IsCall() && (req.Method == methodInitialize || req.Method == methodDiscover):
		h.noteClient(req.Params)
		h.forward(w, r, body, &watch{id: req.ID, onAnswer: func(resp *jsonrpc.Response) { h.noteServer(resp.Result) }})
	default:
		h.forward(w, r, body, nil)
	}
}

// batch forwards a JSON-RPC batch that holds no tools/call, and refuses one that does.
func (h *HTTP) batch(w http.ResponseWriter, r *http.Request, body []byte) {
	var items []json.RawMessage
	if json.Unmarshal(body, &items) != nil {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "not a JSON-RPC batch")
		return
	}
	for _, it := range items {
		msg, err := jsonrpc.DecodeMessage(it)
		if err != nil {
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "a batch item is not a JSON-RPC message")
			return
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodToolsCall {
			h.log.Warn("refused a batch holding a tools/call")
			writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "the MCP gateway refuses a tools/call inside a batch: send tool calls one per request")
			return
		}
	}
	h.forward(w, r, body, nil)
}

// toolCall decides a tools/call POST and answers it or forwards it.
func (h *HTTP) toolCall(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	call, err := parseToolCall(req.Params)
	if err != nil {
		h.log.Warn("refused a tools/call that cannot be read", "error", err.Error())
		writeJSONRPC(w, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}})
		return
	}
	who := h.identity(r)
	tool, o, decisionID, err := h.p.decideCall(r.Context(), who, call, req.ID, h.log)
	if err != nil && r.Context().Err() != nil {
		return // the client went away while the call was being decided
	}
	log := h.log.With("tool", tool.GetName(), "decision_id", decisionID)
	out := req
	switch o.verdict {
	case refuse:
		log.Info("tool call refused")
		writeJSONRPC(w, &jsonrpc.Response{ID: req.ID, Result: refusal(o.reason, o.messages, decisionID, o.approvalID)})
		return
	case rewrite:
		if out, err = h.p.rewritten(req, call, o); err != nil {
			log.Warn("the policy's change cannot be applied; refusing the call", "error", err.Error())
			writeJSONRPC(w, &jsonrpc.Response{ID: req.ID, Result: refusal("input must be changed, and the change cannot be applied: "+err.Error(), o.messages, decisionID, o.approvalID)})
			return
		}
		tool.Input = o.input
		log.Info("tool call arguments rewritten by the policy")
	}
	if len(o.messages) > 0 {
		log.Info("policy messages for an allowed call are not shown over HTTP", "messages", len(o.messages))
	}
	body, err := jsonrpc.EncodeMessage(out)
	if err != nil {
		writeJSONRPCError(w, http.StatusInternalServerError, req.ID, jsonrpc.CodeInternalError, "the call could not be encoded")
		return
	}
	h.forward(w, r, body, &watch{id: req.ID, onAnswer: func(resp *jsonrpc.Response) {
		h.obs.enqueue(h.p.resultEvent(who, tool, resp))
	}})
}

// forward sends body to the target as the client's request, reading the answer for wt.
func (h *HTTP) forward(w http.ResponseWriter, r *http.Request, body []byte, wt *watch) {
	out := r.WithContext(context.WithValue(r.Context(), watchKey{}, wt))
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	h.rp.ServeHTTP(w, out)
}

// watchResponse wraps the body of an answer that is read for a watch.
func (h *HTTP) watchResponse(resp *http.Response) error {
	wt := watchOf(resp.Request.Context())
	if wt == nil || resp.StatusCode/100 != 2 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json", "text/event-stream":
		resp.Body = &watchedBody{ReadCloser: resp.Body, w: wt, sse: mt == "text/event-stream", limit: h.p.cfg.MaxMessageBytes}
	}
	return nil
}

// watchedBody passes an answer through unchanged while it finds the JSON-RPC response to its
// watch: in a JSON body, or in the data of an event stream's events. What it keeps is bounded by
// limit; beyond it, it stops looking.
type watchedBody struct {
	io.ReadCloser
	w     *watch
	sse   bool
	limit int

	done    bool
	buf     []byte // JSON: the body so far; event stream: the current line
	data    []byte // event stream: the current event's data
	hasData bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.done && n > 0 {
		b.feed(p[:n])
	}
	if errors.Is(err, io.EOF) && !b.done {
		if b.sse {
			b.line(b.buf)
			b.event()
		} else {
			b.answer(b.buf)
		}
		b.done = true
	}
	return n, err
}

func (b *watchedBody) feed(p []byte) {
	if !b.sse {
		if len(b.buf)+len(p) > b.limit {
			b.done, b.buf = true, nil
			return
		}
		b.buf = append(b.buf, p...)
		return
	}
	for len(p) > 0 && !b.done {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.grow(p)
			return
		}
		b.grow(p[:i])
		b.line(b.buf)
		b.buf = b.buf[:0]
		p = p[i+1:]
	}
}

func (b *watchedBody) grow(p []byte) {
	if len(b.buf)+len(p) > b.limit {
		b.done, b.buf, b.data = true, nil, nil
		return
	}
	b.buf = append(b.buf, p...)
}

// line handles one event-stream line (without its newline).
func (b *watchedBody) line(l []byte) {
	if b.done {
		return
	}
	l = bytes.TrimSuffix(l, []byte("\r"))
	if len(l) == 0 {
		b.event()
		return
	}
	v, ok := bytes.CutPrefix(l, []byte("data:"))
	if !ok {
		return // id:, event:, retry:, comments
	}
	v = bytes.TrimPrefix(v, []byte(" "))
	if len(b.data)+len(v)+1 > b.limit {
		b.done, b.data = true, nil
		return
	}
	if b.hasData {
		b.data = append(b.data, '\n')
	}
	b.data = append(b.data, v...)
	b.hasData = true
}

// event handles the end of one event.
func (b *watchedBody) event() {
	if b.hasData && !b.done {
		b.answer(b.data)
	}
	b.data, b.hasData = b.data[:0], false
}

// answer looks at one JSON-RPC message of the answer.
func (b *watchedBody) answer(data []byte) {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == b.w.id {
		b.done = true
		b.w.onAnswer(resp)
	}
}

// identity is the events' view of one request's session: the target's name and claims, and a
// session key that names the client's Mcp-Session-Id without revealing it (a session id is a
// credential of sorts), or one request when the client has no session (the stateless protocol).
func (h *HTTP) identity(r *http.Request) identity {
	h.mu.Lock()
	who := h.who
	h.mu.Unlock()
	if who.server == "" {
		who.server = h.target.Hostname()
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		sum := sha256.Sum256(append(append([]byte(nil), h.salt...), sid...))
		who.sessionID = "http-" + hex.EncodeToString(sum[:8])
	} else {
		who.sessionID = "http-" + h.p.cfg.NewID()
	}
	return who
}

func (h *HTTP) noteClient(params json.RawMessage) {
	s := session{p: h.p, log: h.log, who: h.snapshot()}
	s.noteClient(params)
	h.mu.Lock()
	h.who.clientInfo, h.who.protocolVersion = s.who.clientInfo, s.who.protocolVersion
	h.mu.Unlock()
}

func (h *HTTP) noteServer(result json.RawMessage) {
	s := session{p: h.p, log: h.log, who: h.snapshot()}
	s.noteServer(result)
	h.mu.Lock()
	h.who.serverInfo, h.who.server = s.who.serverInfo, s.who.server
	if s.who.protocolVersion != "" {
		h.who.protocolVersion = s.who.protocolVersion
	}
	h.mu.Unlock()
}

func (h *HTTP) snapshot() identity {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.who
}

func writeJSONRPC(w http.ResponseWriter, resp *jsonrpc.Response) {
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// writeJSONRPCError answers with a JSON-RPC error (id null when unknown) and an HTTP status.
func writeJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string) {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", id.Raw(), wireError{code, msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// loopbackHost reports whether a Host header names the loopback interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HTTPServer is an http.Server for the gateway with the timeouts an MCP endpoint needs: headers
// must arrive promptly, but event streams stay open as long as the session lasts.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
	}
}
