// Command ahp-jsonrpc-bridge runs beside an agent harness and speaks both AHP dialects' JSON-RPC —
// Agent Hooks Protocol v0.1 and Agent Harness Protocol v2.4 — on stdio, HTTP, WebSocket and Unix
// sockets, answering from an upstream ahp-server or from the decision core embedded in-process.
//
//	ahp-jsonrpc-bridge                           stdio, persistent, embedded default policy
//	ahp-jsonrpc-bridge --once                    stdio, one message per process (per_event)
//	ahp-jsonrpc-bridge --http 127.0.0.1:8787     HTTP: POST /hooks and POST /ahp
//	ahp-jsonrpc-bridge --upstream http://127.0.0.1:8080 --failure-policy fail-closed
//	ahp-jsonrpc-bridge version
//
// This file only parses flags and wires the parts: framing lives in internal/transport, the
// dialects in internal/bridge, the decision core in internal/server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport"
	"github.com/ahp-gateway/ahp/internal/transport/httprpc"
	"github.com/ahp-gateway/ahp/internal/transport/unixsock"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise build info is used.
var version = ""

func main() {
	// A harness that closes our stdout must not kill us with SIGPIPE: the write fails with EPIPE,
	// which is logged, and the bridge exits on its own terms.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run is main with its environment injected, so the command is testable without real stdio.
// Exit codes: 0 done (in --once mode whatever the answer says), 1 failure while running, 2 bad
// usage.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 1 && args[0] == "version" {
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	if len(args) > 0 && args[0] == "hook" {
		return runHook(ctx, args[1:], stdin, stdout, stderr, getenv)
	}
	cfg, code := parseFlags(args, stderr, getenv)
	if cfg == nil {
		return code
	}
	log, err := newLogger(stderr, cfg.logLevel, cfg.logFormat)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-jsonrpc-bridge:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, stdin, stdout, log, getenv)
}

// config is the parsed and checked command line.
type config struct {
	stdio, once            bool
	httpAddr, wsAddr       string
	hooksPath, harnessPath string
	unixPath               string
	unixMode               os.FileMode
	dialect                bridge.Dialect
	upstreamConfig
	concurrency         int
	logLevel, logFormat string
	listeners           int // how many of --http, --ws, --unix are set
	configFile          string
	metricsAddr         string
	unixAllowUIDs       []uint32
}

const usageHead = `Usage: ahp-jsonrpc-bridge [flags]
       ahp-jsonrpc-bridge version

Serves JSON-RPC for both AHP protocols — Agent Hooks Protocol v0.1 (hooks/intercept, hooks/observe,
hooks/capabilities) and Agent Harness Protocol v2.4 (ahp/handshake, ahp/event, ahp/query,
ahp/batch) — and answers from an ahp-server (--upstream) or from the decision core running
in-process (embedded mode, the default: --policy FILE or the built-in default policy).

Transports (several may run at once; with none given, stdio):
  stdio      newline-delimited JSON on stdin/stdout until EOF; stdout carries protocol only
  --once     stdio per_event: one message in, at most one answer out, exit status 0
  --http     one object per POST: Hooks at --hooks-path, Harness at --harness-path
  --ws       one object per WebSocket text frame, any path, subprotocol "ahp"
  --unix     newline-delimited JSON on every connection of a Unix socket

Logs go to stderr only. Every flag can also be set with the environment variable shown.
SIGINT/SIGTERM stop accepting, finish the messages in flight and exit.

Flags:
`

func parseFlags(args []string, stderr io.Writer, getenv func(string) string) (*config, int) {
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("ahp-jsonrpc-bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageHead)
		fs.PrintDefaults()
	}
	// Every flag is declared as a string or bool defaulting to its environment variable, then
	// checked below, so that a bad environment value is reported like a bad flag.
	stdioFlag := fs.Bool("stdio", envBool(getenv, "AHP_BRIDGE_STDIO"), "serve stdio (persistent); the default when no --http, --ws or --unix is given (env AHP_BRIDGE_STDIO)")
	once := fs.Bool("once", envBool(getenv, "AHP_BRIDGE_ONCE"), "stdio per_event mode: read one message, write at most one answer, exit 0; no other transport (env AHP_BRIDGE_ONCE)")
	httpAddr := fs.String("http", getenv("AHP_BRIDGE_HTTP"), "serve HTTP on this `address`, e.g. 127.0.0.1:8787 (env AHP_BRIDGE_HTTP)")
	hooksPath := fs.String("hooks-path", env("AHP_BRIDGE_HOOKS_PATH", httprpc.DefaultHooksPath), "HTTP `path` for Agent Hooks Protocol POSTs (env AHP_BRIDGE_HOOKS_PATH)")
	harnessPath := fs.String("harness-path", env("AHP_BRIDGE_HARNESS_PATH", httprpc.DefaultHarnessPath), "HTTP `path` for Agent Harness Protocol POSTs; may equal -hooks-path (env AHP_BRIDGE_HARNESS_PATH)")
	wsAddr := fs.String("ws", getenv("AHP_BRIDGE_WS"), "serve WebSocket on this `address`, any path (env AHP_BRIDGE_WS)")
	unixPath := fs.String("unix", getenv("AHP_BRIDGE_UNIX"), "serve on a Unix socket at this `path`; a stale socket file there is replaced (env AHP_BRIDGE_UNIX)")
	unixAllow := fs.String("unix-allow-uid", getenv("AHP_BRIDGE_UNIX_ALLOW_UID"), "comma-separated user `ids` whose processes may use the Unix socket (checked with SO_PEERCRED on Linux); empty: whoever the socket's mode lets in (env AHP_BRIDGE_UNIX_ALLOW_UID)")
	unixMode := fs.String("unix-mode", env("AHP_BRIDGE_UNIX_MODE", fmt.Sprintf("%04o", unixsock.DefaultMode)), "file `mode` of the Unix socket, octal (env AHP_BRIDGE_UNIX_MODE)")
	dialect := fs.String("dialect", env("AHP_BRIDGE_DIALECT", "auto"), "which `dialect` to read messages as: auto (by method: hooks/* or ahp/*), hooks or harness (env AHP_BRIDGE_DIALECT)")
	upstream := fs.String("upstream", getenv("AHP_BRIDGE_UPSTREAM"), "ahp-server `URL`, http:// (h2c) or https://; empty runs the decision core in-process (env AHP_BRIDGE_UPSTREAM)")
	tokenEnv := fs.String("upstream-token-env", getenv("AHP_BRIDGE_UPSTREAM_TOKEN_ENV"), "`name` of the environment variable holding a bearer token for the upstream (env AHP_BRIDGE_UPSTREAM_TOKEN_ENV)")
	unary := fs.Bool("upstream-unary", envBool(getenv, "AHP_BRIDGE_UPSTREAM_UNARY"), "make every upstream Intercept a unary call instead of a message on one shared InterceptStream, for proxies that mishandle long-lived HTTP/2 streams (env AHP_BRIDGE_UPSTREAM_UNARY)")
	protocol := fs.String("upstream-protocol", env("AHP_BRIDGE_UPSTREAM_PROTOCOL", "connect"), "RPC `protocol` to the upstream: connect or grpc (env AHP_BRIDGE_UPSTREAM_PROTOCOL)")
	timeoutMs := fs.String("timeout-ms", env("AHP_BRIDGE_TIMEOUT_MS", "2000"), "deadline of each upstream call in `milliseconds`, 100-30000, covering connect, send, evaluation and reading (env AHP_BRIDGE_TIMEOUT_MS)")
	failurePolicy := fs.String("failure-policy", getenv("AHP_BRIDGE_FAILURE_POLICY"), "failure `policy` when the upstream cannot decide: fail-open or fail-closed; required with -upstream, fail-closed in embedded mode (env AHP_BRIDGE_FAILURE_POLICY)")
	policyFile := fs.String("policy", getenv("AHP_BRIDGE_POLICY"), "embedded mode: policy YAML `file`; empty uses the built-in default policy (env AHP_BRIDGE_POLICY)")
	policyPoll := fs.String("policy-poll", env("AHP_BRIDGE_POLICY_POLL", "1s"), "embedded mode: `interval` at which the policy file is checked for changes; 0 disables (never polled with -once) (env AHP_BRIDGE_POLICY_POLL)")
	maxBytes := fs.String("max-message-bytes", env("AHP_BRIDGE_MAX_MESSAGE_BYTES", strconv.Itoa(transport.DefaultMaxMessageBytes)), "size limit of one message in `bytes`; a longer one is refused, the connection survives (env AHP_BRIDGE_MAX_MESSAGE_BYTES)")
	concurrency := fs.String("concurrency", env("AHP_BRIDGE_CONCURRENCY", "1"), "`number` of messages handled at once per stdio stream, Unix or WebSocket connection; 1 keeps answers in order (env AHP_BRIDGE_CONCURRENCY)")
	shutdown := fs.String("shutdown-timeout", env("AHP_BRIDGE_SHUTDOWN_TIMEOUT", transport.DefaultShutdownTimeout.String()), "`duration` a stop waits for the messages in flight (env AHP_BRIDGE_SHUTDOWN_TIMEOUT)")
	logLevel := fs.String("log-level", getenv("AHP_BRIDGE_LOG_LEVEL"), "log `level`: debug, info, warn or error; default info, warn with -once (env AHP_BRIDGE_LOG_LEVEL)")
	logFormat := fs.String("log-format", env("AHP_BRIDGE_LOG_FORMAT", "text"), "log `format` on stderr: text or json (env AHP_BRIDGE_LOG_FORMAT)")
	configFile := fs.String("config", getenv("AHP_BRIDGE_CONFIG"), "YAML `file` whose auth section lists the credentials HTTP and WebSocket clients must present (docs/auth.md) (env AHP_BRIDGE_CONFIG)")
	metricsAddr := fs.String("metrics-addr", getenv("AHP_BRIDGE_METRICS_ADDR"), "serve Prometheus GET /metrics (fail-open/fail-closed counts) on this `address`; empty: off (env AHP_BRIDGE_METRICS_ADDR)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	fail := func(format string, a ...any) (*config, int) {
		fmt.Fprintf(stderr, "ahp-jsonrpc-bridge: "+format+"\n", a...)
		return nil, 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q (see -help)", fs.Arg(0))
	}

	cfg := &config{
		stdio: *stdioFlag, once: *once,
		httpAddr: *httpAddr, wsAddr: *wsAddr, unixPath: *unixPath,
		hooksPath: *hooksPath, harnessPath: *harnessPath,
		logLevel: *logLevel, logFormat: *logFormat,
		configFile: *configFile, metricsAddr: *metricsAddr,
	}
	for _, field := range strings.FieldsFunc(*unixAllow, func(r rune) bool { return r == ',' || r == ' ' }) {
		uid, err := strconv.ParseUint(field, 10, 32)
		if err != nil {
			fmt.Fprintf(stderr, "ahp-jsonrpc-bridge: -unix-allow-uid: %q is not a user id\n", field)
			return nil, 2
		}
		cfg.unixAllowUIDs = append(cfg.unixAllowUIDs, uint32(uid))
	}
	for _, set := range []string{cfg.httpAddr, cfg.wsAddr, cfg.unixPath} {
		if set != "" {
			cfg.listeners++
		}
	}
	if cfg.once && (cfg.listeners > 0 || cfg.stdio) {
		return fail("-once is stdio per_event mode on its own; it cannot be combined with -stdio, -http, -ws or -unix")
	}
	if cfg.listeners == 0 && !cfg.once {
		cfg.stdio = true
	}
	for _, p := range []struct{ flag, path string }{{"-hooks-path", cfg.hooksPath}, {"-harness-path", cfg.harnessPath}} {
		if !strings.HasPrefix(p.path, "/") {
			return fail("%s must start with /, got %q", p.flag, p.path)
		}
	}
	mode, err := strconv.ParseUint(*unixMode, 8, 32)
	if err != nil || mode > 0o777 {
		return fail("-unix-mode: want an octal permission such as 0600, got %q", *unixMode)
	}
	cfg.unixMode = os.FileMode(mode)
	if cfg.dialect, err = bridge.ParseDialect(*dialect); err != nil {
		return fail("-dialect: want auto, hooks or harness, got %q", *dialect)
	}
	if cfg.upstreamConfig, err = parseUpstream(upstreamFlags{
		upstream: *upstream, tokenEnv: *tokenEnv, protocol: *protocol, timeoutMs: *timeoutMs,
		failurePolicy: *failurePolicy, policyFile: *policyFile, policyPoll: *policyPoll,
		maxBytes: *maxBytes, shutdown: *shutdown,
	}); err != nil {
		return fail("%v", err)
	}
	cfg.unaryOnly = *unary
	if cfg.concurrency, err = strconv.Atoi(*concurrency); err != nil || cfg.concurrency < 1 || cfg.concurrency > 1024 {
		return fail("-concurrency: want a number from 1 to 1024, got %q", *concurrency)
	}
	if cfg.logLevel == "" {
		cfg.logLevel = "info"
		if cfg.once {
			// One process per event: an info line each time would drown the harness's stderr.
			cfg.logLevel = "warn"
		}
	}
	return cfg, 0
}

// envBool reads a boolean environment variable; anything unparsable counts as unset.
func envBool(getenv func(string) string, key string) bool {
	b, err := strconv.ParseBool(getenv(key))
	return err == nil && b
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
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

// newBridge builds the Handler: clients for the upstream, or an in-process ahp-server.
func newBridge(cfg *config, log *slog.Logger, getenv func(string) string, onFailure func(bridge.FailureEvent)) (*bridge.Bridge, io.Closer, error) {
	clients, closer, err := cfg.clients(log, getenv, !cfg.once)
	if err != nil {
		return nil, nil, err
	}
	var hooksTransports []string
	if cfg.stdio || cfg.once {
		hooksTransports = append(hooksTransports, "stdio")
	}
	if cfg.httpAddr != "" {
		hooksTransports = append(hooksTransports, "http")
	}
	b, err := bridge.New(bridge.Config{
		Clients:         clients,
		Dialect:         cfg.dialect,
		Timeout:         cfg.timeout,
		FailurePolicy:   cfg.failurePolicy,
		HooksTransports: hooksTransports,
		Version:         versionString(),
		Logger:          log,
		OnFailure:       onFailure,
	})
	if err != nil {
		_ = closer.Close()
		return nil, nil, err
	}
	return b, closer, nil
}
