package bridge

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
)

// Protocol is the RPC protocol spoken to the upstream.
type Protocol int

const (
	// ProtocolConnect is the Connect protocol with binary protobuf (the default): the cheapest to
	// encode, and readable by any Connect, gRPC or gRPC-Web server built on connect-go.
	ProtocolConnect Protocol = iota
	// ProtocolGRPC is gRPC over HTTP/2, for upstreams behind gRPC-only proxies.
	ProtocolGRPC
)

// String returns "connect" or "grpc".
func (p Protocol) String() string {
	if p == ProtocolGRPC {
		return "grpc"
	}
	return "connect"
}

// DefaultMaxResponseBytes bounds an upstream answer, as the server bounds a request.
const DefaultMaxResponseBytes = 4 << 20

// UpstreamOptions configure NewUpstream. The zero value speaks Connect without credentials.
type UpstreamOptions struct {
	// Protocol is the RPC protocol (default ProtocolConnect).
	Protocol Protocol
	// BearerTokenEnv names an environment variable holding a token sent as
	// "Authorization: Bearer <token>" on every call. The token is read once, here; it is never
	// logged, and errors name the variable, not its value. Empty means no credentials.
	BearerTokenEnv string
	// Getenv reads the environment (default os.Getenv); tests inject their own.
	Getenv func(string) string
	// TLSConfig is used for https:// upstreams (default: system roots, TLS 1.2+).
	TLSConfig *tls.Config
	// MaxResponseBytes bounds one upstream answer (default DefaultMaxResponseBytes).
	MaxResponseBytes int
	// UnaryOnly makes every Intercept a unary call. By default Intercept calls share one
	// long-lived InterceptStream (falling back to unary calls whenever it cannot answer), which
	// spares a persistent bridge a new HTTP/2 stream per call (see multiplexedIntercept); a
	// process that makes a single call gains nothing from it.
	UnaryOnly bool
	// Logger receives a warning when the shared stream fails without having answered (its calls
	// then go unary until it is retried) and a debug line when an answering stream ends (default:
	// discarded).
	Logger *slog.Logger
	// StreamPatience is how long a call waits for the first answer of a newly opened shared
	// stream before it goes unary, capped at half the call's deadline (default
	// DefaultStreamPatience).
	StreamPatience time.Duration
}

// NewUpstream returns Clients for the ahp-server at rawURL: http://host:port speaks HTTP/2
// without TLS (h2c with prior knowledge, which ahp-server serves), https:// speaks HTTP/2 (or
// HTTP/1.1 for Connect, if that is all a proxy in front offers) over TLS. Connections are made lazily and re-made after the upstream
// restarts; the Bridge's per-call deadline bounds connection setup too. Close releases idle
// connections.
func NewUpstream(rawURL string, opts UpstreamOptions) (Clients, io.Closer, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Clients{}, nil, fmt.Errorf("bridge: upstream URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Clients{}, nil, fmt.Errorf("bridge: upstream URL must be http://host[:port] or https://host[:port], got %q", u.Redacted())
	}
	var token string
	if opts.BearerTokenEnv != "" {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if token = getenv(opts.BearerTokenEnv); token == "" {
			return Clients{}, nil, fmt.Errorf("bridge: environment variable %s (upstream bearer token) is empty or unset", opts.BearerTokenEnv)
		}
	}

	var protocols http.Protocols
	t := &http.Transport{
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		// A half-open connection (the upstream vanished without a FIN) is found by pings instead
		// of stalling calls until their deadline.
		HTTP2: &http.HTTP2Config{SendPingTimeout: 15 * time.Second, PingTimeout: 5 * time.Second},
	}
	if u.Scheme == "http" {
		protocols.SetUnencryptedHTTP2(true)
	} else {
		protocols.SetHTTP1(true)
		protocols.SetHTTP2(true)
		t.Proxy = http.ProxyFromEnvironment
		t.TLSClientConfig = opts.TLSConfig
		if t.TLSClientConfig == nil {
			t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	t.Protocols = &protocols

	base := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	clients := newClients(&http.Client{Transport: t}, base, opts.Protocol, opts.MaxResponseBytes, token)
	if opts.UnaryOnly {
		return clients, closerFunc(func() error { t.CloseIdleConnections(); return nil }), nil
	}
	mux := newMultiplexedIntercept(clients.Intercept, opts.Logger, opts.StreamPatience)
	clients.Intercept = mux
	return clients, closerFunc(func() error { mux.Close(); t.CloseIdleConnections(); return nil }), nil
}

// newClients builds the four clients on one HTTP client.
func newClients(hc connect.HTTPClient, baseURL string, p Protocol, maxResponse int, token string) Clients {
	if maxResponse <= 0 {
		maxResponse = DefaultMaxResponseBytes
	}
	opts := []connect.ClientOption{connect.WithReadMaxBytes(maxResponse)}
	if p == ProtocolGRPC {
		opts = append(opts, connect.WithGRPC())
	}
	if token != "" {
		opts = append(opts, connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindBearer, Secret: token})))
	}
	return Clients{
		Intercept:   ahpv1connect.NewInterceptServiceClient(hc, baseURL, opts...),
		Typed:       ahpv1connect.NewTypedDecisionServiceClient(hc, baseURL, opts...),
		Observation: ahpv1connect.NewObservationServiceClient(hc, baseURL, opts...),
		Harness:     ahpv1connect.NewHarnessServiceClient(hc, baseURL, opts...),
	}
}

// closerFunc adapts a function to io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }
