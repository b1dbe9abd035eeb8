// Command ahp-server is the AHP decision point: it answers Agent Hooks Protocol and Agent Harness
// Protocol interceptions from a declarative CEL policy over Connect, gRPC and gRPC-Web.
//
//	ahp-server [flags]                       serve (default 127.0.0.1:8080, embedded default policy)
//	ahp-server policy check FILE             validate and compile a policy
//	ahp-server policy test FILE TESTS.yaml   run policy test cases
//	ahp-server version                       print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/server"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise build info is used.
var version = ""

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// run is main with its environment injected, so the command is testable without real stdio.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "policy":
			return runPolicy(args[1:], stdout, stderr)
		case "version":
			fmt.Fprintln(stdout, versionString())
			return 0
		}
	}
	return serve(ctx, args, stdout, stderr, getenv)
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(getenv func(string) string, key string, def int) int {
	if v, err := strconv.Atoi(getenv(key)); err == nil {
		return v
	}
	return def
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("ahp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: ahp-server [flags]
       ahp-server policy check FILE
       ahp-server policy test FILE TESTS.yaml
       ahp-server version

Serves ahp.v1 InterceptService, TypedDecisionService, ObservationService and HarnessService over
Connect, gRPC and gRPC-Web (HTTP/1.1 and h2c, or TLS), with gRPC health and reflection.
Every flag can also be set with the environment variable shown.

Flags:
`)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", envOr(getenv, "AHP_ADDR", "127.0.0.1:8080"), "listen address (env AHP_ADDR)")
	policyFile := fs.String("policy", getenv("AHP_POLICY"), "policy YAML file; empty uses the embedded default policy (env AHP_POLICY)")
	poll := fs.Duration("policy-poll", time.Second, "how often the policy file is checked for changes; 0 disables hot reload (env AHP_POLICY_POLL)")
	tlsCert := fs.String("tls-cert", getenv("AHP_TLS_CERT"), "TLS certificate file; with -tls-key enables TLS (env AHP_TLS_CERT)")
	tlsKey := fs.String("tls-key", getenv("AHP_TLS_KEY"), "TLS private key file (env AHP_TLS_KEY)")
	batchSize := fs.Int("batch-size", envInt(getenv, "AHP_BATCH_SIZE", 100), "maximum events per InterceptBatch / ahp/batch (env AHP_BATCH_SIZE)")
	maxDepth := fs.Int("max-depth", envInt(getenv, "AHP_MAX_DEPTH", 10), "maximum Harness event depth (env AHP_MAX_DEPTH)")
	timeoutMs := fs.Int("timeout-ms", envInt(getenv, "AHP_TIMEOUT_MS", 10000), "per-request timeout advertised to Harness clients in the handshake (env AHP_TIMEOUT_MS)")
	watchBuffer := fs.Int("watch-buffer", envInt(getenv, "AHP_WATCH_BUFFER", 1024), "items a Watch subscriber may fall behind before it is cut off (env AHP_WATCH_BUFFER)")
	logLevel := fs.String("log-level", envOr(getenv, "AHP_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env AHP_LOG_LEVEL)")
	logFormat := fs.String("log-format", envOr(getenv, "AHP_LOG_FORMAT", "text"), "log format on stderr: text or json (env AHP_LOG_FORMAT)")
	if v := getenv("AHP_POLICY_POLL"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			*poll = d
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ahp-server: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 2
	}
	if *batchSize < 1 || *maxDepth < 1 || *timeoutMs < 1 {
		fmt.Fprintln(stderr, "ahp-server: -batch-size, -max-depth and -timeout-ms must be positive")
		return 2
	}
	pollInterval := *poll
	if pollInterval == 0 {
		pollInterval = -1 // server.Config: negative disables
	}
	srv, err := server.New(server.Config{
		PolicyFile:         *policyFile,
		PolicyPollInterval: pollInterval,
		TLSCertFile:        *tlsCert,
		TLSKeyFile:         *tlsKey,
		Limits: core.HarnessLimits{
			TimeoutMs: uint64(*timeoutMs), BatchSize: uint64(*batchSize), MaxDepth: uint32(*maxDepth),
		},
		WatchBuffer: *watchBuffer,
		Version:     versionString(),
		Logger:      logger,
	})
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		logger.Warn("listening on a non-loopback address without authentication: anyone who can reach it can ask for decisions and watch every event", "addr", ln.Addr().String())
	}
	scheme := "http"
	if *tlsCert != "" && *tlsKey != "" {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "ahp-server listening on %s://%s\n", scheme, ln.Addr())

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for range hup {
			if err := srv.ReloadPolicy(); err == nil {
				logger.Info("policy reloaded on SIGHUP")
			}
		}
	}()
	if err := srv.Serve(ctx, ln); err != nil {
		logger.Error("server stopped", "error", err)
		return 1
	}
	logger.Info("server stopped")
	return 0
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("-log-format: want text or json, got %q", format)
}

func runPolicy(args []string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: ahp-server policy check FILE | ahp-server policy test FILE TESTS.yaml")
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "check":
		if len(args) != 2 {
			return usage()
		}
		p, err := policy.LoadFile(args[1])
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: OK (%d rules, policy %q)\n", args[1], len(p.Rules()), p.Name())
		return 0
	case "test":
		if len(args) != 3 {
			return usage()
		}
		p, err := policy.LoadFile(args[1])
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		data, err := os.ReadFile(args[2])
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		suite, err := policy.ParseTests(data)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", args[2], err)
			return 1
		}
		report := p.RunTests(suite)
		fmt.Fprint(stdout, report.String())
		if report.Failed() {
			return 1
		}
		return 0
	}
	return usage()
}
