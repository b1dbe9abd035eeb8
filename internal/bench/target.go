package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/transport"
)

// ErrNotLoopback is returned for a target that is not on a loopback address.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckLoopback accepts http and https URLs whose host is a loopback IP literal or "localhost"
// (and, for dial addresses without a scheme, host:port of the same). ahp-bench never generates
// load against another machine.
func CheckLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("target %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("target %q: want an http:// or https:// URL", raw)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("target %q: want scheme://host:port only (no credentials, path or query)", raw)
	}
	return checkLoopbackHost(raw, u.Hostname())
}

func checkLoopbackHost(raw, host string) error {
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("target %q: host %q is %w; use 127.0.0.1, [::1] or localhost (ahp-bench only loads this machine)", raw, host, ErrNotLoopback)
	}
	if !ip.IsLoopback() {
		return fmt.Errorf("target %q: %s is %w; ahp-bench only loads this machine", raw, host, ErrNotLoopback)
	}
	return nil
}

// httpClient returns the client for Connect calls: h2c for http URLs (as ahp-server serves
// cleartext), HTTP/2 over TLS for https ones.
func httpClient(target string) *http.Client {
	if strings.HasPrefix(target, "https://") {
		return &http.Client{Transport: &http.Transport{
			ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
		}}
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

// clientOptions returns the Connect client options for a protocol. Unless noGzip, the client
// accepts gzip-compressed answers, as connect-go clients do by default (and the server then
// compresses them).
func clientOptions(protocol string, noGzip bool) ([]connect.ClientOption, error) {
	var opts []connect.ClientOption
	switch protocol {
	case "", "connect":
	case "grpc":
		opts = append(opts, connect.WithGRPC())
	case "grpcweb", "grpc-web":
		opts = append(opts, connect.WithGRPCWeb())
	default:
		return nil, fmt.Errorf("protocol %q: want connect, grpc or grpcweb", protocol)
	}
	if noGzip {
		opts = append(opts, connect.WithAcceptCompression("gzip", nil, nil))
	}
	return opts, nil
}

// running is a server this process started.
type running struct {
	url  string
	stop func() error
	pid  int // of a server process; 0 in-process
}

// startServer starts an in-process ahp-server on 127.0.0.1:0 with the policy file and, unless
// nil, the audit log (which stop closes).
func startServer(policyFile string, log *audit.Log) (*running, error) {
	srv, err := server.New(server.Config{
		PolicyFile:         policyFile,
		PolicyPollInterval: -1,
		ShutdownTimeout:    10 * time.Second,
		Audit:              log,
		Version:            "ahp-bench",
		Logger:             slog.New(slog.DiscardHandler),
	})
	if err != nil {
		if log != nil {
			_ = log.Close(context.Background())
		}
		return nil, fmt.Errorf("in-process ahp-server: %w", err)
	}
	return serveLoopback(srv.Serve)
}

// serveLoopback runs serve on a new listener at 127.0.0.1:0 until stop cancels its context, and
// stop returns what serve returned.
func serveLoopback(serve func(ctx context.Context, ln net.Listener) error) (*running, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	return &running{url: "http://" + ln.Addr().String(), stop: func() error {
		cancel()
		return <-done
	}}, nil
}

// startNoop starts the baseline: the same http.Server settings as ahp-server (HTTP/1.1 and h2c,
// the same timeouts) on 127.0.0.1:0, serving the ahp.v1 services with handlers that answer at
// once: every intercept is allowed, every observed event accepted.
func startNoop() (*running, error) {
	// server.New with the embedded policy only lends its HTTPServer settings; its handler is
	// replaced.
	srv, err := server.New(server.Config{PolicyPollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	// Answers compressed as ahp-server compresses them (only from 1 KiB): with connect's default a
	// client that accepts gzip had every small no-op answer gzipped, which made the baseline
	// slower than the server it is the baseline of and flattered every ratio to it.
	opt := connect.WithCompressMinBytes(1024)
	mux := http.NewServeMux()
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(noopHandler{}, opt))
	mux.Handle(ahpv1connect.NewObservationServiceHandler(noopHandler{}, opt))
	mux.Handle(ahpv1connect.NewHarnessServiceHandler(noopHandler{}, opt))
	mux.Handle(ahpv1connect.NewTypedDecisionServiceHandler(ahpv1connect.UnimplementedTypedDecisionServiceHandler{}, opt))
	hs := srv.HTTPServer()
	hs.Handler = mux
	return serveLoopback(func(ctx context.Context, ln net.Listener) error {
		return transport.ServeHTTP(ctx, hs, ln, 2*time.Second)
	})
}

// noopHandler answers every call at once, without validation or policy.
type noopHandler struct {
	ahpv1connect.UnimplementedInterceptServiceHandler
	ahpv1connect.UnimplementedObservationServiceHandler
	ahpv1connect.UnimplementedHarnessServiceHandler
}

var noopAllow = &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}

func (noopHandler) Intercept(context.Context, *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return connect.NewResponse(&ahpv1.InterceptResponse{Decision: noopAllow}), nil
}

func (noopHandler) InterceptStream(_ context.Context, stream *connect.BidiStream[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]) error {
	for {
		req, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp := &ahpv1.InterceptStreamResponse{EventId: req.GetEvent().GetId(), RequestId: req.GetRequestId(), Decision: noopAllow}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

func (noopHandler) Observe(context.Context, *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	return connect.NewResponse(&ahpv1.ObserveResponse{}), nil
}

func (noopHandler) ObserveStream(_ context.Context, stream *connect.ClientStream[ahpv1.ObserveStreamRequest]) (*connect.Response[ahpv1.ObserveStreamResponse], error) {
	var n uint64
	for stream.Receive() {
		if stream.Msg().GetEvent() != nil {
			n++
		} else {
			n += uint64(len(stream.Msg().GetEvents()))
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.ObserveStreamResponse{Accepted: n}), nil
}

func (noopHandler) GetCapabilities(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
	return connect.NewResponse(&ahpv1.GetCapabilitiesResponse{
		ServerVersion: "ahp-bench-noop", HooksProtocolVersions: []string{"0.1"}, HarnessProtocolVersion: "2.4",
	}), nil
}

// writeBuiltinPolicy writes BuiltinPolicy into dir and returns the file's path.
func writeBuiltinPolicy(dir string) (string, error) {
	file := filepath.Join(dir, "ahp-bench-50.yaml")
	return file, os.WriteFile(file, BuiltinPolicy(), 0o600)
}
