// Package ws serves the bridge over WebSocket (github.com/coder/websocket): one JSON-RPC message
// per text frame, one text frame per answer, on any path, as the Harness reference server does.
//
// Choices, and why:
//   - Subprotocol "ahp" is agreed when the client offers it; a client offering none is accepted
//     too (the reference negotiates nothing).
//   - Binary frames are read and ignored, as in the reference: AHP messages are text.
//   - A frame over the size limit is consumed without being kept and, when its id can be read,
//     answered with a JSON-RPC -32600 error; the connection stays up, as on the NDJSON transports.
//     (The library's own limit would close the connection with 1009 and lose every other request
//     in flight on it.)
//   - Cross-origin browser handshakes are refused (the library's default): nothing on a web page
//     should reach a local policy gateway. Harness clients send no Origin and are unaffected.
//   - Pings are answered by the library; messages are handled in order unless Concurrency > 1.
package ws

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/inflight"
	"github.com/ahp-gateway/ahp/internal/transport"
)

// Subprotocol is the WebSocket subprotocol the server agrees to.
const Subprotocol = "ahp"

// writeTimeout drops a peer that has not taken an answer for this long.
const writeTimeout = 30 * time.Second

// Options configures a Server. Zero values take the defaults.
type Options struct {
	// MaxMessageBytes is the size limit of one message (default transport.DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Concurrency is how many messages of one connection are handled at once (default 1, in order).
	Concurrency int
	// ShutdownTimeout bounds how long Serve waits for in-flight messages once its context is done
	// (default transport.DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// Logger receives diagnostics (default: discarded).
	Logger *slog.Logger
	// Wrap, if set, wraps the server's handler in Serve — e.g. authentication middleware.
	Wrap func(http.Handler) http.Handler
	// IdleTimeout closes a connection on which no message arrives for this long (default
	// DefaultIdleTimeout), so that abandoned connections do not pile up.
	IdleTimeout time.Duration
	// MaxConnections bounds the connections open at once (default DefaultMaxConnections); an
	// upgrade over it is refused with 503.
	MaxConnections int
}

// DefaultMaxConnections is the default of Options.MaxConnections.
const DefaultMaxConnections = 1024

// DefaultIdleTimeout is the default of Options.IdleTimeout.
const DefaultIdleTimeout = 10 * time.Minute

// Server is a WebSocket endpoint for a bridge.Handler. It is an http.Handler, so it can be mounted
// on any server; Serve runs it on a listener of its own with graceful shutdown.
type Server struct {
	h    bridge.Handler
	opts Options

	mu      sync.Mutex
	closing bool
	conns   map[*conn]struct{}
	wg      sync.WaitGroup // one per connection being served
}

// NewServer returns a Server handing messages to h.
func NewServer(h bridge.Handler, opts Options) *Server {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = transport.DefaultMaxMessageBytes
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = transport.DefaultShutdownTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	return &Server{h: h, opts: opts, conns: map[*conn]struct{}{}}
}

// conn is one WebSocket connection.
type conn struct {
	ws    *websocket.Conn
	ctx   context.Context // for handling and writing; ends with the connection, not with shutdown
	slots chan struct{}

	inflight inflight.Group // messages being handled; closed when the server shuts down
}

// ServeHTTP upgrades the request, whatever its path, and serves the connection until it closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	full := len(s.conns) >= s.opts.MaxConnections
	s.mu.Unlock()
	if full {
		s.opts.Logger.Warn("websocket connection refused: too many open connections", "max", s.opts.MaxConnections)
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	wsc, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		s.opts.Logger.Debug("websocket handshake refused", "error", err)
		return // Accept has answered the request
	}
	// The limit is enforced per message below, without closing the connection.
	wsc.SetReadLimit(-1)
	c := &conn{ws: wsc, ctx: context.WithoutCancel(r.Context()), slots: make(chan struct{}, s.opts.Concurrency)}

	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = wsc.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	if len(s.conns) >= s.opts.MaxConnections { // others were upgraded since the check above
		s.mu.Unlock()
		_ = wsc.Close(websocket.StatusTryAgainLater, "too many connections")
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()

	s.opts.Logger.Debug("websocket connection opened", "subprotocol", wsc.Subprotocol())
	s.read(c)
	_ = c.inflight.Wait(context.Background())
	_ = wsc.CloseNow() // no-op when the connection is closed already
}

// read takes messages off the connection until it ends or starts shutting down.
func (s *Server) read(c *conn) {
	for {
		msg, over, err := s.next(c)
		if err != nil {
			return
		}
		if msg == nil {
			continue // a binary frame
		}
		if !c.inflight.Begin() {
			return // shutting down; the close frame tells the peer this message was not taken
		}
		if over {
			s.answerOversize(c, msg)
			c.inflight.End()
			continue
		}
		if s.opts.Concurrency == 1 {
			s.handle(c, msg)
			continue
		}
		c.slots <- struct{}{}
		go func() {
			defer func() { <-c.slots }()
			s.handle(c, msg)
		}()
	}
}

// next reads the next message: nil for a binary frame, which is ignored; at most
// MaxMessageBytes of a longer text message, with over set. A connection on which nothing arrives
// for IdleTimeout is closed (an expired context makes the library close it); the same context
// covers reading the whole message.
func (s *Server) next(c *conn) (msg []byte, over bool, err error) {
	limit := s.opts.MaxMessageBytes
	idle, cancel := context.WithTimeout(c.ctx, s.opts.IdleTimeout)
	defer cancel()
	typ, rd, err := c.ws.Reader(idle)
	if err != nil {
		s.opts.Logger.Debug("websocket connection ended", "status", websocket.CloseStatus(err), "error", err)
		return nil, false, err
	}
	if typ != websocket.MessageText {
		if _, err := io.Copy(io.Discard, rd); err != nil {
			return nil, false, err
		}
		s.opts.Logger.Debug("binary frame ignored")
		return nil, false, nil
	}
	if msg, err = io.ReadAll(io.LimitReader(rd, int64(limit)+1)); err != nil {
		return nil, false, err
	}
	if over = len(msg) > limit; over {
		if _, err := io.Copy(io.Discard, rd); err != nil {
			return nil, false, err
		}
		msg = msg[:limit]
	}
	return msg, over, nil
}

// handle answers one message; it ends the message's c.inflight registration.
func (s *Server) handle(c *conn, msg []byte) {
	defer c.inflight.End()
	if reply := s.h.Handle(c.ctx, msg, bridge.TransportWebSocket); reply.Body != nil {
		s.write(c, reply.Body)
	}
}

func (s *Server) answerOversize(c *conn, head []byte) {
	reply := transport.OversizeReply(head, s.opts.MaxMessageBytes)
	s.opts.Logger.Warn("message over the size limit", "limit", s.opts.MaxMessageBytes, "answered", reply != nil)
	if reply != nil {
		s.write(c, reply)
	}
}

func (s *Server) write(c *conn, msg []byte) {
	ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		s.opts.Logger.Debug("writing the answer failed", "error", err)
	}
}

// Serve serves WebSocket connections on ln until ctx is done. It then stops accepting, lets every
// connection finish the messages it has taken (up to Options.ShutdownTimeout), closes each with
// status 1001 (going away) and returns nil; it returns an error if serving fails otherwise.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var handler http.Handler = s
	if s.opts.Wrap != nil {
		handler = s.opts.Wrap(handler)
	}
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
	}
	// The HTTP server only sees handshakes (hijacked connections are not its business), so a
	// short grace suffices for it; the WebSocket connections get theirs in shutdown.
	err := transport.ServeHTTP(ctx, hs, ln, 5*time.Second)
	s.shutdown()
	return err
}

// shutdown stops every connection: no new messages, in-flight ones answered within the grace
// period, then a close handshake (or an abrupt close once the grace period is over).
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.inflight.Close()
			if c.inflight.Wait(ctx) == nil {
				_ = c.ws.Close(websocket.StatusGoingAway, "server shutting down")
			} else {
				_ = c.ws.CloseNow()
			}
		})
	}
	wg.Wait()
	s.wg.Wait()
}
