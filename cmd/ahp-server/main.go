// Command ahp-server is the AHP decision point: it answers Agent Hooks Protocol and Agent Harness
// Protocol interceptions from a declarative CEL policy over Connect, gRPC and gRPC-Web.
//
//	ahp-server [flags]                       serve (default 127.0.0.1:8080, embedded default policy)
//	ahp-server policy check FILE             validate and compile a policy
//	ahp-server policy test FILE TESTS.yaml   run policy test cases
//	ahp-server audit verify FILE...          check an audit log's hash chain
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

	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/server/reflection"
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
		case "audit":
			if len(args) > 1 && args[1] == "verify" {
				return audit.VerifyCommand(args[2:], stdout, stderr)
			}
			fmt.Fprintln(stderr, "usage: ahp-server audit verify FILE...")
			return 2
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
       ahp-server audit verify FILE...
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
	tlsClientCA := fs.String("tls-client-ca", getenv("AHP_TLS_CLIENT_CA"), "with TLS, require client certificates signed by these CAs (mTLS); files are re-read when they change (env AHP_TLS_CLIENT_CA)")
	batchSize := fs.Int("batch-size", envInt(getenv, "AHP_BATCH_SIZE", 100), "maximum events per InterceptBatch / ahp/batch (env AHP_BATCH_SIZE)")
	maxDepth := fs.Int("max-depth", envInt(getenv, "AHP_MAX_DEPTH", 10), "maximum Harness event depth (env AHP_MAX_DEPTH)")
	timeoutMs := fs.Int("timeout-ms", envInt(getenv, "AHP_TIMEOUT_MS", 10000), "per-request timeout advertised to Harness clients in the handshake (env AHP_TIMEOUT_MS)")
	watchBuffer := fs.Int("watch-buffer", envInt(getenv, "AHP_WATCH_BUFFER", 1024), "items a Watch subscriber may fall behind before it is cut off (env AHP_WATCH_BUFFER)")
	logLevel := fs.String("log-level", envOr(getenv, "AHP_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env AHP_LOG_LEVEL)")
	logFormat := fs.String("log-format", envOr(getenv, "AHP_LOG_FORMAT", "text"), "log format on stderr: text or json (env AHP_LOG_FORMAT)")
	configFile := fs.String("config", getenv("AHP_CONFIG"), "YAML file for auth, audit, redaction, metrics and tracing (docs/security.md) (env AHP_CONFIG)")
	metricsAddr := fs.String("metrics-addr", getenv("AHP_METRICS_ADDR"), "serve Prometheus GET /metrics on this address, e.g. 127.0.0.1:9464; empty: off (env AHP_METRICS_ADDR)")
	auditOn := fs.Bool("audit", envBool(getenv, "AHP_AUDIT"), "write the tamper-evident audit log (default path under $XDG_STATE_HOME/ahp-server/audit) (env AHP_AUDIT)")
	auditPath := fs.String("audit-path", getenv("AHP_AUDIT_PATH"), "audit log file; implies -audit (env AHP_AUDIT_PATH)")
	auditRequired := fs.Bool("audit-required", envBool(getenv, "AHP_AUDIT_REQUIRED"), "fail closed when the audit log cannot be written; implies -audit (env AHP_AUDIT_REQUIRED)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 15*time.Second, "how long in-flight calls may take to finish on SIGTERM (env AHP_SHUTDOWN_TIMEOUT)")
	maxStream := fs.Duration("max-stream-duration", time.Hour, "streams (InterceptStream, ObserveStream, Watch) end after this long; clients reconnect; negative: no limit (env AHP_MAX_STREAM_DURATION)")
	streamRate := fs.Float64("stream-rate", 0, "messages per second read from one client stream (events for ObserveStream batches); faster clients are slowed down; 0: unlimited (env AHP_STREAM_RATE)")
	for key, d := range map[string]*time.Duration{"AHP_SHUTDOWN_TIMEOUT": shutdownTimeout, "AHP_MAX_STREAM_DURATION": maxStream} {
		if v := getenv(key); v != "" {
			if parsed, err := time.ParseDuration(v); err == nil {
				*d = parsed
			}
		}
	}
	if v, err := strconv.ParseFloat(getenv("AHP_STREAM_RATE"), 64); err == nil {
		*streamRate = v
	}
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
	ext, err := loadExtensions(ctx, extensionFlags{
		configFile: *configFile, metricsAddr: *metricsAddr,
		audit: *auditOn, auditPath: *auditPath, auditRequired: *auditRequired,
		version: versionString(),
	}, logger)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	defer ext.close()
	srv, err := server.New(server.Config{
		PolicyFile:         *policyFile,
		PolicyPollInterval: pollInterval,
		TLSCertFile:        *tlsCert,
		TLSKeyFile:         *tlsKey,
		TLSClientCAFile:    *tlsClientCA,
		Limits: core.HarnessLimits{
			TimeoutMs: uint64(*timeoutMs), BatchSize: uint64(*batchSize), MaxDepth: uint32(*maxDepth),
		},
		WatchBuffer:       *watchBuffer,
		MaxStreamDuration: *maxStream,
		StreamRate:        *streamRate,
		ShutdownTimeout:   *shutdownTimeout,
		Version:           versionString(),
		Logger:            logger,
		Auth:              ext.auth,
		Metrics:           ext.metrics,
		Tracing:           ext.tracing,
		Audit:             ext.audit,
		Redactor:          ext.redactor,
		Reflection:        reflection.Mount,
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
	if ext.auth == nil || !ext.auth.Enabled() {
		if warning := auth.CheckListenAddress(ln.Addr().String(), false); warning != "" {
			logger.Warn(warning, "addr", ln.Addr().String())
		}
	}
	scheme := "http"
	if *tlsCert != "" && *tlsKey != "" {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "ahp-server listening on %s://%s\n", scheme, ln.Addr())

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if ext.metricsLn != nil {
		go func() {
			if err := ext.metrics.Serve(ctx, ext.metricsLn); err != nil && ctx.Err() == nil {
				logger.Error("metrics listener stopped", "error", err)
			}
		}()
		logger.Info("metrics listening", "addr", ext.metricsLn.Addr().String())
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for range hup {
			if err := srv.ReloadPolicy(); err == nil {
				logger.Info("policy reloaded on SIGHUP")
			}
			if ext.auth != nil {
				if _, err := ext.auth.Reload(); err != nil {
					logger.Error("credential reload failed; the previous credentials stay in force", "error", err)
				}
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

func envBool(getenv func(string) string, key string) bool {
	v, err := strconv.ParseBool(getenv(key))
	return err == nil && v
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
