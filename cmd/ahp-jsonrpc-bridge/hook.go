package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/ahp-gateway/ahp/internal/adapter"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/hookconfig"
	"github.com/ahp-gateway/ahp/internal/transport"
	"github.com/ahp-gateway/ahp/internal/transport/hostcheck"
	"github.com/ahp-gateway/ahp/internal/transport/httprpc"
)

// hookMemoryLimit is the heap size at which a per-event hook process collects garbage after all
// (collection is otherwise off for its short life).
const hookMemoryLimit = 256 << 20

// hookConfig is the parsed and checked command line of `hook`.
type hookConfig struct {
	provider adapter.Provider
	httpAddr string
	upstreamConfig
	includeNative bool
	event         string
	logLevel      string
	logFormat     string
	log           *slog.Logger // built from logLevel and logFormat
	configFile    string       // its auth section guards the HTTP form
	guard         hostcheck.Config
}

const hookUsageHead = `Usage: ahp-jsonrpc-bridge hook RUNTIME [flags]
       ahp-jsonrpc-bridge hook install|uninstall|doctor RUNTIME [flags]   (see hook install -help)

RUNTIME is claude-code, codex, cursor, gemini, copilot, factory, windsurf or cline.

Runs as a native hook of an agent runtime that speaks neither AHP protocol. Per event (the
default) it reads one hook input, the JSON the runtime writes on a command hook's stdin, asks the
policy — an ahp-server (--upstream) or the decision core running in this process (embedded mode,
the default: --policy FILE or the built-in default policy) — writes the runtime's own hook output
JSON on stdout and exits. With --http it serves the same over HTTP for Claude Code's "http" hook
type: POST the hook input to any path, the answer is the hook output.

Before-tool, prompt, permission and Claude Code/Codex session-start and stop events are decided
(tool.before, turn.start, tool.permission.request, session.start, turn.finish.before); after-tool,
session-end, compaction and notification events are recorded; any other hook event is not adapted (no output, exit 0).
docs/adapters.md has each runtime's table.

A policy denial, ask or input change is answered in the runtime's terms (Claude Code's
hookSpecificOutput.permissionDecision, Cursor's "permission", Gemini's "decision", Cline's
"cancel", Windsurf's exit status 2); what a runtime cannot express falls back (an ask becomes a
denial saying approval is required, unless the rule says otherwise). No policy opinion is no
output, which leaves the runtime's own permission flow in charge. When no decision can be had
(the backend is down, the deadline passes) --failure-policy answers: fail-closed denies with
"Required policy backend unavailable.", fail-open says nothing; both are labelled for the user in
systemMessage. See docs/adapters.md for settings snippets and the full mapping.

Exit status (per event):
  0  answered: the output, if any, is on stdout (a denial is an answer too, except for Windsurf)
  1  an event not recorded, an unreadable input under fail-open, or bad usage while the event on
     stdin is one that is only recorded: the runtime reports it and goes on (non-blocking)
  2  bad usage, or an input that cannot be read at all under fail-closed: the runtime's blocking
     error, with the reason on stderr; for Windsurf also a denial (its only way to block)

Logs go to stderr only. Every flag can also be set with the environment variable shown.

Flags:
`

func parseHookFlags(args []string, stderr io.Writer, getenv func(string) string) (*hookConfig, int) {
	fs := cli.NewFlags("ahp-jsonrpc-bridge hook", stderr, getenv, hookUsageHead)
	httpAddr := fs.String("http", "", "serve the HTTP form on this `address` (e.g. 127.0.0.1:8788) instead of answering one event from stdin", "AHP_BRIDGE_HOOK_HTTP")
	upstream := defineUpstream(fs, upstreamUsage{
		timeoutMs:       "deadline of each decision or record in `milliseconds`, 100-30000, connection setup included; keep the runtime's own hook timeout above it",
		failurePolicy:   "failure `policy` when no decision can be had: fail-open or fail-closed; required with -upstream, fail-closed in embedded mode",
		policyPoll:      "embedded mode with -http: `interval` at which the policy file is checked for changes; 0 disables (a per-event hook reads it once)",
		maxBytes:        "size limit of one hook input in `bytes`",
		maxBytesDefault: adapter.DefaultMaxInputBytes,
		shutdown:        "with -http: `duration` a stop waits for the requests in flight",
	})
	event := fs.String("event", "", "the hook `event` this command is registered for, for runtimes whose input does not name it (Copilot's camelCase events, e.g. preToolUse)", "AHP_BRIDGE_HOOK_EVENT")
	includeNative := fs.Bool("include-native", false, "also send the whole hook input as the event's native payload (native.provider, native.event_name, native.payload)", "AHP_BRIDGE_INCLUDE_NATIVE")
	logLevel := fs.String("log-level", "", "log `level`: debug, info, warn or error; default warn per event, info with -http", "AHP_BRIDGE_LOG_LEVEL")
	logFormat := fs.String("log-format", "text", "log `format` on stderr: text or json", "AHP_BRIDGE_LOG_FORMAT")
	configFile := fs.String("config", "", "with -http: YAML `file` whose auth section lists the credentials clients must present (docs/auth.md)", "AHP_BRIDGE_CONFIG")
	guard := defineGuard(fs)

	if len(args) == 0 {
		fs.Usage()
		return nil, fs.Failf("name the runtime: %s", adapter.ProviderList())
	}
	if a := args[0]; a == "-h" || a == "-help" || a == "--help" {
		fs.Usage()
		return nil, 0
	}
	provider, err := adapter.ParseProvider(args[0])
	if err != nil {
		return nil, fs.Failf("unknown runtime %q: want one of %s (see -help)", args[0], adapter.ProviderList())
	}
	if status, ok := fs.Parse(args[1:]); !ok {
		return nil, status
	}
	if fs.NArg() > 0 {
		return nil, fs.Failf("unexpected argument %q (see -help)", fs.Arg(0))
	}

	if *httpAddr != "" && !adapter.HasHTTPForm(provider) {
		return nil, fs.Failf("-http: %s has no http hooks; only claude-code and codex do", provider)
	}
	cfg := &hookConfig{
		provider: provider, httpAddr: *httpAddr, event: *event,
		includeNative: *includeNative, logLevel: *logLevel, logFormat: *logFormat,
		configFile: *configFile, guard: guard(),
	}
	if cfg.upstreamConfig, err = parseUpstream(upstream); err != nil {
		return nil, fs.Fail(err)
	}
	if cfg.logLevel == "" {
		// One process per event: an info line each time would fill the runtime's hook log.
		cfg.logLevel = "warn"
		if cfg.httpAddr != "" {
			cfg.logLevel = "info"
		}
	}
	if cfg.log, err = cli.NewLogger(stderr, cfg.logLevel, cfg.logFormat); err != nil {
		return nil, fs.Fail(err)
	}
	return cfg, 0
}

// runHook runs a native harness hook adapter (`ahp-jsonrpc-bridge hook claude-code|codex`): one
// event from stdin, or the HTTP form with -http.
func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "install", "uninstall", "doctor":
			return runHookSetup(ctx, args[0], args[1:], stdout, stderr, getenv)
		}
	}
	cfg, code := parseHookFlags(args, stderr, getenv)
	if cfg == nil {
		if code == 2 {
			return adapter.UsageExit(stdin)
		}
		return code
	}
	log := cfg.log
	if cfg.httpAddr != "" {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return serveHookHTTP(ctx, cfg, log, getenv)
	}
	return runHookOnce(ctx, cfg, stdin, stdout, stderr, log, getenv)
}

// runHookOnce answers one event. A backend that cannot be started (a policy file that does not
// load, an unset token variable) is not a usage error: the event meets the failure policy, so a
// fail-closed hook still refuses in the runtime's terms instead of failing in a way the runtime
// would shrug off.
func runHookOnce(ctx context.Context, cfg *hookConfig, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger, getenv func(string) string) int {
	// One event, then exit: collecting garbage while the decision core starts would only delay the
	// answer. The memory limit still bounds the heap should the input be huge.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(hookMemoryLimit))

	clients, closer, startErr := cfg.clients(log, getenv, false)
	if startErr != nil {
		log.Error("cannot start the policy backend; every event meets the failure policy", "error", startErr)
	} else {
		defer closeBackend(log, closer)
	}
	a, err := cfg.adapter(clients, startErr, log, mcpConfig(cfg.provider, getenv))
	if err != nil {
		log.Error("cannot start the hook adapter", "error", err)
		return 1
	}
	return a.Run(ctx, stdin, stdout, stderr)
}

// adapter builds the hook adapter over clients; startErr is why there are none (see
// adapter.Config); mcp is what the runtime's MCP configuration says (hookconfig.MCP).
func (cfg *hookConfig) adapter(clients bridge.Clients, startErr error, log *slog.Logger, mcp adapter.MCPConfig) (*adapter.Adapter, error) {
	return adapter.New(adapter.Config{
		Provider:      cfg.provider,
		Clients:       clients,
		StartErr:      startErr,
		Timeout:       cfg.timeout,
		ApprovalWait:  cfg.approvalWait,
		FailurePolicy: cfg.failurePolicy,
		IncludeNative: cfg.includeNative,
		Event:         cfg.event,
		MCP:           mcp,
		MaxInputBytes: cfg.maxMessageBytes,
		Logger:        log,
	})
}

// mcpConfig reads the runtime's MCP server names from its configuration, the project's being the
// working directory's.
func mcpConfig(p adapter.Provider, getenv func(string) string) adapter.MCPConfig {
	dir, _ := os.Getwd()
	return hookconfig.MCP(p, getenv, dir)
}

// serveHookHTTP serves the HTTP form until ctx is done. Unlike a per-event hook, a server whose
// backend does not start refuses to start, so the operator sees it at once.
func serveHookHTTP(ctx context.Context, cfg *hookConfig, log *slog.Logger, getenv func(string) string) int {
	authn, err := loadHookAuth(cfg.configFile, log, getenv)
	if err != nil {
		log.Error("cannot load -config", "error", err)
		return 1
	}
	clients, closer, err := cfg.clients(log, getenv, true)
	if err != nil {
		log.Error("cannot start the policy backend", "error", err)
		return 1
	}
	defer closeBackend(log, closer)
	a, err := cfg.adapter(clients, nil, log, mcpConfig(cfg.provider, getenv))
	if err != nil {
		log.Error("cannot start the hook adapter", "error", err)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		log.Error("cannot listen for HTTP", "error", err)
		return 1
	}
	mode := "embedded"
	if cfg.upstream != "" {
		mode = "upstream"
	}
	log.Info("listening", "transport", "http", "addr", ln.Addr().String(), "mode", mode, "failure_policy", cfg.failurePolicy.String())
	// Without an auth section in -config, like the bridge, the hook authenticates nobody: on a
	// routable address anyone who reaches it can ask for decisions.
	var h http.Handler = a
	if authn != nil {
		h = authn.Require(auth.ScopeAgent, h)
	} else if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		log.Warn("listening on a non-loopback address without authentication", "addr", ln.Addr().String())
	}
	h = guarded(h, ln.Addr(), cfg.guard, log)
	if err := transport.ServeHTTP(ctx, httprpc.NewServerWaiting(h, log, cfg.approvalWait), ln, cfg.shutdownTimeout); err != nil {
		log.Error("HTTP server stopped", "error", err)
		return 1
	}
	log.Info("stopped")
	return 0
}
