package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ahp-gateway/ahp/internal/server"
)

// NewEmbedded runs a complete ahp-server (the same internal/server handler, decision core and
// policy, hot reload included) inside this process and returns Clients that reach it without a
// socket: the server's own http.Server accepts in-memory connections (net.Pipe) from the
// clients' transport, so every call takes exactly the path it takes over the network, HTTP/2
// framing and Connect encoding included. TLS settings in cfg are ignored. Close shuts the server
// down gracefully.
func NewEmbedded(cfg server.Config) (Clients, io.Closer, error) {
	cfg.TLSCertFile, cfg.TLSKeyFile = "", ""
	srv, err := server.New(cfg)
	if err != nil {
		return Clients{}, nil, fmt.Errorf("bridge: embedded server: %w", err)
	}
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	t := &http.Transport{
		DialContext:     ln.DialContext,
		Protocols:       &protocols,
		IdleConnTimeout: time.Hour, // a pipe costs nothing to keep
	}
	clients := newClients(&http.Client{Transport: t}, "http://"+ln.Addr().String(), ProtocolConnect, 0, "")
	var once sync.Once
	var closeErr error
	closer := closerFunc(func() error {
		once.Do(func() {
			// Close our idle connections first: a server shutting down waits for open HTTP/2
			// connections to go idle and close, which would otherwise cost its full grace period.
			t.CloseIdleConnections()
			cancel()
			closeErr = <-served
		})
		return closeErr
	})
	return clients, closer, nil
}

// errClosed is what dialing the in-memory server gives once it is closed.
var errClosed = errors.New("bridge: embedded server closed")

// pipeListener is a net.Listener whose connections are the server ends of net.Pipe pairs made by
// DialContext.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener; later dials fail.
func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener.
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext hands the server end of a new pipe to Accept and returns the client end.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		server.Close()
		client.Close()
		return nil, errClosed
	case <-ctx.Done():
		server.Close()
		client.Close()
		return nil, ctx.Err()
	}
}

// pipeAddr names the in-memory "network".
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "ahp-server.embedded" }
