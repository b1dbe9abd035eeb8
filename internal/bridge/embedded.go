package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ahp-gateway/ahp/internal/pipenet"
	"github.com/ahp-gateway/ahp/internal/server"
)

// NewEmbedded runs a complete ahp-server (the same internal/server services, decision core and
// policy, hot reload included) inside this process and returns Clients that reach it without a
// socket. The unary RPCs — every call the Bridge and the hook adapters make — go straight to the
// service handlers (server.Local): the same validation, deadlines and error codes as over the
// network, without encoding, HTTP/2, copies or byte limits (the transport bounded the message a
// request was decoded from). Requests are handed over and decisions shared with the core, so
// callers change neither once sent or answered. The streaming RPCs take the network path: the
// server's own http.Server accepts in-memory connections (net.Pipe), started on the first stream.
// With cfg.Auth or cfg.Tracing set, which only the HTTP path applies, every call takes that path.
// TLS settings in cfg are ignored. Close shuts the server down gracefully.
func NewEmbedded(cfg server.Config) (Clients, io.Closer, error) {
	return NewEmbeddedWith(cfg, nil)
}

// NewEmbeddedWith is NewEmbedded with attach called on the server once it is built, before any
// call reaches it (cluster mode: to make the cluster's policy bucket its policy source). An
// error from attach is returned and nothing keeps running.
func NewEmbeddedWith(cfg server.Config, attach func(*server.Server) error) (Clients, io.Closer, error) {
	cfg.TLSCertFile, cfg.TLSKeyFile = "", ""
	srv, err := server.New(cfg)
	if err != nil {
		return Clients{}, nil, fmt.Errorf("bridge: embedded server: %w", err)
	}
	if attach != nil {
		if err := attach(srv); err != nil {
			return Clients{}, nil, err
		}
	}
	if cfg.Auth != nil || cfg.Tracing != nil {
		return embeddedOverPipe(srv)
	}
	local, err := srv.Local(server.LocalOptions{})
	if err != nil {
		return Clients{}, nil, fmt.Errorf("bridge: embedded server: %w", err)
	}
	var ln *pipenet.Listener
	ln = pipeListener(pipenet.StartOnFirstDial(func() error { return local.Serve(ln) }))
	streams := &pipeClients{ln: ln}
	closer := closerFunc(sync.OnceValue(func() error {
		// Close our idle connections first: a server shutting down waits for open HTTP/2
		// connections to go idle and close, which would otherwise cost its full grace period.
		streams.closeIdle()
		err := local.Close()
		_ = ln.Close() // when no stream ever started the HTTP server, nothing else closes it
		return err
	}))
	return localClients(local, streams), closer, nil
}

// embeddedOverPipe serves srv on an in-memory listener and returns Clients whose every call
// goes through its HTTP handler.
func embeddedOverPipe(srv *server.Server) (Clients, io.Closer, error) {
	ln := pipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	streams := &pipeClients{ln: ln}
	closer := closerFunc(sync.OnceValue(func() error {
		streams.closeIdle()
		cancel()
		return <-served
	}))
	return streams.get(), closer, nil
}

// pipeListener returns the in-memory listener the embedded server's HTTP handler serves.
func pipeListener(opts ...pipenet.Option) *pipenet.Listener {
	return pipenet.Listen("ahp-server.embedded", append(opts, pipenet.ClosedError(errClosed))...)
}

// pipeClients are Clients over HTTP/2 on a pipeListener, made on first use.
type pipeClients struct {
	ln      *pipenet.Listener
	once    sync.Once
	mu      sync.Mutex
	t       *http.Transport
	clients Clients
}

func (p *pipeClients) get() Clients {
	p.once.Do(func() {
		var protocols http.Protocols
		protocols.SetUnencryptedHTTP2(true)
		t := &http.Transport{
			DialContext:     p.ln.Dial,
			Protocols:       &protocols,
			IdleConnTimeout: time.Hour, // a pipe costs nothing to keep
		}
		p.mu.Lock()
		p.t = t
		p.mu.Unlock()
		p.clients = newClients(&http.Client{Transport: t}, "http://"+p.ln.Addr().String(), ProtocolConnect, 0, "")
	})
	return p.clients
}

// closeIdle closes the idle connections of the transport, if one was made.
func (p *pipeClients) closeIdle() {
	p.mu.Lock()
	t := p.t
	p.mu.Unlock()
	if t != nil {
		t.CloseIdleConnections()
	}
}

// errClosed is what dialing the in-memory server gives once it is closed.
var errClosed = errors.New("bridge: embedded server closed")
