package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/mcpproxy"
	"github.com/ahp-gateway/ahp/internal/transport"
)

// mcpProxyConfig is the parsed and checked command line of `mcp-proxy`.
type mcpProxyConfig struct {
	command    []string
	listen     string // with target: the Streamable HTTP form
	target     string
	serverName string
	upstreamConfig
	maxOutputBytes int
	log            *slog.Logger
}

const mcpProxyUsageHead = `Usage: ahp-jsonrpc-bridge mcp-proxy [flags] -- COMMAND [ARGS...]
       ahp-jsonrpc-bridge mcp-proxy --listen ADDR --target URL [flags]

The MCP gateway. An MCP client (Claude Code, Cursor, VS Code, any client of the Model Context
Protocol) launches this command instead of an MCP server; it launches the real server, COMMAND
ARGS..., and relays the MCP session on stdio both ways. Every tools/call is first decided by the
policy — an ahp-server (--upstream) or the decision core running in this process (embedded mode,
the default: --policy FILE or the built-in default policy) — as a canonical tool.before event of
tool kind mcp, named mcp__SERVER__TOOL, with the arguments as input:

  deny          the client gets a tool result with isError and the policy's reason; the server
                never sees the call
  modify        the server receives the rewritten arguments
  ask, escalate with an approval: block (docs/approvals.md): with --upstream and
                --approval-wait, the ahp-server holds the call until a person decides;
                approved, it goes to the server (with the approver's note), denied or timed
                out, the client gets the tool error result with the reason. Without
                --approval-wait (and always in embedded mode, where no one can decide) the
                answer is a denial naming the approval to decide, and a retry once it is
                approved goes through. Keep the MCP client's tool-call timeout above
                --approval-wait
  ask, defer    otherwise not expressible mid-call: the policy's per-rule fallback (by default
                a denial saying approval is required)
  message       an extra text item of the tool's result
  allow, none   forwarded unchanged

The server's answers are recorded as tool.after (tool.error) observations. Everything else —
initialize or server/discover, tools/list, resources, prompts, notifications, progress,
cancellation, the server's own requests — passes through untouched. When no decision can be had,
--failure-policy answers: fail-closed refuses the call, fail-open forwards it.

With --listen and --target the same is done for an MCP server reached over the Streamable HTTP
transport: clients connect to ADDR, every request goes on to URL, and POSTs carrying a tools/call
are decided first. Headers, sessions and event streams pass through.

On stdio, stdout carries the MCP session only; logs and the server's stderr go to stderr. The exit status
is 0 when the client ended the session, 1 when the server went away or could not start, 2 for
bad usage. See docs/mcp.md. Every flag can also be set with the environment variable
shown.

Flags:
`

func parseMCPProxyFlags(args []string, stderr io.Writer, getenv func(string) string) (*mcpProxyConfig, int) {
	fs := cli.NewFlags("ahp-jsonrpc-bridge mcp-proxy", stderr, getenv, mcpProxyUsageHead)
	serverName := fs.String("server-name", "", "MCP server `name` in events (tool.mcp.server, tool.name mcp__NAME__TOOL); empty: the name the server gives itself in its handshake. Set it to the name the client knows the server by, so that policies can rely on it", "AHP_MCP_SERVER_NAME")
	upstream := defineUpstream(fs, upstreamUsage{
		timeoutMs:       "deadline of each decision in `milliseconds`, 100-30000, connection setup included",
		failurePolicy:   "failure `policy` when no decision can be had: fail-open or fail-closed; required with -upstream, fail-closed in embedded mode",
		policyPoll:      "embedded mode: `interval` at which the policy file is checked for changes; 0 disables",
		maxBytes:        "size limit of one MCP message in either direction in `bytes`; a longer one is refused and the session goes on",
		maxBytesDefault: mcpproxy.DefaultMaxMessageBytes,
		shutdown:        "`duration` a stop waits: for the launched MCP server to exit once its stdin is closed, before SIGTERM (and again before SIGKILL); with -listen, for the requests in flight",
	})
	listen := fs.String("listen", "", "serve MCP's Streamable HTTP transport on this `address` (e.g. 127.0.0.1:8790) for a server at -target, instead of launching COMMAND", "AHP_MCP_LISTEN")
	target := fs.String("target", "", "with -listen: the MCP server's Streamable HTTP endpoint `URL` (http:// or https://)", "AHP_MCP_TARGET")
	maxOutput := fs.String("max-output-bytes", strconv.Itoa(mcpproxy.DefaultMaxOutputBytes), "size limit in `bytes` of a tool result carried by its tool.after observation; a longer one is recorded by its size only", "AHP_MCP_MAX_OUTPUT_BYTES")
	logLevel := fs.String("log-level", "info", "log `level`: debug, info, warn or error", "AHP_BRIDGE_LOG_LEVEL")
	logFormat := fs.String("log-format", "text", "log `format` on stderr: text or json", "AHP_BRIDGE_LOG_FORMAT")

	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fs.Usage()
		return nil, 0
	}
	if status, ok := fs.Parse(args); !ok {
		return nil, status
	}
	cfg := &mcpProxyConfig{command: fs.Args(), serverName: *serverName, listen: *listen, target: *target}
	switch {
	case (cfg.listen == "") != (cfg.target == ""):
		return nil, fs.Failf("-listen and -target go together: the address to serve and the MCP server's URL")
	case cfg.listen != "" && len(cfg.command) > 0:
		return nil, fs.Failf("give either -listen/-target (an HTTP MCP server) or a COMMAND after -- (a stdio one), not both")
	case cfg.listen == "" && len(cfg.command) == 0:
		return nil, fs.Failf("name the MCP server to launch after --, e.g. mcp-proxy -- npx -y @modelcontextprotocol/server-filesystem /tmp")
	}
	if len(cfg.serverName) > 256 {
		return nil, fs.Fail(cli.BadValue("server-name", "-server-name: at most 256 bytes"))
	}
	var err error
	if cfg.upstreamConfig, err = parseUpstream(upstream); err != nil {
		return nil, fs.Fail(err)
	}
	if cfg.maxOutputBytes, err = strconv.Atoi(*maxOutput); err != nil || cfg.maxOutputBytes < 1024 || cfg.maxOutputBytes > 64<<20 {
		return nil, fs.Fail(cli.BadValue("max-output-bytes", "-max-output-bytes: want a number of bytes from 1024 to 67108864, got %q", *maxOutput))
	}
	if cfg.log, err = cli.NewLogger(stderr, *logLevel, *logFormat); err != nil {
		return nil, fs.Fail(err)
	}
	return cfg, 0
}

// runMCPProxy runs `ahp-jsonrpc-bridge mcp-proxy`: one MCP session on stdin/stdout, relayed to
// the server it launches. A policy backend that cannot start does not stop the session: every
// tool call meets the failure policy, as when the backend is down, so that a fail-closed gateway
// refuses in terms the model can read.
func runMCPProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, code := parseMCPProxyFlags(args, stderr, getenv)
	if cfg == nil {
		return code
	}
	log := cfg.log
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.listen != "" {
		return serveMCPProxyHTTP(ctx, cfg, log, getenv)
	}

	// The server starts first, so that its start-up (npx, uvx, a JVM) overlaps the decision
	// core's, and garbage collection waits until both are up: this is the client's wait for its
	// first answer.
	gc := debug.SetGCPercent(-1)
	cmd := exec.Command(cfg.command[0], cfg.command[1:]...)
	cmd.Stderr = stderr
	server, err := mcpproxy.StartProcess(cmd, cfg.maxMessageBytes, cfg.shutdownTimeout)
	if err != nil {
		debug.SetGCPercent(gc)
		log.Error("cannot start the MCP server", "error", err)
		return 1
	}
	clients, closer, startErr := cfg.clients(log, getenv, true)
	if startErr != nil {
		log.Error("cannot start the policy backend; every tool call meets the failure policy", "error", startErr, "failure_policy", cfg.failurePolicy.String())
	} else {
		defer closeBackend(log, closer)
	}
	debug.SetGCPercent(gc)
	proxy, err := cfg.proxy(clients, startErr)
	if err != nil {
		log.Error("cannot start the MCP gateway", "error", err)
		_ = server.Close()
		return 1
	}
	mode := "embedded"
	if cfg.upstream != "" {
		mode = "upstream"
	}
	log.Info("MCP gateway started", "server_pid", server.Pid(), "mode", mode, "failure_policy", cfg.failurePolicy.String())
	client := mcpproxy.NewStream(stdin, stdout, cfg.maxMessageBytes, nil)
	err = proxy.Serve(ctx, client, server)
	var exit *mcpproxy.ServerExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		log.Error("the MCP server went away; session ended", "error", err)
	default:
		log.Error("MCP session failed", "error", err)
	}
	return 1
}

// proxy builds the gateway over clients; startErr is why there are none (see mcpproxy.Config).
func (cfg *mcpProxyConfig) proxy(clients bridge.Clients, startErr error) (*mcpproxy.Proxy, error) {
	return mcpproxy.New(mcpproxy.Config{
		Clients: clients, StartErr: startErr,
		ServerName:      cfg.serverName,
		Timeout:         cfg.timeout,
		ApprovalWait:    cfg.heldCallWait(),
		FailurePolicy:   cfg.failurePolicy,
		MaxMessageBytes: cfg.maxMessageBytes,
		MaxOutputBytes:  cfg.maxOutputBytes,
		Logger:          cfg.log,
	})
}

// heldCallWait is how long a tools/call may wait for a person's approval: -approval-wait with an
// ahp-server, whose ApprovalService decides; nothing in embedded mode, where no one can decide
// and a held call could only expire (docs/approvals.md), so calls keep the -timeout-ms deadline
// and get the fallback denial naming the approval.
func (cfg *mcpProxyConfig) heldCallWait() time.Duration {
	if cfg.upstream == "" {
		if cfg.approvalWait > 0 {
			cfg.log.Warn("-approval-wait has no effect in embedded mode: no one can decide its approvals; use -upstream with an ahp-server", "approval_wait", cfg.approvalWait.String())
		}
		return 0
	}
	return cfg.approvalWait
}

// serveMCPProxyHTTP serves the Streamable HTTP form until ctx is done. Like the hook's HTTP form,
// a long-running server whose backend does not start refuses to start.
func serveMCPProxyHTTP(ctx context.Context, cfg *mcpProxyConfig, log *slog.Logger, getenv func(string) string) int {
	clients, closer, err := cfg.clients(log, getenv, true)
	if err != nil {
		log.Error("cannot start the policy backend", "error", err)
		return 1
	}
	defer closeBackend(log, closer)
	proxy, err := cfg.proxy(clients, nil)
	if err != nil {
		log.Error("cannot start the MCP gateway", "error", err)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		log.Error("cannot listen for HTTP", "error", err)
		return 1
	}
	loopback := false
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		loopback = tcp.IP.IsLoopback()
	}
	h, err := proxy.NewHTTP(cfg.target, mcpproxy.HTTPOptions{LoopbackHostsOnly: loopback})
	if err != nil {
		_ = ln.Close()
		log.Error("cannot start the MCP gateway", "error", err)
		return 1
	}
	defer h.Close()
	mode := "embedded"
	if cfg.upstream != "" {
		mode = "upstream"
	}
	log.Info("listening", "transport", "mcp-streamable-http", "addr", ln.Addr().String(), "mode", mode, "failure_policy", cfg.failurePolicy.String())
	if !loopback {
		// The gateway authenticates nobody itself; the client's Authorization header goes on to
		// the MCP server, which is where MCP puts authorization.
		log.Warn("listening on a non-loopback address: anyone who reaches it reaches the MCP server through it", "addr", ln.Addr().String())
	}
	if err := transport.ServeHTTP(ctx, mcpproxy.HTTPServer(h), ln, cfg.shutdownTimeout); err != nil {
		log.Error("HTTP server stopped", "error", err)
		return 1
	}
	log.Info("stopped")
	return 0
}
