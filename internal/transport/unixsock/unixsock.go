// Package unixsock serves the bridge on a Unix domain socket: every connection is a
// newline-delimited JSON stream (the stdio framing), many connections at once. The Harness
// reference ships a Unix socket client with exactly this framing but no server; this is that
// server. Access control is the socket file's mode, 0600 (owner only) by default.
package unixsock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
)

// DefaultMode is the default permission of the socket file: only its owner may connect.
const DefaultMode fs.FileMode = 0o600

// Listener is a Unix socket listener that removes its socket file when closed, unless the file
// has since been replaced by another one.
type Listener struct {
	*net.UnixListener
	path string
	info fs.FileInfo // the socket file as created, to recognise it at Close
}

// Listen creates a socket at path, sets its file mode and listens on it. A socket file left behind
// by a process that is gone (nobody accepts on it) is removed first; any other existing file, or a
// socket somebody still listens on, is an error. A path starting with "@" is a Linux abstract
// socket, which has no file and so no mode: any local user can connect, so serve it only with
// Options.AllowUIDs set.
//
// The socket is created under the process umask and narrowed to mode at once; for the strictest
// setups put it in a directory only its owner can enter (such as $XDG_RUNTIME_DIR).
func Listen(path string, mode fs.FileMode) (*Listener, error) {
	abstract := IsAbstract(path)
	if !abstract {
		if err := removeStale(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l := &Listener{UnixListener: ln, path: path}
	if abstract {
		return l, nil
	}
	// Close removes the file itself, and only if it is still ours.
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, mode); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("unixsock: set mode of %s: %w", path, err)
	}
	if l.info, err = os.Lstat(path); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("unixsock: %w", err)
	}
	return l, nil
}

// IsAbstract reports whether path names a Linux abstract socket (it starts with "@").
func IsAbstract(path string) bool { return len(path) > 0 && path[0] == '@' }

// Close stops listening and removes the socket file if it is the one Listen created.
func (l *Listener) Close() error {
	err := l.UnixListener.Close()
	if l.info != nil {
		if now, statErr := os.Lstat(l.path); statErr == nil && os.SameFile(now, l.info) {
			_ = os.Remove(l.path)
		}
	}
	return err
}

// removeStale removes path if it is a socket nobody listens on.
func removeStale(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unixsock: %w", err)
	}
	if info.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("unixsock: %s exists and is not a socket; not removing it", path)
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("unixsock: another process is listening on %s", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("unixsock: cannot tell whether %s is stale: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unixsock: remove stale socket: %w", err)
	}
	return nil
}

// Options configures Serve. Zero values take the defaults.
type Options struct {
	// Stream configures each connection (size limit, concurrency, logger).
	Stream ndjson.Options
	// ShutdownTimeout bounds how long Serve waits, once ctx is done, for in-flight messages to be
	// answered before it closes the remaining connections (default transport.DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// AllowUIDs, when non-empty, admits only peers whose process runs as one of these user ids
	// (checked with the kernel's peer credentials, SO_PEERCRED); others are disconnected at once.
	// Empty: any peer the socket file's mode lets connect.
	AllowUIDs []uint32
	// MaxConnections bounds the connections open at once (default DefaultMaxConnections); one more
	// is closed at accept, so a local client cannot exhaust the process's file descriptors.
	MaxConnections int
	// IdleTimeout closes a connection on which nothing arrives for this long (default
	// DefaultIdleTimeout), so that abandoned connections do not pile up.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is the default of Options.IdleTimeout.
const DefaultIdleTimeout = 10 * time.Minute

// idleReader reads from c, failing once nothing arrives for idle.
type idleReader struct {
	c    net.Conn
	idle time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(r.idle))
	return r.c.Read(p)
}

// DefaultMaxConnections is the default of Options.MaxConnections.
const DefaultMaxConnections = 1024

// Serve accepts connections on ln and serves each as an ndjson stream with h until ctx is done. It
// then closes ln (which, for a *Listener, removes the socket file), stops reading from every
// connection, waits for in-flight answers to be written (up to Options.ShutdownTimeout), closes
// the connections and returns nil. It returns an error if accepting fails for good.
func Serve(ctx context.Context, ln net.Listener, h bridge.Handler, opts Options) error {
	log := opts.Stream.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		opts.Stream.Logger = log
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	grace := opts.ShutdownTimeout
	if grace <= 0 {
		grace = transport.DefaultShutdownTimeout
	}

	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	// connCtx ends when ctx does, or when accepting fails for good.
	connCtx, stopConns := context.WithCancel(ctx)
	defer stopConns()
	stopAccepting := context.AfterFunc(connCtx, func() { _ = ln.Close() })
	defer stopAccepting()

	var acceptErr error
	for delay := time.Duration(0); ; {
		c, err := ln.Accept()
		if err != nil {
			if connCtx.Err() != nil {
				break
			}
			// Running out of file descriptors passes; back off instead of spinning or giving up.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				log.Warn("accept failed; retrying", "error", err, "in", delay)
				time.Sleep(delay)
				continue
			}
			acceptErr = fmt.Errorf("unixsock: accept: %w", err)
			stopConns()
			break
		}
		delay = 0
		if len(opts.AllowUIDs) > 0 {
			uid, err := peerUID(c)
			if err != nil || !slices.Contains(opts.AllowUIDs, uid) {
				log.Warn("peer refused: its user id is not allowed", "uid", uid, "error", err)
				_ = c.Close()
				continue
			}
		}
		mu.Lock()
		if len(conns) >= opts.MaxConnections {
			mu.Unlock()
			log.Warn("connection refused: too many open connections", "max", opts.MaxConnections)
			_ = c.Close()
			continue
		}
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			log.Debug("connection opened")
			if err := ndjson.Serve(connCtx, idleReader{c, opts.IdleTimeout}, c, h, bridge.TransportUnix, opts.Stream); err != nil {
				log.Debug("connection ended", "error", err)
			}
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			_ = c.Close()
		}()
	}

	// Closed here too, not only by the AfterFunc, so the socket file is gone when Serve returns.
	_ = ln.Close()

	// Each connection's ndjson.Serve has stopped reading and is finishing its answers. Give them the
	// grace period, then close what is left, which also ends a write to a peer that stopped reading.
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(grace):
		mu.Lock()
		log.Warn("shutdown grace period over; closing connections", "open", len(conns))
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		<-drained
	}
	return acceptErr
}
