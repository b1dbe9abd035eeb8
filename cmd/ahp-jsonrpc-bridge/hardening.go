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
	"github.com/ahp-gateway/ahp/internal/transport/hostcheck"
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

// defineGuard defines -allowed-hosts and -allowed-origins, shared by the bridge's HTTP and
// WebSocket listeners and the hook adapter's HTTP form.
func defineGuard(fs *cli.Flags) func() hostcheck.Config {
	hosts := fs.String("allowed-hosts", "", "comma-separated Host names the HTTP and WebSocket listeners answer to (\"*\": any); default: loopback names when bound to loopback, else any", "AHP_BRIDGE_ALLOWED_HOSTS")
	origins := fs.String("allowed-origins", "", "comma-separated browser origins allowed to call the HTTP listeners (\"*\": any); default: none but the listener's own", "AHP_BRIDGE_ALLOWED_ORIGINS")
	return func() hostcheck.Config {
		return hostcheck.Config{AllowedHosts: hostcheck.Split(*hosts), AllowedOrigins: hostcheck.Split(*origins)}
	}
}

// guarded wraps next in the Host and Origin checks for a listener bound to addr.
func guarded(next http.Handler, addr net.Addr, cfg hostcheck.Config, log *slog.Logger) http.Handler {
	cfg.Logger = log
	return hostcheck.Wrap(next, addr, cfg)
}

// loadHookAuth reads the auth section of the hook's -config: the credentials the HTTP form's
// clients must present (agent scope), as the bridge's HTTP clients do. Nil: none configured.
func loadHookAuth(configFile string, log *slog.Logger, getenv func(string) string) (*auth.Authenticator, error) {
	if configFile == "" {
		return nil, nil
	}
	file, err := configfile.Load(configFile)
	if err != nil {
		return nil, err
	}
	a, err := auth.New(file.Auth, auth.Options{
		Logger:    log,
		LookupEnv: func(k string) (string, bool) { v := getenv(k); return v, v != "" },
		OnDeny:    func(d auth.Denial) { log.Info("client refused", "reason", d.Reason, "peer", d.Peer) },
	})
	if err != nil || !a.Enabled() {
		return nil, err
	}
	return a, nil
}
