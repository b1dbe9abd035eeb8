// Command ahp-jsonrpc-bridge runs beside an agent harness and speaks both AHP dialects' JSON-RPC —
// Agent Hooks Protocol v0.1 and Agent Harness Protocol v2.4 — on stdio, HTTP, WebSocket and Unix
// sockets, answering from an upstream ahp-server or from the decision core embedded in-process.
//
//	ahp-jsonrpc-bridge                           stdio, persistent, embedded default policy
//	ahp-jsonrpc-bridge --once                    stdio, one message per process (per_event)
//	ahp-jsonrpc-bridge --http 127.0.0.1:8787     HTTP: POST /hooks and POST /ahp
//	ahp-jsonrpc-bridge --upstream http://127.0.0.1:8080 --failure-policy fail-closed
//	ahp-jsonrpc-bridge version
//	ahp-jsonrpc-bridge mcp-proxy -- COMMAND ARGS…   the MCP gateway (mcpproxy.go)
//
// This file only parses flags and wires the parts: framing lives in internal/transport, the
// dialects in internal/bridge, the decision core in internal/server.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/contentstore"
	"github.com/ahp-gateway/ahp/internal/transport"
	"github.com/ahp-gateway/ahp/internal/transport/hostcheck"
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
		fmt.Fprintln(stdout, cli.Version(version))
		return 0
	}
	if len(args) > 0 && args[0] == "hook" {
		return runHook(ctx, args[1:], stdin, stdout, stderr, getenv)
	}
	if len(args) > 0 && args[0] == "mcp-proxy" {
		return runMCPProxy(ctx, args[1:], stdin, stdout, stderr, getenv)
	}
	cfg, code := parseFlags(args, stderr, getenv)
	if cfg == nil {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, stdin, stdout, cfg.log, getenv)
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
	log                 *slog.Logger // built from logLevel and logFormat
	listeners           int          // how many of --http, --ws, --unix are set
	configFile          string
	clientAuth          bool // the listeners demand credentials (set once the auth section is loaded)
	uploadPath          string
	uploadLimits        contentstore.Limits
	uploadStore         *contentstore.Store // shared by the HTTP upload handler and the bridge; nil: binding off
	metricsAddr         string
	unixAllowUIDs       []uint32
	guard               hostcheck.Config
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
	fs := cli.NewFlags("ahp-jsonrpc-bridge", stderr, getenv, usageHead)
	// Flags whose values need checking beyond their type are strings, checked below, so that a bad
	// value reads the same from the command line and from the environment.
	stdioFlag := fs.Bool("stdio", false, "serve stdio (persistent); the default when no --http, --ws or --unix is given", "AHP_BRIDGE_STDIO")
	once := fs.Bool("once", false, "stdio per_event mode: read one message, write at most one answer, exit 0; no other transport", "AHP_BRIDGE_ONCE")
	httpAddr := fs.String("http", "", "serve HTTP on this `address`, e.g. 127.0.0.1:8787", "AHP_BRIDGE_HTTP")
	hooksPath := fs.String("hooks-path", httprpc.DefaultHooksPath, "HTTP `path` for Agent Hooks Protocol POSTs", "AHP_BRIDGE_HOOKS_PATH")
	harnessPath := fs.String("harness-path", httprpc.DefaultHarnessPath, "HTTP `path` for Agent Harness Protocol POSTs; may equal -hooks-path", "AHP_BRIDGE_HARNESS_PATH")
	wsAddr := fs.String("ws", "", "serve WebSocket on this `address`, any path", "AHP_BRIDGE_WS")
	unixPath := fs.String("unix", "", "serve on a Unix socket at this `path`; a stale socket file there is replaced; a path starting with @ is a Linux abstract socket and needs -unix-allow-uid", "AHP_BRIDGE_UNIX")
	unixAllow := fs.String("unix-allow-uid", "", "comma-separated user `ids` whose processes may use the Unix socket (checked with SO_PEERCRED on Linux); empty: whoever the socket's mode lets in", "AHP_BRIDGE_UNIX_ALLOW_UID")
	unixMode := fs.String("unix-mode", fmt.Sprintf("%04o", unixsock.DefaultMode), "file `mode` of the Unix socket, octal", "AHP_BRIDGE_UNIX_MODE")
	dialect := fs.String("dialect", "auto", "which `dialect` to read messages as: auto (by method: hooks/* or ahp/*), hooks or harness", "AHP_BRIDGE_DIALECT")
	unary := fs.Bool("upstream-unary", false, "make every upstream Intercept a unary call instead of a message on one shared InterceptStream, for proxies that mishandle long-lived HTTP/2 streams", "AHP_BRIDGE_UPSTREAM_UNARY")
	upstream := defineUpstream(fs, upstreamUsage{
		timeoutMs:       "deadline of each upstream call in `milliseconds`, 100-30000, covering connect, send, evaluation and reading",
		failurePolicy:   "failure `policy` when the upstream cannot decide: fail-open or fail-closed; required with -upstream, fail-closed in embedded mode",
		policyPoll:      "embedded mode: `interval` at which the policy file is checked for changes; 0 disables (never polled with -once)",
		maxBytes:        "size limit of one message in `bytes`; a longer one is refused, the connection survives",
		maxBytesDefault: transport.DefaultMaxMessageBytes,
		shutdown:        "`duration` a stop waits for the messages in flight",
	})
	concurrency := fs.String("concurrency", "1", "`number` of messages handled at once per stdio stream, Unix or WebSocket connection; 1 keeps answers in order", "AHP_BRIDGE_CONCURRENCY")
	logLevel := fs.String("log-level", "", "log `level`: debug, info, warn or error; default info, warn with -once", "AHP_BRIDGE_LOG_LEVEL")
	logFormat := fs.String("log-format", "text", "log `format` on stderr: text or json", "AHP_BRIDGE_LOG_FORMAT")
	configFile := fs.String("config", "", "YAML `file` whose auth section lists the credentials HTTP and WebSocket clients must present (docs/auth.md)", "AHP_BRIDGE_CONFIG")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus GET /metrics (fail-open/fail-closed counts) on this `address`; empty: off", "AHP_BRIDGE_METRICS_ADDR")
	uploads := defineUpload(fs)
	guard := defineGuard(fs)
	if status, ok := fs.Parse(args); !ok {
		return nil, status
	}
	if fs.NArg() > 0 {
		return nil, fs.Failf("unexpected argument %q (see -help)", fs.Arg(0))
	}

	cfg := &config{
		stdio: *stdioFlag, once: *once,
		httpAddr: *httpAddr, wsAddr: *wsAddr, unixPath: *unixPath,
		hooksPath: *hooksPath, harnessPath: *harnessPath,
		logLevel: *logLevel, logFormat: *logFormat,
		configFile: *configFile, metricsAddr: *metricsAddr,
		guard: guard(),
	}
	for _, field := range strings.FieldsFunc(*unixAllow, func(r rune) bool { return r == ',' || r == ' ' }) {
		uid, err := strconv.ParseUint(field, 10, 32)
		if err != nil {
			return nil, fs.Fail(cli.BadValue("unix-allow-uid", "-unix-allow-uid: %q is not a user id", field))
		}
		cfg.unixAllowUIDs = append(cfg.unixAllowUIDs, uint32(uid))
	}
	if unixsock.IsAbstract(cfg.unixPath) && len(cfg.unixAllowUIDs) == 0 {
		// An abstract socket has no file and so no mode: every local user could connect.
		return nil, fs.Fail(cli.BadValue("unix", "-unix %q is an abstract socket, which any local user can connect to; give -unix-allow-uid with the user ids that may", cfg.unixPath))
	}
	for _, set := range []string{cfg.httpAddr, cfg.wsAddr, cfg.unixPath} {
		if set != "" {
			cfg.listeners++
		}
	}
	if cfg.once && (cfg.listeners > 0 || cfg.stdio) {
		return nil, fs.Failf("-once is stdio per_event mode on its own; it cannot be combined with -stdio, -http, -ws or -unix")
	}
	if cfg.listeners == 0 && !cfg.once {
		cfg.stdio = true
	}
	for _, p := range []struct{ flag, path string }{{"hooks-path", cfg.hooksPath}, {"harness-path", cfg.harnessPath}} {
		if !strings.HasPrefix(p.path, "/") {
			return nil, fs.Fail(cli.BadValue(p.flag, "-%s must start with /, got %q", p.flag, p.path))
		}
	}
	var err error
	if cfg.uploadPath, cfg.uploadLimits, err = parseUpload(uploads); err != nil {
		return nil, fs.Fail(err)
	}
	mode, err := strconv.ParseUint(*unixMode, 8, 32)
	if err != nil || mode > 0o777 {
		return nil, fs.Fail(cli.BadValue("unix-mode", "-unix-mode: want an octal permission such as 0600, got %q", *unixMode))
	}
	cfg.unixMode = os.FileMode(mode)
	if cfg.dialect, err = bridge.ParseDialect(*dialect); err != nil {
		return nil, fs.Fail(cli.BadValue("dialect", "-dialect: want auto, hooks or harness, got %q", *dialect))
	}
	if cfg.upstreamConfig, err = parseUpstream(upstream); err != nil {
		return nil, fs.Fail(err)
	}
	cfg.unaryOnly = *unary
	if cfg.concurrency, err = strconv.Atoi(*concurrency); err != nil || cfg.concurrency < 1 || cfg.concurrency > 1024 {
		return nil, fs.Fail(cli.BadValue("concurrency", "-concurrency: want a number from 1 to 1024, got %q", *concurrency))
	}
	if cfg.logLevel == "" {
		cfg.logLevel = "info"
		if cfg.once {
			// One process per event: an info line each time would drown the harness's stderr.
			cfg.logLevel = "warn"
		}
	}
	if cfg.log, err = cli.NewLogger(stderr, cfg.logLevel, cfg.logFormat); err != nil {
		return nil, fs.Fail(err)
	}
	return cfg, 0
}

// newBridge builds the Handler: clients for the upstream, or an in-process ahp-server.
func newBridge(cfg *config, log *slog.Logger, getenv func(string) string, onFailure func(bridge.FailureEvent)) (*bridge.Bridge, io.Closer, error) {
	clients, closer, err := cfg.clients(log, getenv, !cfg.once)
	if err != nil {
		return nil, nil, err
	}
	return buildBridge(cfg, log, clients, closer, onFailure)
}

// newFailingBridge is a bridge whose every call fails with why the backend could not start, so
// that each message meets the failure policy.
func newFailingBridge(cfg *config, log *slog.Logger, why error, onFailure func(bridge.FailureEvent)) (*bridge.Bridge, io.Closer, error) {
	hc := &http.Client{Transport: failingTransport{why}}
	const base = "http://backend.invalid"
	clients := bridge.Clients{
		Intercept:   ahpv1connect.NewInterceptServiceClient(hc, base),
		Typed:       ahpv1connect.NewTypedDecisionServiceClient(hc, base),
		Observation: ahpv1connect.NewObservationServiceClient(hc, base),
		Harness:     ahpv1connect.NewHarnessServiceClient(hc, base),
	}
	return buildBridge(cfg, log, clients, io.NopCloser(nil), onFailure)
}

// failingTransport fails every request with err.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("policy backend did not start: %w", f.err)
}

func buildBridge(cfg *config, log *slog.Logger, clients bridge.Clients, closer io.Closer, onFailure func(bridge.FailureEvent)) (*bridge.Bridge, io.Closer, error) {
	var hooksTransports []string
	if cfg.stdio || cfg.once {
		hooksTransports = append(hooksTransports, "stdio")
	}
	if cfg.httpAddr != "" {
		hooksTransports = append(hooksTransports, "http")
	}
	b, err := bridge.New(bridge.Config{
		Clients:             clients,
		Dialect:             cfg.dialect,
		Timeout:             cfg.timeout,
		ApprovalWait:        cfg.approvalWait,
		FailurePolicy:       cfg.failurePolicy,
		HooksTransports:     hooksTransports,
		HooksAuthentication: cfg.clientAuth,
		UploadMaxBytes:      uploadMaxBytes(cfg),
		Uploads:             uploadStore(cfg),
		Version:             cli.Version(version),
		Logger:              log,
		OnFailure:           onFailure,
	})
	if err != nil {
		_ = closer.Close()
		return nil, nil, err
	}
	return b, closer, nil
}
