// Package memhttp runs a real http.Server for a test over in-memory connections (net.Pipe):
// HTTP/1.1 and HTTP/2 without TLS (h2c), no port, shut down when the test ends. Its clients dial
// the server directly, so whatever URL host they are given, they reach it.
package memhttp

import (
	"errors"
	"net/http"
	"testing"

	"github.com/ahp-gateway/ahp/internal/pipenet"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// URL is the base URL of every Server; the host is a name only, the clients ignore it.
const URL = "http://in-memory.test"

// Server is an http.Server serving a Listener.
type Server struct {
	srv    *http.Server
	ln     Listener
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
		s.Protocols = testkit.H2CProtocols()
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
func (s *Server) Listener() Listener { return s.ln }

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

// Listener is the in-memory listener of a Server (see package pipenet). It can be handed to any
// Serve(net.Listener) method.
type Listener struct{ *pipenet.Listener }

// NewListener returns an open Listener at the host of URL.
func NewListener() Listener {
	return Listener{pipenet.Listen("in-memory.test")}
}

// Client returns an HTTP client whose connections dial l: with h2c it speaks HTTP/2 with prior
// knowledge, else HTTP/1.1.
func (l Listener) Client(h2c bool) *http.Client {
	var p http.Protocols
	if h2c {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial, Protocols: &p}}
}
