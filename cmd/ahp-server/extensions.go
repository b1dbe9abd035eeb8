package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/config"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/notify"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/tracing"
)

// extensionFlags are the command-line settings of the optional production features.
type extensionFlags struct {
	configFile, metricsAddr string
	audit, auditRequired    bool
	auditPath, version      string
	approvalURL             string
	auditRequiredTimeout    time.Duration
}

// extensions are the optional production features, built from the config file and flags.
type extensions struct {
	auth      *auth.Authenticator
	metrics   *metrics.Metrics
	metricsLn net.Listener
	tracing   connect.Interceptor
	audit     *audit.Log
	redactor  *redact.Redactor
	notifier  server.Notifier
	cluster   cluster.Config // the config file's cluster: block
	auditNATS bool           // audit.nats: publish records to the cluster's audit stream
	closers   []func()
}

// close releases what loadExtensions opened that the server does not own.
func (e *extensions) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

// loadExtensions reads the config file (if any) and builds auth, metrics, tracing, redaction and
// the audit log. The server closes the audit log when it stops.
func loadExtensions(ctx context.Context, f extensionFlags, log *slog.Logger) (*extensions, error) {
	file := &config.File{}
	if f.configFile != "" {
		loaded, err := config.Load(f.configFile)
		if err != nil {
			return nil, err
		}
		file = loaded
	}
	ext := &extensions{cluster: file.Cluster, auditNATS: file.Audit.NATS}
	fail := func(err error) (*extensions, error) {
		ext.close()
		return nil, err
	}

	ext.metrics = metrics.New(metrics.Options{Version: f.version, Logger: log})
	addr := f.metricsAddr
	if addr == "" {
		addr = file.Metrics.Addr
	}
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fail(fmt.Errorf("metrics listener: %w", err))
		}
		ext.metricsLn = ln
		ext.closers = append(ext.closers, func() { ln.Close() })
	}

	a, err := auth.New(file.Auth, auth.Options{
		Logger: log,
		OnDeny: func(d auth.Denial) {
			ext.metrics.AuthFailure(d.Reason)
			log.Info("call refused", "procedure", d.Procedure, "reason", d.Reason, "principal", d.Principal, "peer", d.Peer)
		},
	})
	if err != nil {
		return fail(fmt.Errorf("auth: %w", err))
	}
	if a.Enabled() {
		ext.auth = a
	}

	shutdown, err := tracing.Setup(ctx, file.Tracing, tracing.WithVersion(f.version))
	if err != nil {
		return fail(fmt.Errorf("tracing: %w", err))
	}
	ext.closers = append(ext.closers, func() { _ = shutdown(context.Background()) })
	if file.Tracing.Exporter != "" && file.Tracing.Exporter != "none" {
		ic, err := tracing.NewInterceptor(file.Tracing)
		if err != nil {
			return fail(fmt.Errorf("tracing: %w", err))
		}
		ext.tracing = ic
	}

	red, err := file.Redactor()
	if err != nil {
		return fail(fmt.Errorf("redaction: %w", err))
	}
	ext.redactor = red

	if len(file.Approvals.Notifiers) > 0 {
		d, err := notify.New(file.Approvals.Notifiers, notify.Options{
			Link: func(id string) string {
				if f.approvalURL == "" {
					return ""
				}
				return strings.ReplaceAll(f.approvalURL, "{id}", id)
			},
			Redact:   func(s string) string { out, _ := red.String(s); return out },
			OnResult: ext.metrics.ApprovalNotified,
			Logger:   log,
		})
		if err != nil {
			return fail(err)
		}
		runCtx, stop := context.WithCancel(context.Background())
		go d.Run(runCtx)
		ext.closers = append(ext.closers, stop)
		ext.notifier = d
		log.Info("approval notifiers configured", "notifiers", d.Names())
	}

	if f.audit || f.auditPath != "" || f.auditRequired || file.AuditEnabled() {
		mode, err := file.FsyncMode()
		if err != nil {
			return fail(err)
		}
		cfg := audit.Config{
			Path:            file.Audit.Path,
			Dir:             file.Audit.Dir,
			MaxBytes:        file.Audit.MaxBytes,
			Fsync:           mode,
			FsyncInterval:   file.Audit.FsyncInterval,
			Required:        file.Audit.Required || f.auditRequired,
			RequiredTimeout: f.auditRequiredTimeout,
			IncludeEvent:    file.Audit.IncludeEvent,
			Redactor:        red,
			Logger:          log,
		}
		if f.auditPath != "" {
			cfg.Path = f.auditPath
		}
		l, err := audit.Open(cfg)
		if err != nil {
			if cfg.Required {
				return fail(fmt.Errorf("audit log (required): %w", err))
			}
			// Optional: start without it, loudly.
			log.Error("audit log unavailable; continuing without it because it is not required", "error", err)
		} else {
			ext.audit = l
			log.Info("audit log open", "required", cfg.Required, "fsync", mode.String())
		}
	}
	if ext.audit == nil && (f.auditRequired || file.Audit.Required) {
		return fail(errors.New("audit log required but not configured"))
	}
	return ext, nil
}
