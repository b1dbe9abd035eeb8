// Package server assembles ahp-server: the decision core behind the four Connect services and
// ApprovalService, gRPC health and reflection, on one net/http server speaking HTTP/1.1 and h2c
// (or TLS). cmd/ahp-server only parses flags and calls it.
//
// Panics: the server's boundary is one recover per call path, both through recovered, both an
// Internal error for that call only: connect.WithRecover on the HTTP handler, and Local's own for
// in-process calls, which have no connect handler around them. Below a handler only a failure
// with a better answer than Internal is recovered: policy around each rule (a rule that cannot be
// evaluated fails closed) and the core around a Policy (see package core).
package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/console"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/service"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/ahp-gateway/ahp/internal/transport/hostcheck"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// Config configures a server. Zero values take the documented defaults.
type Config struct {
	// PolicyFile is the YAML policy; "" uses the embedded default policy.
	PolicyFile string
	// PolicyPollInterval is how often PolicyFile is checked for changes (default 1s; <0 disables).
	PolicyPollInterval time.Duration
	// TLSCertFile and TLSKeyFile enable TLS when both are set; both are re-read when they change.
	TLSCertFile, TLSKeyFile string
	// TLSClientCAFile, with TLS on, requires client certificates signed by these CAs (mTLS).
	TLSClientCAFile string
	// Limits are the Harness limits (batch size, depth, advertised timeout).
	Limits core.HarnessLimits
	// WatchBuffer is each watcher's buffer (default 1024).
	WatchBuffer int
	// WatchBufferBytes bounds each watcher's buffer in bytes (default hub.DefaultBufferBytes;
	// negative: items only).
	WatchBufferBytes int
	// WatchWriteTimeout bounds each write to a watcher (default 10s; negative: none).
	WatchWriteTimeout time.Duration
	// MaxStreamDuration ends streams after this long (default 1h; negative disables).
	MaxStreamDuration time.Duration
	// StreamRate caps messages per second per client stream, events for ObserveStream (default 0:
	// unlimited).
	StreamRate float64
	// MaxRequestBytes caps a request message (default 4 MiB).
	MaxRequestBytes int
	// UnaryTimeout bounds a unary call's handling (default 30s).
	UnaryTimeout time.Duration
	// ShutdownTimeout bounds graceful shutdown (default 15s).
	ShutdownTimeout time.Duration
	// BodyReadTimeout bounds reading a call that sends one message (unary and server-streaming
	// calls), its headers and body (default 30s; negative disables). Client streams are bounded by
	// MaxStreamDuration instead.
	BodyReadTimeout time.Duration
	// IdleTimeout closes a connection without calls in flight after this long, an HTTP/2
	// connection that never starts a stream included (default 30s).
	IdleTimeout time.Duration
	// MaxConnections caps the connections open at once; more are closed at accept (default 8192;
	// negative: no cap).
	MaxConnections int
	// MaxConnectionsPerAddress caps the connections open at once from one client IP address
	// (default 2048; negative: no cap).
	MaxConnectionsPerAddress int
	// AllowedHosts and AllowedOrigins guard Serve against DNS rebinding and cross-site browser
	// requests (internal/transport/hostcheck): by default a loopback listener answers only to
	// loopback host names, and a browser only from the server's own origin.
	AllowedHosts, AllowedOrigins []string
	// Version is reported in handshakes and capabilities.
	Version string
	// Logger receives logs (default slog.Default()).
	Logger *slog.Logger
	// Auth checks credentials and scopes on every RPC (nil: no authentication).
	Auth *auth.Authenticator
	// Metrics records Prometheus metrics (nil: none).
	Metrics *metrics.Metrics
	// Tracing is the OpenTelemetry interceptor (nil: none).
	Tracing connect.Interceptor
	// Audit is the audit log every decision and observation is written to (nil: none). The server
	// closes it — draining every accepted record — when Serve returns.
	Audit *audit.Log
	// AuditStream, when set with Audit, is given every record after the audit log (cluster mode:
	// the replicated audit stream). Its error counts as an audit failure: with the log required,
	// the decision fails closed.
	AuditStream func(audit.Record) error
	// Redactor masks secrets in everything streamed to Watch (nil: redact.New with defaults).
	Redactor *redact.Redactor
	// Approvals bound the approval store: pending approvals (overall and per agent), approvals
	// kept, their bytes and retention (zero fields: approval.MemoryOptions defaults).
	Approvals approval.MemoryOptions
	// ApprovalStore keeps approvals (nil: in-process, bounded by Approvals); cluster mode shares
	// them (cluster/approvalkv), so a decision through any replica releases a call held on another.
	ApprovalStore approval.Store
	// MaxHeldCalls caps calls held waiting for an approval at once (default 4096); more are
	// answered at once as if the caller could not wait.
	MaxHeldCalls int
	// ApprovalURL is where people decide, with "{id}" for the approval id (a console page, say);
	// it is named in answers to callers that cannot wait. Default: the ahp-server approvals
	// command.
	ApprovalURL string
	// Notifier is told about every new approval (nil: none).
	Notifier Notifier
	// Sessions is session memory (nil: in-process); cluster mode shares it (cluster/sessionkv).
	Sessions session.Store
	// Idempotency remembers decisions and observations (nil: in-process); cluster mode shares it
	// (cluster/idemkv).
	Idempotency idempotency.Store
	// Fanout, when set, joins the local Watch hub to the other replicas' (cluster/fanout): it is
	// given the hub, feeds the other replicas' items into it, and returns the Publisher the core
	// publishes to.
	Fanout func(local *hub.Hub) (hub.Publisher, error)
	// Unavailable, when set, makes decisions fail closed while it returns a reason (see
	// core.Config.Unavailable).
	Unavailable func() string
	// Ready, when set, is part of health: while it returns an error, the overall status (the
	// empty service name) is NOT_SERVING (cluster mode with -cluster-ready-required: the shared
	// store is unreachable); the per-service statuses are not affected.
	Ready func() error
	// Reflection, when set, mounts gRPC server reflection for the given services (the AHP ones
	// and health) with the options they get, auth included; ahp-server passes reflection.Mount.
	// Nil serves no reflection, and a binary that never sets it (the bridge) does not link it.
	Reflection func(mux *http.ServeMux, services []string, opts ...connect.HandlerOption)
	// Console serves the web console at /ui/ when Enabled (see package console).
	Console console.Options
}

// Server is a configured ahp-server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	current atomic.Pointer[policy.Policy]
	watcher *policy.Watcher
	hub     *hub.Hub
	core    *core.Core
	svc     *service.Services

	approvals     *approval.Manager
	approvalsDone <-chan struct{} // closed when listenApprovals has recorded the last change

	// The HTTP handler (every service, health, reflection if configured) is built on first use:
	// a server used only in-process (Local) never needs it.
	handlerOnce  sync.Once
	handlerBuilt atomic.Bool // set once health, handler and names are
	health       *grpchealth.StaticChecker
	handler      http.Handler
	names        []string

	reloads, reloadFailures atomic.Uint64
	lastReload              atomic.Pointer[console.ReloadResult]
	console                 *console.Console
}

// New loads the policy and builds the services; it fails if the policy does not load. The HTTP
// handler is built on first use (Handler, HTTPServer, Serve).
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PolicyPollInterval == 0 {
		cfg.PolicyPollInterval = time.Second
	}
	if cfg.WatchBuffer <= 0 {
		cfg.WatchBuffer = 1024
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 4 << 20
	}
	if cfg.UnaryTimeout <= 0 {
		cfg.UnaryTimeout = 30 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 15 * time.Second
	}
	if cfg.BodyReadTimeout == 0 {
		cfg.BodyReadTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.MaxConnections == 0 {
		cfg.MaxConnections = 8192
	}
	if cfg.MaxConnectionsPerAddress == 0 {
		cfg.MaxConnectionsPerAddress = 2048
	}
	if cfg.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return nil, err
		}
		cfg.Redactor = r
	}
	// Watchers only ever see redacted items; redaction runs on the hub's dispatcher, off the
	// decision path, and only when someone watches.
	hubOpts := []hub.Option{hub.WithTransform(redactItem(cfg.Redactor))}
	if cfg.WatchBufferBytes != 0 {
		hubOpts = append(hubOpts, hub.WithBufferBytes(cfg.WatchBufferBytes))
	}
	s := &Server{cfg: cfg, log: cfg.Logger, hub: hub.New(65536, hubOpts...)}

	var observer core.Observer
	if cfg.Metrics != nil {
		observer = metricsObserver{cfg.Metrics}
	}
	var recorder core.Recorder
	if cfg.Audit != nil {
		recorder = auditRecorder{log: cfg.Audit, metrics: cfg.Metrics, stream: cfg.AuditStream}
	}

	sessions := cfg.Sessions
	if sessions == nil {
		sessions = session.NewMemory(session.Options{Redactor: cfg.Redactor})
	}
	var publisher hub.Publisher = s.hub
	if cfg.Fanout != nil {
		var err error
		if publisher, err = cfg.Fanout(s.hub); err != nil {
			s.hub.Close()
			return nil, err
		}
	}
	s.approvals = s.newApprovals()
	cfg.Metrics.ApprovalsHeld(s.approvals.Held)
	s.core = core.New(core.Config{
		Policy:       func() core.Policy { return s.current.Load() },
		Typed:        typed.Decide,
		Redactor:     cfg.Redactor,
		Caller:       principalOf,
		Sessions:     sessions,
		Idempotency:  cfg.Idempotency,
		Hub:          publisher,
		Unavailable:  cfg.Unavailable,
		Recorder:     recorder,
		Observer:     observer,
		Approvals:    s.approvals,
		ApprovalHint: s.approvalHint,
		Limits:       cfg.Limits,
		Version:      cfg.Version,
		Logger:       s.log,
	})
	// Loading the policy (compiling its CEL) and building the services (protovalidate's CEL
	// environment and rules) are the two slow steps and independent of each other: run them side
	// by side. The core reads the policy only when it decides.
	var svcErr error
	svcDone := make(chan struct{})
	go func() {
		defer close(svcDone)
		s.svc, svcErr = service.New(s.core, service.Options{
			Watcher: s.hub, WatchBuffer: cfg.WatchBuffer, WatchWriteTimeout: cfg.WatchWriteTimeout, Logger: s.log,
			MaxStreamDuration: cfg.MaxStreamDuration, StreamRate: cfg.StreamRate,
		})
		if svcErr == nil {
			warmValidation(s.svc)
		}
	}()
	p, err := s.loadPolicy()
	<-svcDone
	if err != nil {
		return nil, err
	}
	if svcErr != nil {
		return nil, svcErr
	}
	s.log.Info("policy loaded", "name", p.Name(), "rules", len(p.Rules()), "digest", p.Digest(), "source", policySource(cfg.PolicyFile))
	s.policyMetrics(p)
	cfg.Metrics.WatchStats(s.hub.Stats)
	if cfg.Audit != nil {
		cfg.Metrics.AuditStats(cfg.Audit.Stats)
	}
	return s, nil
}

// buildHandler mounts every service, health and (when configured) reflection on one mux, once.
func (s *Server) buildHandler() {
	s.handlerOnce.Do(s.mountHandler)
}

func (s *Server) mountHandler() {
	cfg := s.cfg
	opts := []connect.HandlerOption{
		connect.WithReadMaxBytes(cfg.MaxRequestBytes),
		cappedGzip(cfg.MaxRequestBytes),
		// Gzip pays off only for large answers; a decision is a few hundred bytes, not worth the
		// CPU of compressing it (docs/bench-results.md).
		connect.WithCompressMinBytes(1024),
		connect.WithRecover(s.recovered),
	}
	opts = append(opts, jsonCodecs()...)
	// The console's read-only approvals view is authorized by the console (watch scope), not
	// by the API's gate; it gets every other option.
	viewOpts := append([]connect.HandlerOption(nil), opts...)
	if cfg.Auth != nil {
		// A request gate: credentials are checked before the body is even read, and a refusal is
		// answered without reading it.
		opts = append(opts, connect.WithRequestGate(refuseEarly(cfg.Auth.Gate)))
	}
	var interceptors []connect.Interceptor
	if cfg.Tracing != nil {
		interceptors = append(interceptors, cfg.Tracing)
	}
	interceptors = append(interceptors, unaryTimeout(cfg.UnaryTimeout))
	opts = append(opts, connect.WithInterceptors(interceptors...))
	viewOpts = append(viewOpts, connect.WithInterceptors(interceptors...))
	mux := http.NewServeMux()
	s.names = s.svc.Register(mux, opts...)
	s.names = append(s.names, s.svc.RegisterApprovals(mux, s.approvals, opts...))
	s.health = grpchealth.NewStaticChecker(s.names...)
	// Health and reflection get the same options, so auth decides whether they are public.
	var checker grpchealth.Checker = s.health
	if cfg.Ready != nil {
		checker = readiness{s.health, cfg.Ready}
	}
	mux.Handle(grpchealth.NewHandler(checker, opts...))
	if cfg.Reflection != nil {
		cfg.Reflection(mux, append(append([]string(nil), s.names...), grpchealth.HealthV1ServiceName), opts...)
	}
	s.handler = limitBodies(routeServices(mux, s.names), cfg.BodyReadTimeout, cfg.MaxRequestBytes, cfg.Auth != nil)
	if cfg.Console.Enabled {
		_, approvalsView := s.svc.ApprovalsView(s.approvals, viewOpts...)
		s.console = console.New(cfg.Console, console.Deps{
			Auth: cfg.Auth, Hub: s.hub, Policy: s.Policy, Reloads: s.reloadStatus, Metrics: cfg.Metrics,
			Redactor: cfg.Redactor, Version: cfg.Version, Logger: s.log,
			Approvals: http.MaxBytesHandler(approvalsView, int64(cfg.MaxRequestBytes)),
		})
		s.handler = s.console.Wrap(s.handler)
	}
	s.handlerBuilt.Store(true)
}

// readiness reports the overall status (the empty service name) NOT_SERVING while ready fails,
// and the static status otherwise; the per-service statuses stay as they are, so a liveness
// probe can ask a service by name and not restart a replica that only waits for NATS.
type readiness struct {
	static *grpchealth.StaticChecker
	ready  func() error
}

func (r readiness) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	resp, err := r.static.Check(ctx, req)
	if err == nil && req.Service == "" && resp.Status == grpchealth.StatusServing && r.ready() != nil {
		resp.Status = grpchealth.StatusNotServing
	}
	return resp, err
}

func policySource(file string) string {
	if file == "" {
		return "embedded default"
	}
	return file
}

// loadPolicy loads the configured policy and, for a file, prepares hot reload: a changed file is
// validated and swapped in atomically; a broken one keeps the old policy and is logged and counted.
func (s *Server) loadPolicy() (*policy.Policy, error) {
	if s.cfg.PolicyFile == "" {
		p := policy.Default()
		s.current.Store(p)
		return p, nil
	}
	interval := s.cfg.PolicyPollInterval
	if interval < 0 {
		interval = time.Hour // polling disabled; Serve does not start the watcher
	}
	w, err := policy.NewWatcher(s.cfg.PolicyFile, policy.WatchOptions{
		Interval: interval,
		OnReload: func(p *policy.Policy) {
			old := s.current.Swap(p)
			s.reloads.Add(1)
			s.noteReload(p.Digest(), nil)
			s.cfg.Metrics.PolicyReloaded()
			s.policyMetrics(p)
			if n, was := len(p.Rules()), len(old.Rules()); n < was {
				// A file written in pieces can settle half-way; losing rules must not go unnoticed.
				s.log.Warn("policy reloaded with FEWER rules than before; if the file was not meant to shrink, restore it (and replace it atomically: write a temporary file, then rename)",
					"name", p.Name(), "rules", n, "previous_rules", was, "digest", p.Digest(), "previous_digest", old.Digest())
				return
			}
			s.log.Info("policy reloaded", "name", p.Name(), "rules", len(p.Rules()), "digest", p.Digest())
		},
		OnRecover: func(p *policy.Policy) {
			s.cfg.Metrics.PolicyReloadRecovered()
			s.noteReload(p.Digest(), nil)
			s.log.Info("policy file loads again; the policy in force is unchanged", "name", p.Name(), "digest", p.Digest())
		},
		OnError: func(err error) {
			s.reloadFailures.Add(1)
			s.noteReload(s.current.Load().Digest(), err)
			s.cfg.Metrics.PolicyReloadFailed()
			s.log.Error("policy reload failed; the previous policy stays in force", "error", err)
		},
	})
	if err != nil {
		return nil, err
	}
	s.watcher = w
	p := w.Policy()
	s.current.Store(p)
	return p, nil
}

// WatchPolicy runs hot reload — polling the policy file — until ctx is done. Serve runs it; call it
// yourself when serving Handler through your own http.Server. Without a policy file it returns at
// once.
func (s *Server) WatchPolicy(ctx context.Context) {
	if s.watcher != nil {
		_ = s.watcher.Run(ctx)
	}
}

// SetPolicy puts p in force at once, for every decision after this call (cluster mode: a policy
// distributed through the policy bucket). The file watcher, if any, may replace it on its next
// change; cluster mode therefore runs without one.
func (s *Server) SetPolicy(p *policy.Policy) {
	old := s.current.Swap(p)
	s.reloads.Add(1)
	s.cfg.Metrics.PolicyReloaded()
	s.policyMetrics(p)
	s.log.Info("policy switched", "name", p.Name(), "rules", len(p.Rules()), "digest", p.Digest(), "revision", p.Revision(),
		"previous_digest", old.Digest(), "previous_revision", old.Revision())
}

// ReloadPolicy re-reads the policy file now (for SIGHUP); it returns the load error, if any, and
// keeps the old policy on failure.
func (s *Server) ReloadPolicy() error {
	if s.watcher == nil {
		return nil
	}
	return s.watcher.Reload()
}

// noteReload records the result of a reload attempt for the console.
func (s *Server) noteReload(digest string, err error) {
	r := &console.ReloadResult{Time: time.Now(), OK: err == nil, Digest: digest}
	if err != nil {
		r.Error = err.Error()
	}
	s.lastReload.Store(r)
}

// reloadStatus sums up reloads for the console; a server without a policy file has none.
func (s *Server) reloadStatus() console.ReloadStatus {
	if s.watcher == nil {
		return console.ReloadStatus{}
	}
	reloads, failures := s.ReloadStats()
	return console.ReloadStatus{FromFile: true, Reloads: reloads, Failures: failures, Last: s.lastReload.Load()}
}

// policyMetrics tells the metrics which policy and rules are in force.
func (s *Server) policyMetrics(p *policy.Policy) {
	if s.cfg.Metrics == nil {
		return
	}
	rules := p.Rules()
	ids := make([]string, 0, len(rules))
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	s.cfg.Metrics.SetPolicy(p.Name(), p.Digest(), ids)
	s.cfg.Metrics.SetPolicyRevision(p.Revision())
}

// redactItem masks secrets in an item's event and decision.
func redactItem(r *redact.Redactor) func(hub.Item) hub.Item {
	return func(it hub.Item) hub.Item {
		ev, _ := r.Event(it.Event)
		d, _ := r.Decision(it.Decision)
		return hub.Item{Event: ev, Decision: d, Time: it.Time}
	}
}

// principalOf names the authenticated principal of a call for the core's per-principal memory
// and idempotency: the credential's kind and configured name ("" when unauthenticated).
func principalOf(ctx context.Context) string {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return ""
	}
	return p.Kind.String() + ":" + p.Name
}

// auditRecorder adapts the audit log to the core's Recorder.
type auditRecorder struct {
	log     *audit.Log
	metrics *metrics.Metrics
	stream  func(audit.Record) error // nil: none
}

func (r auditRecorder) RecordDecision(ev *ahpv1.Event, d *ahpv1.Decision, at time.Time) error {
	return r.append(audit.RecordFor(ev, d, at))
}

func (r auditRecorder) RecordObservation(ev *ahpv1.Event, at time.Time) error {
	return r.append(audit.RecordFor(ev, nil, at))
}

// append records rec; when the log is required it returns only once the record is written (and
// synced under fsync always), so no answer leaves before its record.
func (r auditRecorder) append(rec audit.Record) error {
	err := r.log.Record(rec)
	if r.stream != nil {
		if serr := r.stream(rec); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	if r.metrics != nil {
		if err != nil {
			r.metrics.AuditWriteError()
		}
		r.metrics.SetAuditQueueDepth(r.log.Stats().QueueDepth)
	}
	return err
}

func (r auditRecorder) Required() bool { return r.log.Required() }

// metricsObserver adapts the Prometheus metrics to the core's Observer.
type metricsObserver struct{ m *metrics.Metrics }

func (o metricsObserver) Decided(_ *ahpv1.Event, d *ahpv1.Decision) {
	if d.GetReplayed() {
		return // a replay decides nothing new
	}
	o.m.ObserveDecision(d, time.Duration(d.GetLatencyUs())*time.Microsecond)
}

func (o metricsObserver) Observed(ev *ahpv1.Event) { o.m.ObserveEvent(ev.GetType()) }

// recovered turns a handler panic into an Internal error for that call only.
func (s *Server) recovered(_ context.Context, spec connect.Spec, _ http.Header, v any) error {
	s.log.Error("handler panicked", "procedure", spec.Procedure, "panic", fmt.Sprint(v))
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}

// unaryTimeout bounds unary calls; streams live as long as their clients want. A call whose
// context already ends within d (the client's own timeout, which connect applies) keeps that one
// deadline: a second timer and context per call would change nothing but the garbage.
func unaryTimeout(d time.Duration) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			// A call held for an approval may outlive d, as long as its caller waits.
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= d {
				return next(ctx, req) // the hold context is ctx too
			}
			hold := ctx
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			return next(approval.WithHoldContext(ctx, hold), req)
		}
	}
}

// Handler is the HTTP handler serving every service, health and reflection.
func (s *Server) Handler() http.Handler {
	s.buildHandler()
	return s.handler
}

// Core exposes the decision core (for embedding and tests).
func (s *Server) Core() *core.Core { return s.core }

// Policy returns the policy currently in force.
func (s *Server) Policy() *policy.Policy { return s.current.Load() }

// ReloadStats reports successful and failed policy reloads.
func (s *Server) ReloadStats() (reloads, failures uint64) {
	return s.reloads.Load(), s.reloadFailures.Load()
}

// HTTPServer returns an http.Server with production timeouts for this handler. There is no
// connection-wide read/write timeout because Watch and the streaming RPCs are long-lived; unary
// calls are bounded by BodyReadTimeout and UnaryTimeout instead, and slow clients by
// ReadHeaderTimeout and IdleTimeout. Serve adds the connection caps.
func (s *Server) HTTPServer() *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           s.Handler(),
		Protocols:         &protocols,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       s.cfg.BodyReadTimeout, // lifted where it must not apply (limitBodies)
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(quietHTTPLog{s.log}, "", 0),
	}
}

// quietHTTPLog passes net/http's own error log to slog at warn level, except the line HTTP/2
// writes whenever a client closes its connection normally (GOAWAY), which is debug noise.
type quietHTTPLog struct{ log *slog.Logger }

func (q quietHTTPLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.Contains(msg, "GOAWAY") {
		level = slog.LevelDebug
	}
	q.log.Log(context.Background(), level, msg, "source", "net/http")
	return len(p), nil
}

// Serve serves on ln until ctx is cancelled, then drains: health turns NOT_SERVING, in-flight
// calls finish (up to ShutdownTimeout), watchers are ended.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer()
	tlsOn := s.cfg.TLSCertFile != "" && s.cfg.TLSKeyFile != ""
	if tlsOn {
		tc, err := newTLSFiles(s.cfg.TLSCertFile, s.cfg.TLSKeyFile, s.cfg.TLSClientCAFile, s.log)
		if err != nil {
			return err
		}
		hs.TLSConfig = tc.config()
	}

	defer s.startReloading(ctx)()
	hs.Handler = hostcheck.Wrap(hs.Handler, ln.Addr(), hostcheck.Config{AllowedHosts: s.cfg.AllowedHosts, AllowedOrigins: s.cfg.AllowedOrigins, Logger: s.log})
	ln = limitConnections(ln, s.cfg.MaxConnections, s.cfg.MaxConnectionsPerAddress, s.cfg.Metrics)

	errc := make(chan error, 1)
	go func() {
		if tlsOn {
			errc <- hs.ServeTLS(ln, "", "")
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		s.hub.Close()
		return err
	case <-ctx.Done():
	}
	s.stopServing()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(shutdownCtx) // in-flight calls and observe streams finish first
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	if cerr := s.closeAudit(shutdownCtx); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// startReloading starts what runs beside the services — token file and policy file reloads —
// until ctx is done or the returned function is called.
func (s *Server) startReloading(ctx context.Context) (stop func()) {
	reloadCtx, stopReload := context.WithCancel(ctx)
	if s.cfg.Auth != nil {
		go s.cfg.Auth.Run(reloadCtx) // re-reads token files
	}
	if s.watcher != nil && s.cfg.PolicyPollInterval > 0 {
		go s.WatchPolicy(reloadCtx)
	}
	go s.approvals.Run(reloadCtx, time.Second) // expires approvals nobody waits on
	if s.approvalsDone == nil {
		s.approvalsDone = s.listenApprovals()
	}
	return stopReload
}

// stopServing is the start of a drain: health turns NOT_SERVING, and InterceptStreams and Watch
// streams end, so that they do not hold the shutdown up.
func (s *Server) stopServing() {
	if s.handlerBuilt.Load() {
		for _, name := range s.names {
			s.health.SetStatus(name, grpchealth.StatusNotServing)
		}
		s.health.SetStatus("", grpchealth.StatusNotServing)
	}
	s.svc.Drain() // InterceptStreams end so that clients reconnect elsewhere
	// Held calls are answered as their rules' on_timeout says; approvals stay in the store.
	s.approvals.Close()
	s.hub.Close()
}

// closeAudit is the end of a drain: every accepted audit record is written before the process
// goes.
func (s *Server) closeAudit(ctx context.Context) error {
	if s.approvalsDone != nil {
		select { // the last approval changes go to the log before it closes
		case <-s.approvalsDone:
		case <-ctx.Done():
		}
	}
	if s.cfg.Audit == nil {
		return nil
	}
	if err := s.cfg.Audit.Close(ctx); err != nil {
		return fmt.Errorf("close audit log: %w", err)
	}
	return nil
}
