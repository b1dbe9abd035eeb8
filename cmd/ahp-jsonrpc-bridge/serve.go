package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/ahp-gateway/ahp/internal/transport/httprpc"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	"github.com/ahp-gateway/ahp/internal/transport/stdio"
	"github.com/ahp-gateway/ahp/internal/transport/unixsock"
	"github.com/ahp-gateway/ahp/internal/transport/upload"
	"github.com/ahp-gateway/ahp/internal/transport/ws"
)

// onceMemoryLimit is the heap size at which a -once process collects garbage after all.
const onceMemoryLimit = 256 << 20

// serve builds the bridge, binds every listener (so that a taken port fails before anything is
// served), runs the transports until ctx is done, stdin ends (when stdio is served) or one of
// them fails, and then stops them all gracefully.
func serve(ctx context.Context, cfg *config, stdin io.Reader, stdout io.Writer, log *slog.Logger, getenv func(string) string) int {
	if cfg.once {
		// One message, then exit: collecting garbage while the decision core starts up would only
		// delay the answer. The memory limit still bounds the heap should the message be huge.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(onceMemoryLimit))
	}
	hardening, err := loadHardening(cfg, log)
	if err != nil {
		log.Error("cannot start the bridge", "error", err)
		return 1
	}
	cfg.clientAuth = hardening.auth != nil
	h, closer, err := newBridge(cfg, log, getenv, hardening.onFailure)
	if err != nil && cfg.once {
		// One message from a harness that waits for its answer: a backend that cannot start (a
		// policy file that does not load, an unset token variable) is a failure like any other
		// upstream failure, answered by the failure policy, as `hook` does.
		log.Error("cannot start the policy backend; the message meets the failure policy", "error", err)
		h, closer, err = newFailingBridge(cfg, log, err, hardening.onFailure)
	}
	if err != nil {
		log.Error("cannot start the bridge", "error", err)
		return 1
	}
	defer closeBackend(log, closer)
	if cfg.stdio && cfg.listeners == 0 && cfg.concurrency == 1 && getenv("GOMAXPROCS") == "" {
		// A persistent stdio bridge with nothing else to serve handles one message at a time.
		// On one P every hand-off (stdin reader, upstream stream, answer) stays on one thread
		// instead of waking a second one each time, which shortens the round trip
		// (docs/performance.md). Set after the decision core started, which uses every core.
		runtime.GOMAXPROCS(1)
	}
	mode := "embedded"
	if cfg.upstream != "" {
		mode = "upstream"
	}
	log.Debug("bridge ready", "mode", mode, "dialect", cfg.dialect.String(), "failure_policy", cfg.failurePolicy.String(), "timeout", cfg.timeout)

	stream := ndjson.Options{MaxMessageBytes: cfg.maxMessageBytes, Concurrency: cfg.concurrency, Logger: log}
	if cfg.once {
		if err := stdio.ServeOnce(ctx, stdin, stdout, h, stream); err != nil {
			log.Error("stdio", "error", err)
			return 1
		}
		return 0
	}

	var servers []func(context.Context) error
	var listeners []io.Closer
	// bound keeps a new listener; when there is none it closes the ones before and logs failure.
	bound := func(ln io.Closer, err error, failure string) bool {
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			log.Error(failure, "error", err)
			return false
		}
		listeners = append(listeners, ln)
		return true
	}
	if cfg.httpAddr != "" {
		ln, err := net.Listen("tcp", cfg.httpAddr)
		if !bound(ln, err, "cannot listen for HTTP") {
			return 1
		}
		logListening(log, "http", ln.Addr(), hardening.auth != nil, "hooks_path", cfg.hooksPath, "harness_path", cfg.harnessPath)
		addr := ln.Addr()
		wrap := func(next http.Handler) http.Handler {
			return guarded(hardening.requireHTTP(next), addr, cfg.guard, log)
		}
		opts := httprpc.Options{HooksPath: cfg.hooksPath, HarnessPath: cfg.harnessPath, MaxMessageBytes: cfg.maxMessageBytes, ShutdownTimeout: cfg.shutdownTimeout, Logger: log, Wrap: wrap, ApprovalWait: cfg.approvalWait}
		if cfg.uploadPath != "" {
			opts.UploadPath, opts.Upload = cfg.uploadPath, upload.Handler(uploadStore(cfg), log)
		}
		servers = append(servers, func(ctx context.Context) error { return httprpc.Serve(ctx, ln, h, opts) })
	}
	if cfg.wsAddr != "" {
		ln, err := net.Listen("tcp", cfg.wsAddr)
		if !bound(ln, err, "cannot listen for WebSocket") {
			return 1
		}
		logListening(log, "websocket", ln.Addr(), hardening.auth != nil)
		addr := ln.Addr()
		wrap := func(next http.Handler) http.Handler {
			return guarded(hardening.requireWebSocket(next), addr, cfg.guard, log)
		}
		srv := ws.NewServer(h, ws.Options{MaxMessageBytes: cfg.maxMessageBytes, Concurrency: cfg.concurrency, ShutdownTimeout: cfg.shutdownTimeout, Logger: log, Wrap: wrap})
		servers = append(servers, func(ctx context.Context) error { return srv.Serve(ctx, ln) })
	}
	if cfg.unixPath != "" {
		ln, err := unixsock.Listen(cfg.unixPath, cfg.unixMode)
		if !bound(ln, err, "cannot listen on the Unix socket") {
			return 1
		}
		if unixsock.IsAbstract(cfg.unixPath) {
			logListening(log, "unix", ln.Addr(), true, "abstract", true, "allow_uids", cfg.unixAllowUIDs)
		} else {
			logListening(log, "unix", ln.Addr(), true, "mode", cfg.unixMode.String(), "allow_uids", cfg.unixAllowUIDs)
		}
		opts := unixsock.Options{Stream: stream, ShutdownTimeout: cfg.shutdownTimeout, AllowUIDs: cfg.unixAllowUIDs}
		servers = append(servers, func(ctx context.Context) error { return unixsock.Serve(ctx, ln, h, opts) })
	}
	if hardening.metricsLn != nil {
		ln := hardening.metricsLn
		servers = append(servers, func(ctx context.Context) error { return hardening.metrics.Serve(ctx, ln) })
	}
	if cfg.stdio {
		// stdin's end is the harness going away: everything stops with it.
		servers = append(servers, func(ctx context.Context) error { return stdio.Serve(ctx, stdin, stdout, h, stream) })
	}

	ctx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	for _, s := range servers {
		wg.Go(func() {
			err := s(ctx)
			if err != nil {
				log.Error("transport stopped", "error", err)
				mu.Lock()
				failed = true
				mu.Unlock()
			}
			// Any transport ending ends the others: a failed listener should not leave the process
			// half-alive, and stdio's EOF means the harness is gone.
			stopAll()
		})
	}
	wg.Wait()
	c := h.Counters()
	log.Info("bridge stopped", "fail_open", c.FailOpen, "fail_closed", c.FailClosed, "observe_failures", c.ObserveFailures, "panics", c.Panics)
	if failed {
		return 1
	}
	return 0
}

// closeBackend stops the decision core or the upstream clients that newBridge or clients started.
func closeBackend(log *slog.Logger, closer io.Closer) {
	if err := closer.Close(); err != nil {
		log.Warn("stopping the decision core", "error", err)
	}
}

func logListening(log *slog.Logger, transport string, addr net.Addr, authOn bool, attrs ...any) {
	log.Info("listening", append([]any{"transport", transport, "addr", addr.String()}, attrs...)...)
	// Without an auth section in -config the bridge authenticates nobody (neither protocol's
	// reference server does); on a routable address anyone who reaches it can ask for decisions.
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !authOn {
		log.Warn("listening on a non-loopback address without authentication", "transport", transport, "addr", addr.String())
	}
}
