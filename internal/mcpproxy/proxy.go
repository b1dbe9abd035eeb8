package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/redact"
)

// Defaults of Config.
const (
	// DefaultMaxMessageBytes bounds one MCP message in either direction (4 MiB, the bridge's
	// message limit).
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxInFlight bounds the client's requests waiting for an answer.
	DefaultMaxInFlight = 1024
	// DefaultMaxDeciding bounds the tool calls being decided at once; the next one waits.
	DefaultMaxDeciding = 64
	// DefaultMaxOutputBytes bounds the tool result an observation carries; a longer one is
	// replaced by a note of its size.
	DefaultMaxOutputBytes = 256 << 10
	// DefaultObserveQueueBytes bounds the observations waiting to be sent.
	DefaultObserveQueueBytes = 8 << 20
	// maxIDBytes bounds a string request id the relay keeps while the request is in flight.
	maxIDBytes = 1024
)

// Failure kinds beyond bridge.Failure's.
const (
	failureNotStarted = "not_started"
	failureRejected   = "rejected"
	failureBadAnswer  = "bad_response"
)

// Config configures a Proxy. Clients (or StartErr) is required.
type Config struct {
	// Clients reach the ahp-server (bridge.NewUpstream) or the decision core in-process
	// (bridge.NewEmbedded). Only Intercept and Observation are called.
	Clients bridge.Clients
	// StartErr, when not nil, is why Clients could not be made: every tool call then meets the
	// failure policy, as if the backend were down.
	StartErr error
	// ServerName is the MCP server's name in events (tool.mcp.server, tool.name
	// mcp__SERVER__TOOL). Empty: the name the server gives in its initialize answer
	// (serverInfo.name), which is the server's own claim; policies that match by server should
	// have it set by whoever configures the proxy.
	ServerName string
	// Timeout is the deadline of each decision (default bridge.DefaultTimeout; at most
	// bridge.MaxTimeout).
	Timeout time.Duration
	// ApprovalWait, when longer than Timeout, is the deadline of decisions instead: how long a
	// tools/call held by the policy backend for a person's approval (docs/approvals.md) may wait.
	// Zero: Timeout, and the backend answers a call it cannot hold that long with a denial naming
	// the approval, so that a retry once approved goes through. At most bridge.MaxApprovalWait.
	// Only an ahp-server can have approvals decided: in-process they can only expire.
	ApprovalWait time.Duration
	// FailurePolicy applies when no decision arrives (default bridge.FailClosed).
	FailurePolicy bridge.FailurePolicy
	// MaxMessageBytes bounds a tools/call whose arguments the policy rewrote, and in the HTTP form
	// a POST body and what is kept of an answer while it is read for its observation (on stdio the
	// streams bound what arrives); default DefaultMaxMessageBytes.
	MaxMessageBytes int
	// MaxInFlight, MaxDeciding, MaxOutputBytes and ObserveQueueBytes: see the defaults.
	MaxInFlight       int
	MaxDeciding       int
	MaxOutputBytes    int
	ObserveQueueBytes int
	// Redactor masks secrets in observations (default: redact.New with the built-in rules).
	Redactor *redact.Redactor
	// Logger receives operational logs, never payload values (default: discarded).
	Logger *slog.Logger
	// Now and NewID give event times and ids (default time.Now and UUIDv7).
	Now   func() time.Time
	NewID func() string
}

// Proxy relays MCP sessions and puts their tool calls before the policy. It is safe for
// concurrent use: every Serve is a session of its own.
type Proxy struct {
	cfg Config
	log *slog.Logger
}

// New checks cfg and fills in its defaults.
func New(cfg Config) (*Proxy, error) {
	timeout, err := bridge.CheckBackend(cfg.Clients, cfg.StartErr, cfg.FailurePolicy, cfg.Timeout, cfg.ApprovalWait)
	if err != nil {
		return nil, fmt.Errorf("mcpproxy: %w", err)
	}
	cfg.Timeout = timeout
	if len(cfg.ServerName) > 256 {
		return nil, errors.New("mcpproxy: Config.ServerName is over 256 bytes")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&cfg.MaxInFlight, DefaultMaxInFlight)
	def(&cfg.MaxDeciding, DefaultMaxDeciding)
	def(&cfg.MaxOutputBytes, DefaultMaxOutputBytes)
	def(&cfg.ObserveQueueBytes, DefaultObserveQueueBytes)
	if cfg.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return nil, err
		}
		cfg.Redactor = r
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	return &Proxy{cfg: cfg, log: cfg.Logger}, nil
}

// session is one relayed MCP session.
type session struct {
	p              *Proxy
	client, server Conn
	log            *slog.Logger
	obs            *observer
	sem            chan struct{}
	wg             sync.WaitGroup

	mu      sync.Mutex
	who     identity
	pending map[jsonrpc.ID]*pending // the client's requests the server has not answered
	gone    error                   // why the server is gone, once it is
}

// pending is one of the client's requests waiting for its answer.
type pending struct {
	method string
	// For tools/call: cancel stops the decision; decided is set once the call went to the
	// server (then tool, decisionID and messages are what the observation and the answer need).
	cancel     context.CancelFunc
	cancelled  bool
	decided    bool
	tool       *ahpv1.Tool
	decisionID string
	messages   []string
}

// Serve relays one session between client (the MCP client's connection) and server (the MCP
// server's) until either goes away, and closes both. It returns nil when the client ended the
// session, and why the server went away otherwise.
func (p *Proxy) Serve(ctx context.Context, client, server Conn) error {
	s := &session{
		p: p, client: client, server: server,
		sem:     make(chan struct{}, p.cfg.MaxDeciding),
		pending: map[jsonrpc.ID]*pending{},
		who:     identity{server: p.cfg.ServerName, sessionID: p.cfg.NewID()},
	}
	s.log = p.log.With("mcp_session", s.who.sessionID)
	s.obs = newObserver(p.cfg.Clients.Observation, p.cfg.StartErr == nil, p.cfg.Timeout, p.cfg.ObserveQueueBytes, s.log)
	go s.obs.run()

	stopped := ctx.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fromServer := make(chan error, 1)
	fromClient := make(chan error, 1)
	go func() { fromServer <- s.readServer(ctx) }()
	go func() { fromClient <- s.readClient(ctx) }()

	var result error
	clientGone := func() {
		cancel()
		_ = server.Close()
		<-fromServer
		s.wg.Wait()
	}
	select {
	case err := <-fromClient:
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
			s.log.Warn("the MCP client's connection failed; stopping the server", "error", err.Error())
		} else {
			s.log.Info("the MCP client ended the session; stopping the server")
		}
		clientGone()
	case <-stopped:
		// A stop (SIGTERM): a read of the client blocked on a terminal or os.Stdin cannot be
		// interrupted, so the session ends without waiting for it.
		s.log.Info("stopping: ending the session and stopping the server")
		clientGone()
	case err := <-fromServer:
		result = err
		s.log.Warn("the MCP server is gone; answering the requests in flight and ending the session", "error", err.Error())
		s.serverGone(err)
		cancel() // decisions still running meet the failure policy, and are answered
		s.wg.Wait()
		_ = server.Close()
	}
	_ = client.Close()
	s.obs.close(p.cfg.Timeout)
	return result
}

// readClient relays the client's messages until its connection ends.
func (s *session) readClient(ctx context.Context) error {
	for {
		msg, err := s.client.Read(ctx)
		if err != nil {
			var tl *TooLargeError
			var mf *MalformedError
			switch {
			case errors.As(err, &tl):
				s.log.Warn("refused a message from the MCP client over the size limit", "limit_bytes", tl.Limit, "has_id", tl.HasID)
				switch {
				case tl.HasID && tl.Request:
					s.replyClient(tl.ID, jsonrpc.CodeInvalidRequest, tl.Error())
				case tl.HasID: // the client's answer to a request of the server: the server gets an error instead
					s.writeServer(ctx, &jsonrpc.Response{ID: tl.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the MCP client's answer was over the gateway's size limit (" + fmt.Sprint(tl.Limit) + " bytes)"}})
				}
				continue
			case errors.As(err, &mf):
				s.log.Warn("dropped a line from the MCP client that is not a JSON-RPC message", "error", mf.Err.Error())
				continue
			}
			return err
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			s.clientRequest(ctx, m)
		case *jsonrpc.Response: // the client's answer to a request of the server
			s.writeServer(ctx, m)
		}
	}
}

func (s *session) clientRequest(ctx context.Context, req *jsonrpc.Request) {
	if !req.IsCall() {
		if req.Method == methodCancelled && s.cancelDecision(req.Params) {
			return
		}
		s.writeServer(ctx, req)
		return
	}
	if id, ok := req.ID.Raw().(string); ok && len(id) > maxIDBytes {
		if req.Method == methodToolsCall {
			// A call is decided only while its id is kept; this one is dropped, never forwarded
			// undecided, and the client's own timeout ends it (an answer would echo the id).
			s.log.Warn("refused a tools/call whose id is too long", "limit_bytes", maxIDBytes)
			return
		}
		s.writeServer(ctx, req) // passed on without being tracked
		return
	}
	p := &pending{method: req.Method}
	if code, msg := s.track(req.ID, p); code != 0 {
		s.replyClient(req.ID, code, msg)
		return
	}
	switch req.Method {
	case methodToolsCall:
		s.startDecision(ctx, req, p)
		return
	case methodInitialize, methodDiscover:
		s.noteClient(req.Params)
	}
	s.forward(ctx, req)
}

// track records a request in flight; a non-zero code is why it is refused.
func (s *session) track(id jsonrpc.ID, p *pending) (int64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.gone != nil:
		return jsonrpc.CodeInternalError, s.gone.Error()
	case s.pending[id] != nil:
		return jsonrpc.CodeInvalidRequest, "a request with this id is already in flight"
	case len(s.pending) >= s.p.cfg.MaxInFlight:
		return jsonrpc.CodeInternalError, fmt.Sprintf("too many requests in flight (limit %d)", s.p.cfg.MaxInFlight)
	}
	s.pending[id] = p
	return 0, ""
}

// untrack removes a request in flight; whoever removes it answers it.
func (s *session) untrack(id jsonrpc.ID) *pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[id]
	delete(s.pending, id)
	return p
}

// forward sends a tracked request to the server; when that fails, the client is answered.
func (s *session) forward(ctx context.Context, req *jsonrpc.Request) {
	if err := s.server.Write(ctx, req); err != nil {
		if s.untrack(req.ID) != nil {
			s.replyClient(req.ID, jsonrpc.CodeInternalError, s.serverError(err))
		}
	}
}

// serverError says why the server cannot be reached, for the client.
func (s *session) serverError(err error) string {
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if gone != nil {
		return gone.Error()
	}
	return "the MCP server could not be reached"
}

// writeServer sends a message that needs no answer from the server (a notification, or the
// client's answer to the server); a failure shows as the server's end.
func (s *session) writeServer(ctx context.Context, msg jsonrpc.Message) {
	if err := s.server.Write(ctx, msg); err != nil {
		s.log.Debug("a message to the MCP server was not delivered", "error", err.Error())
	}
}

// readServer relays the server's messages until its connection ends.
func (s *session) readServer(ctx context.Context) error {
	for {
		msg, err := s.server.Read(ctx)
		if err != nil {
			var tl *TooLargeError
			var mf *MalformedError
			switch {
			case errors.As(err, &tl):
				s.log.Warn("refused a message from the MCP server over the size limit", "limit_bytes", tl.Limit, "has_id", tl.HasID)
				switch {
				case tl.HasID && tl.Request:
					_ = s.server.Write(ctx, &jsonrpc.Response{ID: tl.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: tl.Error()}})
				case tl.HasID:
					if s.untrack(tl.ID) != nil {
						s.replyClient(tl.ID, jsonrpc.CodeInternalError, "the MCP server's answer was over the gateway's size limit ("+fmt.Sprint(tl.Limit)+" bytes)")
					}
				}
				continue
			case errors.As(err, &mf):
				s.log.Warn("dropped a line from the MCP server that is not a JSON-RPC message", "error", mf.Err.Error())
				continue
			}
			return err
		}
		switch m := msg.(type) {
		case *jsonrpc.Request: // the server's requests and notifications
			if err := s.client.Write(ctx, m); err != nil {
				s.log.Debug("a message to the MCP client was not delivered", "error", err.Error())
			}
		case *jsonrpc.Response:
			s.serverResponse(ctx, m)
		}
	}
}

func (s *session) serverResponse(ctx context.Context, resp *jsonrpc.Response) {
	p := s.untrack(resp.ID)
	switch {
	case p == nil:
	case p.method == methodInitialize || p.method == methodDiscover:
		s.noteServer(resp.Result)
	case p.method == methodToolsCall && p.decided:
		s.observe(p, resp)
		if resp.Error == nil {
			resp.Result = withMessages(resp.Result, p.messages)
		}
	}
	if err := s.client.Write(ctx, resp); err != nil {
		s.log.Debug("an answer to the MCP client was not delivered", "error", err.Error())
	}
}

// serverGone answers every request in flight with why the server went away, and every later one.
func (s *session) serverGone(err error) {
	s.mu.Lock()
	if s.gone == nil {
		s.gone = err
	}
	taken := s.pending
	s.pending = map[jsonrpc.ID]*pending{}
	s.mu.Unlock()
	msg := s.gone.Error() + " before answering"
	for id, p := range taken {
		if p.cancel != nil {
			p.cancel()
		}
		s.replyClient(id, jsonrpc.CodeInternalError, msg)
	}
}

// replyClient answers one of the client's requests with a JSON-RPC error.
func (s *session) replyClient(id jsonrpc.ID, code int64, msg string) {
	if err := s.client.Write(context.Background(), &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}}); err != nil {
		s.log.Debug("an error answer to the MCP client was not delivered", "error", err.Error())
	}
}

// noteClient records the client's claims for the events' payload: clientInfo and
// protocolVersion of an initialize request, or the same under _meta of a server/discover
// request (the stateless protocol of 2026-07-28).
func (s *session) noteClient(params json.RawMessage) {
	var in struct {
		ClientInfo      map[string]any `json:"clientInfo"`
		ProtocolVersion string         `json:"protocolVersion"`
		Meta            struct {
			ClientInfo      map[string]any `json:"io.modelcontextprotocol/clientInfo"`
			ProtocolVersion string         `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &in) != nil {
		return
	}
	if in.ClientInfo == nil {
		in.ClientInfo = in.Meta.ClientInfo
	}
	if in.ProtocolVersion == "" {
		in.ProtocolVersion = in.Meta.ProtocolVersion
	}
	info, _ := structpb.NewValue(in.ClientInfo)
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.ClientInfo != nil {
		s.who.clientInfo = info
	}
	s.who.protocolVersion = limitString(in.ProtocolVersion, 64)
}

// noteServer records the server's initialize or server/discover answer: its claims for the
// payload, and its name when Config.ServerName does not fix one.
func (s *session) noteServer(result json.RawMessage) {
	var out struct {
		ServerInfo      map[string]any `json:"serverInfo"`
		ProtocolVersion string         `json:"protocolVersion"`
		Meta            struct {
			ServerInfo map[string]any `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if json.Unmarshal(result, &out) != nil {
		return
	}
	if out.ServerInfo == nil {
		out.ServerInfo = out.Meta.ServerInfo
	}
	info, _ := structpb.NewValue(out.ServerInfo)
	name, _ := out.ServerInfo["name"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	if out.ServerInfo != nil {
		s.who.serverInfo = info
	}
	if out.ProtocolVersion != "" {
		s.who.protocolVersion = limitString(out.ProtocolVersion, 64)
	}
	if s.p.cfg.ServerName == "" && strings.TrimSpace(name) != "" && s.who.server != name {
		s.who.server = limitString(name, 256)
		s.log.Info("MCP server named by its own answer", "mcp_server", s.who.server)
	}
}

func limitString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// identity returns a copy of what the events say about the peers.
func (s *session) identity() identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	who := s.who
	if who.server == "" {
		who.server = "unknown"
	}
	return who
}

// classify names an RPC failure as bridge.Classify does, with "rejected" for an event the server
// refused. ctx is the call's context.
func classify(ctx context.Context, err error) string {
	f, rejected := bridge.Classify(ctx, err)
	if rejected {
		return failureRejected
	}
	return f.String()
}

// intercept asks the policy about ev.
func (p *Proxy) intercept(ctx context.Context, ev *ahpv1.Event) (*ahpv1.Decision, string, error) {
	cfg := &p.cfg
	if cfg.StartErr != nil {
		return nil, failureNotStarted, cfg.StartErr
	}
	// A call held for an approval waits on the backend for up to ApprovalWait; the client's
	// cancellation still ends it at once (ctx).
	ctx, cancel := context.WithTimeout(ctx, max(cfg.Timeout, cfg.ApprovalWait))
	defer cancel()
	resp, err := cfg.Clients.Intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{
		Event:        ev,
		Capabilities: &ahpv1.Capabilities{Effects: append([]ahpv1.EffectKind(nil), capabilities...)},
	}))
	if err != nil {
		return nil, classify(ctx, err), err
	}
	d := resp.Msg.GetDecision()
	if d == nil {
		return nil, failureBadAnswer, errors.New("InterceptResponse has no decision")
	}
	return d, "", nil
}
