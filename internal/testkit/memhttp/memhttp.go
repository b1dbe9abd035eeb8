// Package memhttp runs a real http.Server for a test over in-memory connections (net.Pipe):
// HTTP/1.1 and HTTP/2 without TLS (h2c), no port, shut down when the test ends. Its clients dial
// the server directly, so whatever URL host they are given, they reach it.
package memhttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/ahp-gateway/ahp/internal/testkit"
)

// URL is the base URL of every Server; the host is a name only, the clients ignore it.
const URL = "http://in-memory.test"

// Server is an http.Server serving a Listener.
type Server struct {
	srv    *http.Server
	ln     *Listener
	served chan error
	h2c    *http.Client
	http1  *http.Client
}

// New serves h with default server settings; see Serve.
func New(t testing.TB, h http.Handler) *Server {
	t.Helper()
	return Serve(t, &http.Server{Handler: h})
}

// Serve serves s in memory until the test ends. A nil s.Protocols becomes HTTP/1.1 and h2c;
// given protocols, like the rest of s, are used as they are (so a server's production settings
// are what the test exercises).
func Serve(t testing.TB, s *http.Server) *Server {
	t.Helper()
	if s.Protocols == nil {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.Protocols = &p
	}
	ms := &Server{srv: s, ln: NewListener(), served: make(chan error, 1)}
	ms.h2c = ms.ln.Client(true)
	ms.http1 = ms.ln.Client(false)
	go func() { ms.served <- s.Serve(ms.ln) }()
	testkit.CloseAtEnd(t, "the in-memory HTTP server", ms.Close)
	return ms
}

// URL returns the server's base URL, the constant URL.
func (s *Server) URL() string { return URL }

// Client returns a client that speaks HTTP/2 with prior knowledge to the server.
func (s *Server) Client() *http.Client { return s.h2c }

// HTTP1Client returns a client that speaks HTTP/1.1 to the server.
func (s *Server) HTTP1Client() *http.Client { return s.http1 }

// Listener returns what the server accepts on.
func (s *Server) Listener() *Listener { return s.ln }

// Close closes the server and all its connections at once and waits until Serve has returned;
// calls in flight fail. The test's cleanup calls it; a second call does nothing.
func (s *Server) Close() error {
	s.h2c.CloseIdleConnections()
	s.http1.CloseIdleConnections()
	err := s.srv.Close()
	if serveErr := <-s.served; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = serveErr
	}
	s.served <- http.ErrServerClosed // for a later Close
	return err
}

// Listener is a net.Listener whose connections are the server ends of net.Pipe pairs made by
// Dial. It can be handed to any Serve(net.Listener) method.
type Listener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

// NewListener returns an open Listener.
func NewListener() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; later dials fail with net.ErrClosed.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return addr{} }

// Dial waits until the listener accepts a new connection and returns the client end of it.
// Network and address are ignored, so it fits http.Transport.DialContext.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	server.Close()
	client.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, net.ErrClosed
}

// Client returns an HTTP client whose connections dial l: with h2c it speaks HTTP/2 with prior
// knowledge, else HTTP/1.1.
func (l *Listener) Client(h2c bool) *http.Client {
	var p http.Protocols
	if h2c {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial, Protocols: &p}}
}

// addr names the in-memory network.
type addr struct{}

func (addr) Network() string { return "memory" }
func (addr) String() string  { return "in-memory.test" }
