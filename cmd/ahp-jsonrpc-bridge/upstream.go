package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli"
	"github.com/ahp-gateway/ahp/internal/cluster"
	"github.com/ahp-gateway/ahp/internal/cluster/policykv"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/transport"
)

// upstreamConfig is how the bridge and the hook adapters reach a decision core: an ahp-server
// (-upstream) or the embedded one. Both commands embed it, so they validate and build it alike.
type upstreamConfig struct {
	upstream, tokenEnv string
	// caFile, certFile and keyFile are the PEM files of a private CA to trust and of a client
	// certificate to present to an https upstream (an ahp-server in mTLS mode).
	caFile, certFile, keyFile string
	upstreamProtocol          bridge.Protocol
	timeout                   time.Duration
	approvalWait              time.Duration
	failurePolicy             bridge.FailurePolicy
	policyFile                string
	policyPoll                time.Duration
	maxMessageBytes           int
	shutdownTimeout           time.Duration
	// unaryOnly makes every upstream Intercept a unary call instead of a message on the shared
	// InterceptStream (for proxies that mishandle long-lived HTTP/2 streams).
	unaryOnly bool
	// nats, when it has servers, makes the embedded core follow the cluster's policy bucket
	// (the policy `ahp-server policy push` stores) instead of polling -policy.
	nats cluster.Config
}

// upstreamFlags are the raw flag values behind an upstreamConfig.
type upstreamFlags struct {
	upstream, tokenEnv, protocol, timeoutMs, failurePolicy *string
	caFile, certFile, keyFile                              *string
	policyFile, policyPoll, maxBytes, shutdown             *string
	approvalWait                                           *string
	nats                                                   natsFlags
}

// natsFlags say how an embedded bridge reaches the cluster's NATS: the settings of the
// cluster: block of ahp-server's config file that following the policy bucket needs. Secrets are
// never flag values: a creds or nkey seed file, or the name of a variable holding a token.
type natsFlags struct {
	servers, prefix, creds, nkey, tokenEnv, ca, cert, key *string
}

// upstreamUsage is what the bridge and the hook adapters say differently about the upstream flags.
type upstreamUsage struct {
	timeoutMs, failurePolicy, policyPoll, maxBytes, shutdown string
	maxBytesDefault                                          int
}

// defineUpstream declares the flags behind an upstreamConfig, bound to the same AHP_BRIDGE_*
// variables in both commands.
func defineUpstream(fs *cli.Flags, usage upstreamUsage) upstreamFlags {
	return upstreamFlags{
		upstream:      fs.String("upstream", "", "ahp-server `URL`, http:// (h2c) or https://; empty runs the decision core in-process", "AHP_BRIDGE_UPSTREAM"),
		tokenEnv:      fs.String("upstream-token-env", "", "`name` of the environment variable holding a bearer token for the upstream", "AHP_BRIDGE_UPSTREAM_TOKEN_ENV"),
		protocol:      fs.String("upstream-protocol", "connect", "RPC `protocol` to the upstream: connect or grpc", "AHP_BRIDGE_UPSTREAM_PROTOCOL"),
		caFile:        fs.String("upstream-ca", "", "PEM `file` of the CA certificates to trust for an https upstream, instead of the system's", "AHP_BRIDGE_UPSTREAM_CA"),
		certFile:      fs.String("upstream-cert", "", "PEM `file` of the client certificate to present to an https upstream (mTLS); needs -upstream-key", "AHP_BRIDGE_UPSTREAM_CERT"),
		keyFile:       fs.String("upstream-key", "", "PEM `file` of the client certificate's private key; needs -upstream-cert", "AHP_BRIDGE_UPSTREAM_KEY"),
		timeoutMs:     fs.String("timeout-ms", "2000", usage.timeoutMs, "AHP_BRIDGE_TIMEOUT_MS"),
		failurePolicy: fs.String("failure-policy", "", usage.failurePolicy, "AHP_BRIDGE_FAILURE_POLICY"),
		policyFile:    fs.String("policy", "", "embedded mode: policy YAML `file`; empty uses the built-in default policy", "AHP_BRIDGE_POLICY"),
		policyPoll:    fs.String("policy-poll", "1s", usage.policyPoll, "AHP_BRIDGE_POLICY_POLL"),
		maxBytes:      fs.String("max-message-bytes", strconv.Itoa(usage.maxBytesDefault), usage.maxBytes, "AHP_BRIDGE_MAX_MESSAGE_BYTES"),
		shutdown:      fs.String("shutdown-timeout", transport.DefaultShutdownTimeout.String(), usage.shutdown, "AHP_BRIDGE_SHUTDOWN_TIMEOUT"),
		nats: natsFlags{
			servers:  fs.String("nats", "", "embedded mode: NATS server `URLs`, comma-separated; the embedded core follows the cluster's policy bucket (ahp-server policy push) and switches to each pushed policy (docs/cluster.md)", "AHP_BRIDGE_NATS"),
			prefix:   fs.String("nats-prefix", "", "the cluster's bucket and subject `prefix` (cluster.prefix of the ahp-servers; default ahp)", "AHP_BRIDGE_NATS_PREFIX"),
			creds:    fs.String("nats-creds", "", "NATS user credentials `file` (JWT and nkey seed)", "AHP_BRIDGE_NATS_CREDS"),
			nkey:     fs.String("nats-nkey", "", "`file` holding a NATS nkey user seed", "AHP_BRIDGE_NATS_NKEY"),
			tokenEnv: fs.String("nats-token-env", "", "`name` of the environment variable holding a NATS token", "AHP_BRIDGE_NATS_TOKEN_ENV"),
			ca:       fs.String("nats-ca", "", "PEM `file` of the CAs that sign the NATS servers' certificates", "AHP_BRIDGE_NATS_CA"),
			cert:     fs.String("nats-cert", "", "PEM `file` of the client certificate to present to NATS (mTLS); needs -nats-key", "AHP_BRIDGE_NATS_CERT"),
			key:      fs.String("nats-key", "", "PEM `file` of that certificate's private key; needs -nats-cert", "AHP_BRIDGE_NATS_KEY"),
		},
		approvalWait: fs.String("approval-wait", "0s", "how long a decision held for a person's approval may wait (e.g. 10m, at most 24h); 0: -timeout-ms, and a held call is answered with the approval id to retry once approved", "AHP_BRIDGE_APPROVAL_WAIT"),
	}
}

// parseUpstream checks the flags; the error names the flag and what it wants, as a
// *cli.ValueError when it is about one flag's value.
func parseUpstream(f upstreamFlags) (upstreamConfig, error) {
	u := upstreamConfig{upstream: *f.upstream, tokenEnv: *f.tokenEnv, policyFile: *f.policyFile,
		caFile: *f.caFile, certFile: *f.certFile, keyFile: *f.keyFile}
	if (u.certFile == "") != (u.keyFile == "") {
		return u, fmt.Errorf("-upstream-cert and -upstream-key go together")
	}
	if (u.caFile != "" || u.certFile != "") && !strings.HasPrefix(u.upstream, "https://") {
		return u, fmt.Errorf("-upstream-ca, -upstream-cert and -upstream-key need an https:// -upstream")
	}
	switch *f.protocol {
	case "connect":
		u.upstreamProtocol = bridge.ProtocolConnect
	case "grpc":
		u.upstreamProtocol = bridge.ProtocolGRPC
	default:
		return u, cli.BadValue("upstream-protocol", "-upstream-protocol: want connect or grpc, got %q", *f.protocol)
	}
	ms, err := strconv.Atoi(*f.timeoutMs)
	if err != nil || ms < int(bridge.MinTimeout/time.Millisecond) || ms > int(bridge.MaxTimeout/time.Millisecond) {
		return u, cli.BadValue("timeout-ms", "-timeout-ms: want a whole number of milliseconds from %d to %d, got %q",
			bridge.MinTimeout/time.Millisecond, bridge.MaxTimeout/time.Millisecond, *f.timeoutMs)
	}
	u.timeout = time.Duration(ms) * time.Millisecond
	if u.approvalWait, err = time.ParseDuration(*f.approvalWait); err != nil || u.approvalWait < 0 || u.approvalWait > bridge.MaxApprovalWait {
		return u, cli.BadValue("approval-wait", "-approval-wait: want a duration from 0 to 24h such as 10m, got %q", *f.approvalWait)
	}
	policy := *f.failurePolicy
	if u.upstream != "" {
		// The Agent Hooks Protocol gives an interception no implicit failure policy (AHP-FAIL-001),
		// and a bridge in front of a remote decision point is where that choice matters.
		if policy == "" {
			return u, fmt.Errorf("-failure-policy fail-open|fail-closed is required with -upstream: there is no implicit default")
		}
		if u.policyFile != "" {
			return u, fmt.Errorf("-policy is for embedded mode; with -upstream the ahp-server's policy decides")
		}
	} else {
		if u.tokenEnv != "" {
			return u, fmt.Errorf("-upstream-token-env needs -upstream")
		}
		// In-process, an operational failure is a bug or a broken policy file, not an outage.
		if policy == "" {
			policy = "fail-closed"
		}
	}
	if u.failurePolicy, err = bridge.ParseFailurePolicy(policy); err != nil {
		return u, cli.BadValue("failure-policy", "-failure-policy: want fail-open or fail-closed, got %q", policy)
	}
	if u.policyPoll, err = time.ParseDuration(*f.policyPoll); err != nil || u.policyPoll < 0 {
		return u, cli.BadValue("policy-poll", "-policy-poll: want a duration such as 1s, or 0 to disable, got %q", *f.policyPoll)
	}
	if u.maxMessageBytes, err = strconv.Atoi(*f.maxBytes); err != nil || u.maxMessageBytes < 1024 || u.maxMessageBytes > 1<<30 {
		return u, cli.BadValue("max-message-bytes", "-max-message-bytes: want a number of bytes from 1024 to 1073741824, got %q", *f.maxBytes)
	}
	if u.shutdownTimeout, err = time.ParseDuration(*f.shutdown); err != nil || u.shutdownTimeout <= 0 {
		return u, cli.BadValue("shutdown-timeout", "-shutdown-timeout: want a positive duration such as 10s, got %q", *f.shutdown)
	}
	if u.nats, err = parseNATS(f.nats); err != nil {
		return u, err
	}
	if u.nats.Enabled() && u.upstream != "" {
		return u, fmt.Errorf("-nats is for embedded mode; with -upstream the ahp-server follows the cluster's policy")
	}
	return u, nil
}

// parseNATS checks the -nats flags with the cluster package's own rules, naming the flag.
func parseNATS(f natsFlags) (cluster.Config, error) {
	cfg := cluster.Config{
		Servers: cluster.ParseServers(*f.servers), Prefix: *f.prefix,
		CredsFile: *f.creds, NKeyFile: *f.nkey, TokenEnv: *f.tokenEnv,
		TLS: cluster.TLS{CAFile: *f.ca, CertFile: *f.cert, KeyFile: *f.key},
		// A bridge that cannot reach NATS at start would decide with a policy other than the
		// cluster's without saying so: it refuses to start instead.
		OnStartUnavailable: cluster.Refuse,
	}
	if !cfg.Enabled() {
		for _, o := range []struct{ flag, v string }{{"nats-prefix", cfg.Prefix}, {"nats-creds", cfg.CredsFile},
			{"nats-nkey", cfg.NKeyFile}, {"nats-token-env", cfg.TokenEnv}, {"nats-ca", cfg.TLS.CAFile},
			{"nats-cert", cfg.TLS.CertFile}, {"nats-key", cfg.TLS.KeyFile}} {
			if o.v != "" {
				return cfg, fmt.Errorf("-%s needs -nats", o.flag)
			}
		}
		return cfg, nil
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("-nats settings (named as in ahp-server's cluster: block): %w", err)
	}
	return cfg, nil
}

// clients connects to the upstream, or starts the embedded decision core. A long-running process
// shares one InterceptStream for its upstream calls and polls its embedded policy file; a process
// that answers one event does neither.
func (u upstreamConfig) clients(log *slog.Logger, getenv func(string) string, longRunning bool) (bridge.Clients, io.Closer, error) {
	if u.upstream != "" {
		tc, err := u.tlsConfig()
		if err != nil {
			return bridge.Clients{}, nil, err
		}
		return bridge.NewUpstream(u.upstream, bridge.UpstreamOptions{
			TLSConfig:      tc,
			Protocol:       u.upstreamProtocol,
			BearerTokenEnv: u.tokenEnv,
			Getenv:         getenv,
			// Room for an answer that echoes a big tool input back (a modify).
			MaxResponseBytes: 2 * u.maxMessageBytes,
			UnaryOnly:        u.unaryOnly || !longRunning,
			Logger:           log,
		})
	}
	poll := u.policyPoll
	if poll == 0 || !longRunning || u.nats.Enabled() {
		// server.Config: negative disables hot reload. With -nats the cluster's policy bucket is
		// the policy source: -policy (or the built-in policy) is only the policy until one is
		// pushed, and is not watched, as in an ahp-server replica.
		poll = -1
	}
	var attach func(*server.Server) error
	var conn *cluster.Conn
	stopFollowing := func() {}
	if u.nats.Enabled() {
		var err error
		if conn, err = cluster.Connect(u.nats, log); err != nil {
			return bridge.Clients{}, nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopFollowing = func() { cancel(); conn.Close() }
		attach = func(srv *server.Server) error {
			// A process that answers one event reads the policy in force once.
			return policykv.Follow(ctx, conn, srv.SetPolicy, longRunning, log)
		}
	}
	clients, closer, err := bridge.NewEmbeddedWith(server.Config{
		PolicyFile:         u.policyFile,
		PolicyPollInterval: poll,
		Limits:             bridge.ServerLimits(nil),
		// The message travels as protobuf, which for JSON payloads can be somewhat larger than
		// the JSON text; leave it room.
		MaxRequestBytes: 2 * u.maxMessageBytes,
		ShutdownTimeout: u.shutdownTimeout,
		Version:         cli.Version(version),
		Logger:          log,
	}, attach)
	if err != nil {
		stopFollowing()
		return bridge.Clients{}, nil, err
	}
	if conn == nil {
		return clients, closer, nil
	}
	return clients, closerFunc(func() error {
		err := closer.Close()
		stopFollowing()
		return err
	}), nil
}

// closerFunc is an io.Closer from a function.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// tlsConfig is the TLS configuration for an https upstream with a private CA or a client
// certificate (nil: the system's roots, no client certificate). The files are read at start.
func (u upstreamConfig) tlsConfig() (*tls.Config, error) {
	if u.caFile == "" && u.certFile == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if u.caFile != "" {
		pem, err := os.ReadFile(u.caFile)
		if err != nil {
			return nil, fmt.Errorf("-upstream-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-upstream-ca: %s holds no PEM certificate", u.caFile)
		}
		tc.RootCAs = pool
	}
	if u.certFile != "" {
		cert, err := tls.LoadX509KeyPair(u.certFile, u.keyFile)
		if err != nil {
			return nil, fmt.Errorf("-upstream-cert/-upstream-key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
