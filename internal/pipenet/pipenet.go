// Package pipenet is an in-memory network for one server: a net.Listener whose connections are
// the server ends of net.Pipe pairs made by its Dial. Any Serve(net.Listener) method accepts on
// it and an http.Transport dials it through DialContext, with no port and no system call.
package pipenet

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// Listener is a net.Listener whose connections are the server ends of net.Pipe pairs made by
// Dial.
type Listener struct {
	host      string
	closedErr error
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once

	start     func() error
	startOnce sync.Once
	startErr  error
}

var _ net.Listener = (*Listener)(nil)

// Option configures a Listener made by Listen.
type Option func(*Listener)

// StartOnFirstDial has the first Dial call start, which starts serving the listener (it must
// return once serving has begun); when start fails, that dial and every later one fail with the
// closed error (see ClosedError) wrapping start's.
func StartOnFirstDial(start func() error) Option {
	return func(l *Listener) { l.start = start }
}

// ClosedError sets the error Dial returns once the listener is closed; the default is
// net.ErrClosed.
func ClosedError(err error) Option {
	return func(l *Listener) { l.closedErr = err }
}

// Listen returns an open Listener whose address names host.
func Listen(host string, opts ...Option) *Listener {
	l := &Listener{host: host, closedErr: net.ErrClosed, conns: make(chan net.Conn), done: make(chan struct{})}
	for _, o := range opts {
		o(l)
	}
	return l
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

// Close implements net.Listener; later dials fail.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

// Addr implements net.Listener: the network "pipe" at the listener's host.
func (l *Listener) Addr() net.Addr { return addr(l.host) }

// Dial waits until the listener accepts a new connection and returns the client end of it.
// Network and address are ignored, so it fits http.Transport.DialContext.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	if l.start != nil {
		l.startOnce.Do(func() { l.startErr = l.start() })
		if l.startErr != nil {
			return nil, fmt.Errorf("%w: %w", l.closedErr, l.startErr)
		}
	}
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
	return nil, l.closedErr
}

// addr is a Listener's address.
type addr string

func (addr) Network() string  { return "pipe" }
func (a addr) String() string { return string(a) }
