// Command ahp-server is the AHP decision point: it answers Agent Hooks Protocol and Agent Harness
// Protocol interceptions from a declarative CEL policy over Connect, gRPC and gRPC-Web.
//
//	ahp-server [flags]                       serve (default 127.0.0.1:8080, embedded default policy)
//	ahp-server policy check FILE             validate and compile a policy
//	ahp-server policy test FILE TESTS.yaml   run policy test cases
//	ahp-server policy push [-nats URL] FILE  check a policy and distribute it to a cluster
//	ahp-server audit verify FILE...          check an audit log's hash chain
//	ahp-server approvals list|show|approve|deny   decide approvals on a running server
//	ahp-server audit export -dir DIR         write the cluster's audit stream to files, verified
//	ahp-server version                       print the version
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/approvalcmd"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/console"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/memlimit"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/server/reflection"
	"github.com/ahp-gateway/ahp/internal/transport/hostcheck"
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
			if len(args) > 1 && args[1] == "push" {
				return runPolicyPush(ctx, args[2:], stdout, stderr, getenv)
			}
			return runPolicy(args[1:], stdout, stderr)
		case "version":
			fmt.Fprintln(stdout, cli.Version(version))
			return 0
		case "approvals":
			return approvalcmd.Run(ctx, args[1:], approvalcmd.Env{Stdout: stdout, Stderr: stderr, Getenv: getenv})
		case "audit":
			if len(args) > 1 && args[1] == "verify" {
				return audit.VerifyCommand(args[2:], stdout, stderr)
			}
			if len(args) > 1 && args[1] == "export" {
				return runAuditExport(ctx, args[2:], stdout, stderr, getenv)
			}
			fmt.Fprintln(stderr, "usage: ahp-server audit verify FILE... | ahp-server audit export [-nats URL] -dir DIR")
			return 2
		}
	}
	return serve(ctx, args, stdout, stderr, getenv)
}

const usageHead = `Usage: ahp-server [flags]
       ahp-server policy check FILE
       ahp-server policy test FILE TESTS.yaml
       ahp-server policy push [-nats URL] [-config FILE] FILE
       ahp-server audit verify FILE...
       ahp-server approvals list|show|approve|deny ...
       ahp-server audit export [-nats URL] [-config FILE] -dir DIR
       ahp-server version

Serves ahp.v1 InterceptService, TypedDecisionService, ObservationService, HarnessService and
ApprovalService over
Connect, gRPC and gRPC-Web (HTTP/1.1 and h2c, or TLS), with gRPC health and reflection.
Every flag can also be set with the environment variable shown.

Flags:
`

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-server", stderr, getenv, usageHead)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address", "AHP_ADDR")
	policyFile := fs.String("policy", "", "policy YAML file; empty uses the embedded default policy", "AHP_POLICY")
	poll := fs.Duration("policy-poll", time.Second, "how often the policy file is checked for changes; 0 disables hot reload", "AHP_POLICY_POLL")
	tlsCert := fs.String("tls-cert", "", "TLS certificate file; with -tls-key enables TLS", "AHP_TLS_CERT")
	tlsKey := fs.String("tls-key", "", "TLS private key file", "AHP_TLS_KEY")
	tlsClientCA := fs.String("tls-client-ca", "", "with TLS, require client certificates signed by these CAs (mTLS); files are re-read when they change", "AHP_TLS_CLIENT_CA")
	batchSize := fs.Int("batch-size", 100, "maximum events per InterceptBatch / ahp/batch", "AHP_BATCH_SIZE")
	maxDepth := fs.Int("max-depth", 10, "maximum Harness event depth", "AHP_MAX_DEPTH")
	timeoutMs := fs.Int("timeout-ms", 10000, "per-request timeout advertised to Harness clients in the handshake", "AHP_TIMEOUT_MS")
	watchBuffer := fs.Int("watch-buffer", 1024, "items a Watch subscriber may fall behind before it is cut off", "AHP_WATCH_BUFFER")
	watchBufferBytes := fs.Int("watch-buffer-bytes", 64<<20, "bytes of items a Watch subscriber may fall behind before it is cut off; negative: no byte limit", "AHP_WATCH_BUFFER_BYTES")
	watchWriteTimeout := fs.Duration("watch-write-timeout", 10*time.Second, "a Watch subscriber whose client takes longer to take one batch of items is cut off; negative: no limit", "AHP_WATCH_WRITE_TIMEOUT")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error", "AHP_LOG_LEVEL")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json", "AHP_LOG_FORMAT")
	configFile := fs.String("config", "", "YAML file for auth, audit, redaction, metrics and tracing (docs/security.md)", "AHP_CONFIG")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus GET /metrics on this address, e.g. 127.0.0.1:9464; empty: off", "AHP_METRICS_ADDR")
	auditOn := fs.Bool("audit", false, "write the tamper-evident audit log (default path under $XDG_STATE_HOME/ahp-server/audit)", "AHP_AUDIT")
	auditPath := fs.String("audit-path", "", "audit log file; implies -audit", "AHP_AUDIT_PATH")
	auditRequired := fs.Bool("audit-required", false, "answer only once the decision's audit record is written (and synced with fsync always); fail closed when it cannot be; implies -audit", "AHP_AUDIT_REQUIRED")
	allowedHosts := fs.String("allowed-hosts", "", "comma-separated Host names the server answers to (\"*\": any); default: loopback names when bound to loopback, else any", "AHP_ALLOWED_HOSTS")
	allowedOrigins := fs.String("allowed-origins", "", "comma-separated browser origins allowed to call (e.g. https://console.example.com; \"*\": any); default: only the server's own", "AHP_ALLOWED_ORIGINS")
	auditRequiredTimeout := fs.Duration("audit-required-timeout", 5*time.Second, "with -audit-required: how long a decision waits for its audit record before it fails closed", "AHP_AUDIT_REQUIRED_TIMEOUT")
	shutdownTimeout := fs.Duration("shutdown-timeout", 15*time.Second, "how long in-flight calls may take to finish on SIGTERM", "AHP_SHUTDOWN_TIMEOUT")
	maxStream := fs.Duration("max-stream-duration", time.Hour, "streams (InterceptStream, ObserveStream, Watch) end after this long; clients reconnect; negative: no limit", "AHP_MAX_STREAM_DURATION")
	streamRate := fs.Float64("stream-rate", 0, "messages per second read from one client stream (events for ObserveStream batches); faster clients are slowed down; 0: unlimited", "AHP_STREAM_RATE")
	bodyRead := fs.Duration("body-read-timeout", 30*time.Second, "a unary or server-streaming call must send its headers and body within this long; negative: no limit", "AHP_BODY_READ_TIMEOUT")
	idle := fs.Duration("idle-timeout", 30*time.Second, "connections without calls in flight (an HTTP/2 connection that never starts a stream included) close after this long", "AHP_IDLE_TIMEOUT")
	maxConns := fs.Int("max-connections", 8192, "connections open at once; more are closed at accept; negative: no cap", "AHP_MAX_CONNECTIONS")
	approvalURL := fs.String("approval-url", "", "where people decide approvals, with {id} for the approval id (e.g. a console page); named in answers to agents that cannot wait; default: the ahp-server approvals command", "AHP_APPROVAL_URL")
	maxPending := fs.Int("approvals-max-pending", 1000, "pending approvals at once; more are denied at once", "AHP_APPROVALS_MAX_PENDING")
	maxPendingAgent := fs.Int("approvals-max-pending-per-agent", 100, "pending approvals of one agent at once", "AHP_APPROVALS_MAX_PENDING_PER_AGENT")
	maxHeld := fs.Int("approvals-max-held", 4096, "calls held waiting for a decision at once; more are answered at once with the approval id", "AHP_APPROVALS_MAX_HELD")
	natsURLs := fs.String("nats", "", "cluster mode: NATS server URLs, comma-separated; replicas share idempotency, sessions, Watch and policy through JetStream (docs/cluster.md)", "AHP_NATS_URL")
	clusterReady := fs.Bool("cluster-ready-required", false, "in cluster mode, health reports NOT_SERVING while NATS is unreachable", "AHP_CLUSTER_READY_REQUIRED")
	maxConnsPerAddr := fs.Int("max-connections-per-address", 2048, "connections open at once from one client IP address; negative: no cap", "AHP_MAX_CONNECTIONS_PER_ADDRESS")
	memLimit := fs.String("memory-limit", "auto", "soft memory limit of the Go runtime: auto (90 % of the container's cgroup memory limit, unless GOMEMLIMIT is set), off, or a size such as 460MiB (docs/deployment.md)", "AHP_MEMORY_LIMIT")
	ui := fs.Bool("ui", true, "serve the web console at /ui/ (needs a token with the watch scope; without credentials only on loopback)", "AHP_UI")
	uiHosts := fs.String("ui-allowed-hosts", "", "comma-separated host names a browser may reach the console and the API by, besides IP addresses and localhost (e.g. ahp.example.com; .example.com for subdomains)", "AHP_UI_ALLOWED_HOSTS")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		status := fs.Failf("unexpected argument %q", fs.Arg(0))
		fs.Usage()
		return status
	}
	logger, err := cli.NewLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return fs.Fail(err)
	}
	mem, err := memlimit.Decide(*memLimit, getenv, "/", memlimit.DefaultRatio)
	if err != nil {
		return fs.Fail(cli.BadValue("memory-limit", "-memory-limit: %v", err))
	}
	mem.Apply()
	logger.Info("memory limit", "bytes", mem.Limit, "source", mem.Source)
	if *batchSize < 1 || *maxDepth < 1 || *timeoutMs < 1 {
		return fs.Failf("-batch-size, -max-depth and -timeout-ms must be positive")
	}
	pollInterval := *poll
	if pollInterval == 0 {
		pollInterval = -1 // server.Config: negative disables
	}
	ext, err := loadExtensions(ctx, extensionFlags{
		configFile: *configFile, metricsAddr: *metricsAddr,
		audit: *auditOn, auditPath: *auditPath, auditRequired: *auditRequired, auditRequiredTimeout: *auditRequiredTimeout,
		version: cli.Version(version), approvalURL: *approvalURL,
	}, logger)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	defer ext.close()
	approvalOpts := approval.MemoryOptions{MaxPending: *maxPending, MaxPendingPerAgent: *maxPendingAgent}
	shared, err := openCluster(ctx, ext, cluster.ParseServers(*natsURLs), approvalOpts, logger)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	defer shared.close()
	if shared == nil && *clusterReady {
		return fs.Fail(clusterFlagError("-cluster-ready-required"))
	}
	sc := server.Config{
		PolicyFile:         *policyFile,
		PolicyPollInterval: pollInterval,
		TLSCertFile:        *tlsCert,
		TLSKeyFile:         *tlsKey,
		TLSClientCAFile:    *tlsClientCA,
		Limits: core.HarnessLimits{
			TimeoutMs: uint64(*timeoutMs), BatchSize: uint64(*batchSize), MaxDepth: uint32(*maxDepth),
		},
		WatchBuffer:              *watchBuffer,
		WatchBufferBytes:         *watchBufferBytes,
		WatchWriteTimeout:        *watchWriteTimeout,
		MaxStreamDuration:        *maxStream,
		StreamRate:               *streamRate,
		ShutdownTimeout:          *shutdownTimeout,
		BodyReadTimeout:          *bodyRead,
		IdleTimeout:              *idle,
		MaxConnections:           *maxConns,
		MaxConnectionsPerAddress: *maxConnsPerAddr,
		AllowedHosts:             hostcheck.Split(*allowedHosts),
		AllowedOrigins:           hostcheck.Split(*allowedOrigins),
		Version:                  cli.Version(version),
		Logger:                   logger,
		Auth:                     ext.auth,
		Metrics:                  ext.metrics,
		Tracing:                  ext.tracing,
		Audit:                    ext.audit,
		Redactor:                 ext.redactor,
		Reflection:               reflection.Mount,
		Console:                  console.Options{Enabled: *ui, AllowedHosts: splitList(*uiHosts)},
		Approvals:                approvalOpts,
		MaxHeldCalls:             *maxHeld,
		ApprovalURL:              *approvalURL,
		Notifier:                 ext.notifier,
	}
	if shared != nil {
		// The cluster's policy bucket is the policy source: the file (or the built-in policy) is
		// only the policy until one is pushed, and is not watched.
		sc.PolicyPollInterval = -1
	}
	shared.wire(&sc, *clusterReady)
	srv, err := server.New(sc)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server:", err)
		return 1
	}
	if shared != nil {
		policyCtx, stopPolicy := context.WithCancel(ctx)
		defer stopPolicy()
		if err := shared.followPolicy(policyCtx, srv, logger); err != nil {
			fmt.Fprintln(stderr, "ahp-server:", err)
			return 1
		}
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
	if *ui {
		logger.Info("web console", "url", scheme+"://"+ln.Addr().String()+console.Prefix)
	}

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
			if shared != nil {
				logger.Info("SIGHUP: in cluster mode the policy comes from the cluster's policy bucket (ahp-server policy push); nothing reloaded")
			} else {
				reloadPolicyOnSIGHUP(srv, *policyFile != "", logger)
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

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func runPolicy(args []string, stdout, stderr io.Writer) int {
	// The subcommands and how many arguments each takes, its own name included.
	if len(args) == 0 || len(args) != map[string]int{"check": 2, "test": 3}[args[0]] {
		fmt.Fprintln(stderr, "usage: ahp-server policy check FILE | ahp-server policy test FILE TESTS.yaml")
		return 2
	}
	p, err := policy.LoadFile(args[1])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if args[0] == "check" {
		fmt.Fprintf(stdout, "%s: OK (%d rules, policy %q)\n", args[1], len(p.Rules()), p.Name())
		return 0
	}
	data, err := os.ReadFile(args[2])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	suite, err := policy.ParseTestsWith(data, hooks.WireRequests{}) // cases may state Hooks requests
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

// policyReloader is the part of *server.Server that a SIGHUP reloads.
type policyReloader interface {
	Policy() *policy.Policy
	ReloadPolicy() error
}

// reloadPolicyOnSIGHUP rereads the policy file and logs what happened: a new policy, the same
// policy (the file was unchanged), or nothing to reload. A failure is logged by the watcher.
func reloadPolicyOnSIGHUP(srv policyReloader, fromFile bool, logger *slog.Logger) {
	if !fromFile {
		logger.Info("SIGHUP: no -policy file to reload; the built-in policy stays in force")
		return
	}
	before := srv.Policy().Digest()
	if err := srv.ReloadPolicy(); err != nil {
		return
	}
	if after := srv.Policy().Digest(); after != before {
		logger.Info("policy reloaded on SIGHUP", "digest", after, "previous", before)
	} else {
		logger.Info("policy file unchanged on SIGHUP; the policy in force stays", "digest", after)
	}
}
