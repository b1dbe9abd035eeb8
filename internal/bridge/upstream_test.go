package bridge_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/server"
)

// serveOn runs a real ahp-server on ln until the returned stop is called.
func serveOn(t *testing.T, ln net.Listener) (stop func()) {
	t.Helper()
	srv, err := server.New(server.Config{Logger: quietLogger(), ShutdownTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// TestBridgeReconnectsAfterTheUpstreamRestarts stops the server, checks the failure policy
// answers, restarts it on the same address and waits for real answers again — without touching
// the bridge.
func TestBridgeReconnectsAfterTheUpstreamRestarts(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	stop := serveOn(t, ln)
	b := newBridge(t, upstreamClients(t, "http://"+addr), func(c *bridge.Config) { c.Timeout = 500 * time.Millisecond })

	real := func() bool {
		got := blankIDs(envelopeOf(t, handle(t, b, harnessEvent(`"r"`, "ls"), bridge.TransportStdio), `"r"`))
		return got == `{"decision":"allow","metadata":{"dev.ahpgateway/policy_digest":"`+policy.Default().Digest()+`"}}`
	}
	if !real() {
		t.Fatal("no real answer before the restart")
	}
	stop()
	if real() {
		t.Fatal("a real answer with the upstream stopped")
	}

	// stop returned after the listener was closed, and Go listens with SO_REUSEADDR: the address
	// is free again at once, unless another process took it meanwhile.
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	serveOn(t, ln2)
	// Each attempt is a whole call (at most the 500 ms timeout); the first after the restart may
	// still meet the broken connection.
	const attempts = 20
	for i := 1; !real(); i++ {
		if i == attempts {
			t.Fatalf("no real answer in %d calls after the upstream came back", attempts)
		}
	}
}

// TestUpstreamSendsTheBearerToken checks the Authorization header and that the token never
// appears in errors.
func TestUpstreamSendsTheBearerToken(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	url := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		srv.Handler().ServeHTTP(w, r)
	}))
	env := map[string]string{"AHP_TOKEN": "s3cr3t-t0ken"}
	for _, protocol := range []bridge.Protocol{bridge.ProtocolConnect, bridge.ProtocolGRPC} {
		clients, closer, err := bridge.NewUpstream(url, bridge.UpstreamOptions{
			Protocol: protocol, BearerTokenEnv: "AHP_TOKEN", Getenv: func(k string) string { return env[k] },
			StreamPatience: patient, // one request per protocol: a slow first answer must not add a unary one
		})
		if err != nil {
			t.Fatal(err)
		}
		defer closer.Close()
		b := newBridge(t, clients, nil)
		envelopeOf(t, handle(t, b, harnessEvent(`"t"`, "ls"), bridge.TransportStdio), `"t"`)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "Bearer s3cr3t-t0ken" || seen[1] != "Bearer s3cr3t-t0ken" {
		t.Errorf("Authorization headers %q", seen)
	}

	_, _, err = bridge.NewUpstream(url, bridge.UpstreamOptions{BearerTokenEnv: "AHP_MISSING", Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "AHP_MISSING") {
		t.Errorf("missing token: %v", err)
	}
}

// TestUpstreamURLIsChecked rejects what cannot be an ahp-server address, without echoing
// credentials in the URL.
func TestUpstreamURLIsChecked(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "localhost:8080", "ftp://host", "http://", "https://user:pa55word@host", "http://[::1"} {
		_, _, err := bridge.NewUpstream(u, bridge.UpstreamOptions{})
		if err == nil {
			t.Errorf("%q accepted", u)
		} else if strings.Contains(err.Error(), "pa55word") {
			t.Errorf("error echoes the password: %v", err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:1", "https://ahp.example:8443", "http://[::1]:9000/prefix"} {
		if _, closer, err := bridge.NewUpstream(u, bridge.UpstreamOptions{}); err != nil {
			t.Errorf("%q: %v", u, err)
		} else {
			closer.Close()
		}
	}
}

// TestConfigIsChecked covers New's validation and defaults.
func TestConfigIsChecked(t *testing.T) {
	t.Parallel()
	clients := bridge.Clients{
		Intercept:   ahpv1connect.NewInterceptServiceClient(http.DefaultClient, "http://x"),
		Typed:       ahpv1connect.NewTypedDecisionServiceClient(http.DefaultClient, "http://x"),
		Observation: ahpv1connect.NewObservationServiceClient(http.DefaultClient, "http://x"),
		Harness:     ahpv1connect.NewHarnessServiceClient(http.DefaultClient, "http://x"),
	}
	bad := []bridge.Config{
		{},
		{Clients: clients, Timeout: 99 * time.Millisecond},
		{Clients: clients, Timeout: 31 * time.Second},
		{Clients: clients, Dialect: bridge.Dialect(7)},
		{Clients: clients, FailurePolicy: bridge.FailurePolicy(7)},
	}
	for i, cfg := range bad {
		if _, err := bridge.New(cfg); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
	b, err := bridge.New(bridge.Config{Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	cfg := b.Config()
	if cfg.Timeout != bridge.DefaultTimeout || cfg.FailurePolicy != bridge.FailClosed || cfg.Dialect != bridge.DialectAuto ||
		cfg.HarnessConfig.GetMaxDepth() != 10 || cfg.HarnessConfig.GetBatchSize() != 100 || cfg.Logger == nil {
		t.Errorf("defaults %+v", cfg)
	}
	for _, s := range []string{"auto", "hooks", "harness"} {
		if d, err := bridge.ParseDialect(s); err != nil || d.String() != s {
			t.Errorf("ParseDialect(%q) = %v, %v", s, d, err)
		}
	}
	for _, s := range []string{"fail-open", "fail-closed"} {
		if p, err := bridge.ParseFailurePolicy(s); err != nil || p.String() != s {
			t.Errorf("ParseFailurePolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := bridge.ParseFailurePolicy("open"); err == nil {
		t.Error("ParseFailurePolicy accepted \"open\"")
	}
}

// TestEmbeddedModeServesUntilClosed checks the in-memory server: it answers, many callers at
// once, and after Close calls fail (and the failure policy answers) instead of hanging.
func TestEmbeddedModeServesUntilClosed(t *testing.T) {
	t.Parallel()
	clients, closer, err := bridge.NewEmbedded(server.Config{Logger: quietLogger(), Limits: bridge.ServerLimits(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b := newBridge(t, clients, nil)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			id := `"c` + string(rune('a'+i%26)) + `"`
			envelopeOf(t, handle(t, b, harnessEvent(id, "ls"), bridge.TransportStdio), id)
			wantResult(t, handle(t, b, hooksIntercept("ls"), bridge.TransportStdio), `"evt-1"`)
		})
	}
	wg.Wait()
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	got := blankIDs(envelopeOf(t, handle(t, b, harnessEvent(`"z"`, "ls"), bridge.TransportStdio), `"z"`))
	if !strings.Contains(got, `"decision":"block"`) {
		t.Errorf("after Close: %s", got)
	}
	if err := closer.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("second Close: %v", err)
	}
}
