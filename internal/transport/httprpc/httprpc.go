// Package httprpc serves the bridge over HTTP: one JSON-RPC object per POST body, at most one
// JSON-RPC object back. One listener serves both dialects: the Agent Hooks Protocol HTTP binding at
// one path (default /hooks) and the Agent Harness Protocol's POST /ahp at another. Both paths hand
// the body to the same bridge.Handler, which picks the dialect from the method and chooses the
// status (200 with an answer; 202 or 204 without one).
//
// What the transport itself answers, before any Handler runs (checks in this order):
//
//	404  any other path
//	405  a method other than POST (with "Allow: POST")
//	415  any Content-Encoding (bodies are never decompressed), or a media type other than
//	     application/json (parameters allowed; a charset must be UTF-8)
//	413  a body over the size limit
//	400  a body that could not be read
//
// A JSON array (a batch) is not special here: it goes to the Handler, which answers it with a
// JSON-RPC -32600 error under HTTP 200, as both protocols' reference servers do.
package httprpc

import (
	"context"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport"
)

// Default paths.
const (
	DefaultHooksPath   = "/hooks"
	DefaultHarnessPath = "/ahp"
)

// Options configures NewHandler and NewServer. Zero values take the defaults.
type Options struct {
	// HooksPath is where Agent Hooks Protocol messages are POSTed (default DefaultHooksPath).
	HooksPath string
	// HarnessPath is where Agent Harness Protocol messages are POSTed (default DefaultHarnessPath).
	// It may equal HooksPath.
	HarnessPath string
	// MaxMessageBytes is the size limit of a body (default transport.DefaultMaxMessageBytes).
	MaxMessageBytes int
	// ShutdownTimeout bounds how long Serve waits for in-flight requests once its context is done
	// (default transport.DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// Logger receives diagnostics (default: discarded).
	Logger *slog.Logger
	// Wrap, if set, wraps the handler Serve builds — e.g. authentication middleware.
	Wrap func(http.Handler) http.Handler
	// ApprovalWait is how long a Handler may wait on a decision held for an approval; the write
	// timeout is raised to cover it.
	ApprovalWait time.Duration
	// UploadPath and Upload, if both set, serve the Agent Hooks "draft" content upload binding
	// (package upload) on that exact path.
	UploadPath string
	Upload     http.Handler
}

func (o Options) withDefaults() Options {
	if o.HooksPath == "" {
		o.HooksPath = DefaultHooksPath
	}
	if o.HarnessPath == "" {
		o.HarnessPath = DefaultHarnessPath
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// NewHandler returns the http.Handler serving h on the two paths.
func NewHandler(h bridge.Handler, opts Options) http.Handler {
	return &handler{h: h, opts: opts.withDefaults()}
}

type handler struct {
	h    bridge.Handler
	opts Options
}

// ServeHTTP applies the checks listed in the package doc, in that order, then hands the body to
// the bridge.Handler and writes its Reply.
func (s *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Exact paths, no http.ServeMux: its clean-path redirects would be operational failures for a
	// Hooks harness, which must not follow redirects.
	if s.opts.Upload != nil && s.opts.UploadPath != "" && r.URL.Path == s.opts.UploadPath {
		s.opts.Upload.ServeHTTP(w, r)
		return
	}
	if r.URL.Path != s.opts.HooksPath && r.URL.Path != s.opts.HarnessPath {
		http.NotFound(w, r)
		return
	}
	body, ok := transport.ReadBody(w, r, transport.BodyRules{
		Limit: s.opts.MaxMessageBytes, Usage: "use POST", AcceptType: isJSON,
		TooLarge: "request body over the size limit", Logger: s.opts.Logger,
	})
	if !ok {
		return
	}

	reply := s.h.Handle(r.Context(), body, bridge.TransportHTTP)
	status := reply.HTTPStatus
	if status == 0 {
		status = http.StatusOK
		if reply.Body == nil {
			status = http.StatusNoContent
		}
	}
	if reply.Body == nil || !bodyAllowed(status) {
		if reply.Body != nil {
			s.opts.Logger.Error("handler gave a body with a status that cannot carry one; body dropped", "status", status)
		}
		w.WriteHeader(status)
		return
	}
	transport.WriteJSON(w, status, reply.Body, s.opts.Logger)
}

// isJSON accepts application/json with any parameters, but no charset other than UTF-8, the only
// encoding JSON-RPC over AHP allows.
func isJSON(contentType string) bool {
	if contentType == "application/json" || contentType == "application/json; charset=utf-8" {
		return true // what clients send, without the allocations of a parse
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// Serve serves h on ln (NewHandler behind NewServer) until ctx is done, then shuts down
// gracefully; see transport.ServeHTTP.
func Serve(ctx context.Context, ln net.Listener, h bridge.Handler, opts Options) error {
	opts = opts.withDefaults()
	handler := NewHandler(h, opts)
	if opts.Wrap != nil {
		handler = opts.Wrap(handler)
	}
	return transport.ServeHTTP(ctx, NewServerWaiting(handler, opts.Logger, opts.ApprovalWait), ln, opts.ShutdownTimeout)
}

// NewServerWaiting is NewServer for a handler that may wait up to wait on a decision held for an
// approval: the write timeout covers it.
func NewServerWaiting(handler http.Handler, log *slog.Logger, wait time.Duration) *http.Server {
	s := NewServer(handler, log)
	s.WriteTimeout = max(s.WriteTimeout, wait+10*time.Second)
	return s
}

// NewServer returns an http.Server for handler with production timeouts, speaking HTTP/1.1 and
// h2c. Read and write timeouts are generous because a Handler may wait up to its own deadline
// (at most 30 s) on an upstream.
func NewServer(handler http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           handler,
		Protocols:         transport.HTTPProtocols(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
