package main

import (
	"log/slog"
	"net"
	"net/http"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli"
	configfile "github.com/ahp-gateway/ahp/internal/config"
	"github.com/ahp-gateway/ahp/internal/metrics"
)

// hardening is the bridge's optional client authentication and metrics.
type hardening struct {
	auth      *auth.Authenticator
	metrics   *metrics.Metrics
	metricsLn net.Listener
}

// loadHardening reads -config (its auth section) and opens the -metrics-addr listener.
func loadHardening(cfg *config, log *slog.Logger) (*hardening, error) {
	h := &hardening{}
	if cfg.configFile != "" {
		file, err := configfile.Load(cfg.configFile)
		if err != nil {
			return nil, err
		}
		h.metrics = metrics.New(metrics.Options{Version: cli.Version(version), Logger: log})
		a, err := auth.New(file.Auth, auth.Options{
			Logger: log,
			OnDeny: func(d auth.Denial) {
				h.metrics.AuthFailure(d.Reason)
				log.Info("client refused", "reason", d.Reason, "peer", d.Peer)
			},
		})
		if err != nil {
			return nil, err
		}
		if a.Enabled() {
			h.auth = a
		}
		if cfg.metricsAddr == "" {
			cfg.metricsAddr = file.Metrics.Addr
		}
	}
	if cfg.metricsAddr != "" {
		if h.metrics == nil {
			h.metrics = metrics.New(metrics.Options{Version: cli.Version(version), Logger: log})
		}
		ln, err := net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			return nil, err
		}
		h.metricsLn = ln
		log.Info("metrics listening", "addr", ln.Addr().String())
	}
	return h, nil
}

// requireHTTP demands agent-scope credentials from HTTP clients when auth is configured.
func (h *hardening) requireHTTP(next http.Handler) http.Handler {
	if h.auth == nil {
		return next
	}
	return h.auth.Require(auth.ScopeAgent, next)
}

// requireWebSocket demands agent-scope credentials (headers or the api_key/token query
// parameters Harness clients send) from WebSocket clients when auth is configured.
func (h *hardening) requireWebSocket(next http.Handler) http.Handler {
	if h.auth == nil {
		return next
	}
	return h.auth.RequireWebSocket(auth.ScopeAgent, next)
}

// onFailure counts upstream failures in the metrics.
func (h *hardening) onFailure(e bridge.FailureEvent) {
	if h.metrics == nil {
		return
	}
	d := ahpv1.Dialect_DIALECT_UNSPECIFIED
	switch e.Dialect {
	case "hooks":
		d = ahpv1.Dialect_DIALECT_HOOKS
	case "harness":
		d = ahpv1.Dialect_DIALECT_HARNESS
	}
	r := metrics.ParseBridgeReason(e.Failure.String())
	switch {
	case e.Observe:
		h.metrics.BridgeObserveFailed(d, r)
	case e.Policy == bridge.FailOpen:
		h.metrics.BridgeFailOpen(d, r)
	default:
		h.metrics.BridgeFailClosed(d, r)
	}
}
