package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
)

// stub answers every RPC with an empty message and reports, in the X-Principal response header,
// who the auth layer said called, and in X-Saw-Credential whether a credential header reached it.
type stub struct {
	ahpv1connect.UnimplementedInterceptServiceHandler
	ahpv1connect.UnimplementedTypedDecisionServiceHandler
	ahpv1connect.UnimplementedObservationServiceHandler
	ahpv1connect.UnimplementedHarnessServiceHandler
}

func describe(ctx context.Context, reqHeader, respHeader http.Header) {
	if p, ok := auth.PrincipalFrom(ctx); ok {
		respHeader.Set("X-Principal", p.Name)
	}
	if reqHeader.Get("Authorization") != "" || reqHeader.Get("X-Api-Key") != "" {
		respHeader.Set("X-Saw-Credential", "yes")
	}
}

func unary[Req, Res any](ctx context.Context, req *connect.Request[Req]) (*connect.Response[Res], error) {
	resp := connect.NewResponse(new(Res))
	describe(ctx, req.Header(), resp.Header())
	return resp, nil
}

func (stub) Intercept(ctx context.Context, r *connect.Request[ahpv1.InterceptRequest]) (*connect.Response[ahpv1.InterceptResponse], error) {
	return unary[ahpv1.InterceptRequest, ahpv1.InterceptResponse](ctx, r)
}

func (stub) InterceptStream(ctx context.Context, s *connect.BidiStream[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse]) error {
	describe(ctx, s.RequestHeader(), s.ResponseHeader())
	for {
		if _, err := s.Receive(); err != nil {
			return nil
		}
		if err := s.Send(&ahpv1.InterceptStreamResponse{}); err != nil {
			return err
		}
	}
}

func (stub) Idle(ctx context.Context, r *connect.Request[ahpv1.IdleRequest]) (*connect.Response[ahpv1.IdleResponse], error) {
	return unary[ahpv1.IdleRequest, ahpv1.IdleResponse](ctx, r)
}

func (stub) Observe(ctx context.Context, r *connect.Request[ahpv1.ObserveRequest]) (*connect.Response[ahpv1.ObserveResponse], error) {
	return unary[ahpv1.ObserveRequest, ahpv1.ObserveResponse](ctx, r)
}

func (stub) ObserveStream(ctx context.Context, s *connect.ClientStream[ahpv1.ObserveStreamRequest]) (*connect.Response[ahpv1.ObserveStreamResponse], error) {
	for s.Receive() {
	}
	resp := connect.NewResponse(&ahpv1.ObserveStreamResponse{})
	describe(ctx, s.RequestHeader(), resp.Header())
	return resp, nil
}

func (stub) Watch(ctx context.Context, r *connect.Request[ahpv1.WatchRequest], s *connect.ServerStream[ahpv1.WatchResponse]) error {
	describe(ctx, r.Header(), s.ResponseHeader())
	return s.Send(&ahpv1.WatchResponse{})
}

func (stub) Handshake(ctx context.Context, r *connect.Request[ahpv1.HandshakeRequest]) (*connect.Response[ahpv1.HandshakeResponse], error) {
	return unary[ahpv1.HandshakeRequest, ahpv1.HandshakeResponse](ctx, r)
}

func (stub) GetCapabilities(ctx context.Context, r *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
	return unary[ahpv1.GetCapabilitiesRequest, ahpv1.GetCapabilitiesResponse](ctx, r)
}

// serve runs the stub services, health included, behind opt on HTTP/1.1 + h2c, like ahp-server.
func serve(t *testing.T, opt connect.HandlerOption) *memhttp.Server {
	t.Helper()
	mux := http.NewServeMux()
	var s stub
	mux.Handle(ahpv1connect.NewInterceptServiceHandler(s, opt))
	mux.Handle(ahpv1connect.NewTypedDecisionServiceHandler(s, opt))
	mux.Handle(ahpv1connect.NewObservationServiceHandler(s, opt))
	mux.Handle(ahpv1connect.NewHarnessServiceHandler(s, opt))
	mux.Handle(grpchealth.NewHandler(grpchealth.NewStaticChecker(), opt))
	return memhttp.New(t, mux)
}

// result is what a call saw.
type result struct {
	principal     string
	sawCredential bool
	err           error
}

type clients struct {
	intercept ahpv1connect.InterceptServiceClient
	typed     ahpv1connect.TypedDecisionServiceClient
	observe   ahpv1connect.ObservationServiceClient
	harness   ahpv1connect.HarnessServiceClient
}

func fromHeader(h http.Header, err error) result {
	return result{principal: h.Get("X-Principal"), sawCredential: h.Get("X-Saw-Credential") != "", err: err}
}

func unaryResult[T any](resp *connect.Response[T], err error) result {
	if err != nil {
		return result{err: err}
	}
	return fromHeader(resp.Header(), nil)
}

// rpc is one representative call per service and per stream shape.
type rpc struct {
	name  string
	scope auth.Scope
	call  func(context.Context, clients) result
}

var rpcs = []rpc{
	{"Intercept", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		return unaryResult(c.intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{})))
	}},
	{"InterceptStream", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		s := c.intercept.InterceptStream(ctx)
		if err := s.Send(&ahpv1.InterceptStreamRequest{}); err != nil && !errors.Is(err, io.EOF) {
			return result{err: err}
		}
		_ = s.CloseRequest()
		_, err := s.Receive()
		res := fromHeader(s.ResponseHeader(), err)
		_ = s.CloseResponse()
		return res
	}},
	{"Idle", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		return unaryResult(c.typed.Idle(ctx, connect.NewRequest(&ahpv1.IdleRequest{})))
	}},
	{"Observe", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		return unaryResult(c.observe.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{})))
	}},
	{"ObserveStream", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		s := c.observe.ObserveStream(ctx)
		_ = s.Send(&ahpv1.ObserveStreamRequest{}) // an early refusal surfaces in CloseAndReceive
		return unaryResult(s.CloseAndReceive())
	}},
	{"Watch", auth.ScopeWatch, func(ctx context.Context, c clients) result {
		s, err := c.observe.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
		if err != nil {
			return result{err: err}
		}
		defer s.Close()
		if !s.Receive() {
			return result{err: s.Err()}
		}
		return fromHeader(s.ResponseHeader(), nil)
	}},
	{"Handshake", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		return unaryResult(c.harness.Handshake(ctx, connect.NewRequest(&ahpv1.HandshakeRequest{})))
	}},
	{"GetCapabilities", auth.ScopeAgent, func(ctx context.Context, c clients) result {
		return unaryResult(c.harness.GetCapabilities(ctx, connect.NewRequest(&ahpv1.GetCapabilitiesRequest{})))
	}},
}

// TestAuthMatrix drives every representative RPC over every protocol with every kind of
// credential, through both the request gate and the interceptor.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	protocols := []struct {
		name string
		opt  connect.ClientOption
	}{
		{"connect", connect.WithProtoJSON()},
		{"grpc", connect.WithGRPC()},
		{"grpcweb", connect.WithGRPCWeb()},
	}
	type credCase struct {
		name string
		// secret returns the secret to present for an RPC needing scope with kind k, or "".
		secret func(scope auth.Scope, k auth.Kind) string
		// want is the code; 0 means success.
		want connect.Code
		// principal expected on success.
		principal func(scope auth.Scope, k auth.Kind) string
	}
	valid := func(scope auth.Scope, k auth.Kind) string {
		switch {
		case scope == auth.ScopeAgent && k == auth.KindBearer:
			return agentToken
		case scope == auth.ScopeAgent:
			return agentKey
		case k == auth.KindBearer:
			return watchToken
		}
		return watchKey
	}
	creds := []credCase{
		{name: "missing", secret: func(auth.Scope, auth.Kind) string { return "" }, want: connect.CodeUnauthenticated},
		{name: "invalid", secret: func(auth.Scope, auth.Kind) string { return wrongToken }, want: connect.CodeUnauthenticated},
		{name: "wrong-scope", want: connect.CodePermissionDenied, secret: func(scope auth.Scope, k auth.Kind) string {
			other := auth.ScopeWatch
			if scope == auth.ScopeWatch {
				other = auth.ScopeAgent
			}
			return valid(other, k)
		}},
		{name: "valid", secret: valid, principal: func(scope auth.Scope, k auth.Kind) string {
			return map[string]string{agentToken: "agent-bearer", agentKey: "agent-key", watchToken: "watch-bearer", watchKey: "watch-key"}[valid(scope, k)]
		}},
	}
	kinds := []auth.Kind{auth.KindBearer, auth.KindAPIKey}

	for _, mode := range []string{"gate", "interceptor"} {
		var (
			mu      sync.Mutex
			denials = map[auth.Reason]int{}
		)
		a := newAuth(t, testConfig, auth.Options{OnDeny: func(d auth.Denial) {
			mu.Lock()
			defer mu.Unlock()
			denials[d.Reason]++
		}})
		opt := a.HandlerOption()
		if mode == "interceptor" {
			opt = connect.WithInterceptors(a.Interceptor())
		}
		srv := serve(t, opt)
		url, http := srv.URL(), srv.Client()
		t.Run(mode, func(t *testing.T) {
			for _, p := range protocols {
				for _, r := range rpcs {
					for _, cc := range creds {
						for _, k := range kinds {
							t.Run(fmt.Sprintf("%s/%s/%s/%s", p.name, r.name, cc.name, k), func(t *testing.T) {
								t.Parallel()
								opts := []connect.ClientOption{p.opt}
								if s := cc.secret(r.scope, k); s != "" {
									opts = append(opts, connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: k, Secret: s})))
								}
								c := clients{
									intercept: ahpv1connect.NewInterceptServiceClient(http, url, opts...),
									typed:     ahpv1connect.NewTypedDecisionServiceClient(http, url, opts...),
									observe:   ahpv1connect.NewObservationServiceClient(http, url, opts...),
									harness:   ahpv1connect.NewHarnessServiceClient(http, url, opts...),
								}
								res := r.call(context.Background(), c)
								if cc.want == 0 {
									if res.err != nil {
										t.Fatalf("err = %v, want success", res.err)
									}
									assertEqual(t, "principal", res.principal, cc.principal(r.scope, k))
									assertEqual(t, "handler saw the credential", res.sawCredential, false)
									return
								}
								assertEqual(t, "code", connect.CodeOf(res.err), cc.want)
								assertNoSecret(t, "error", fmt.Sprint(res.err))
							})
						}
					}
				}
			}
		})
		// Every refused call was reported once, with the right reason.
		per := len(protocols) * len(rpcs) * len(kinds)
		mu.Lock()
		assertEqual(t, mode+" missing denials", denials[auth.ReasonMissing], per)
		assertEqual(t, mode+" invalid denials", denials[auth.ReasonInvalid], per)
		assertEqual(t, mode+" scope denials", denials[auth.ReasonScope], per)
		mu.Unlock()
	}
}

// TestCredentialKindIsBound: a token is not an API key and the other way round.
func TestCredentialKindIsBound(t *testing.T) {
	t.Parallel()
	a := newAuth(t, testConfig, auth.Options{})
	for _, c := range []auth.Credential{{Kind: auth.KindAPIKey, Secret: agentToken}, {Kind: auth.KindBearer, Secret: agentKey}} {
		if _, err := a.Authenticate(c); !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("Authenticate(%v) = %v, want ErrInvalid", c, err)
		}
	}
	srv := serve(t, a.HandlerOption())
	client := ahpv1connect.NewHarnessServiceClient(srv.Client(), srv.URL(), connect.WithGRPC(),
		connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindAPIKey, Secret: agentToken})))
	_, err := client.GetCapabilities(context.Background(), connect.NewRequest(&ahpv1.GetCapabilitiesRequest{}))
	assertEqual(t, "code", connect.CodeOf(err), connect.CodeUnauthenticated)
}

// TestConnectChallengeHeader: a Connect unary 401 carries an RFC 6750 challenge.
func TestConnectChallengeHeader(t *testing.T) {
	t.Parallel()
	a := newAuth(t, testConfig, auth.Options{})
	srv := serve(t, a.HandlerOption())
	for _, tc := range []struct{ auth, want string }{
		{"", `Bearer realm="ahp"`},
		{"Bearer " + wrongToken, `Bearer realm="ahp", error="invalid_token"`},
		{"Basic dXNlcjpwYXNz", `Bearer realm="ahp", error="invalid_request"`},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+ahpv1connect.HarnessServiceGetCapabilitiesProcedure, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := srv.HTTP1Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		assertEqual(t, "status", resp.StatusCode, http.StatusUnauthorized)
		assertEqual(t, "WWW-Authenticate", resp.Header.Get("WWW-Authenticate"), tc.want)
	}
}

// TestPublicHealth: health is public by default and closed when configured so.
func TestPublicHealth(t *testing.T) {
	t.Parallel()
	check := func(srv *memhttp.Server, header http.Header) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/grpc.health.v1.Health/Check", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := srv.HTTP1Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	open := serve(t, newAuth(t, testConfig, auth.Options{}).HandlerOption())
	assertEqual(t, "public health, no credentials", check(open, nil), http.StatusOK)

	closed := serve(t, newAuth(t, testConfig+"public_health: false\n", auth.Options{}).HandlerOption())
	assertEqual(t, "closed health, no credentials", check(closed, nil), http.StatusUnauthorized)
	// Closed health admits any authenticated caller, whatever its scopes.
	assertEqual(t, "closed health, watch key", check(closed, http.Header{"X-Api-Key": {watchKey}}), http.StatusOK)
}

// TestUnknownProcedureIsDenied: a mounted procedure without a rule is closed to everyone.
func TestUnknownProcedureIsDenied(t *testing.T) {
	t.Parallel()
	rules := auth.DefaultRules(auth.Config{})
	delete(rules, ahpv1connect.HarnessServiceQueryProcedure)
	var reasons []auth.Reason
	a := newAuth(t, testConfig, auth.Options{Rules: rules, OnDeny: func(d auth.Denial) { reasons = append(reasons, d.Reason) }})
	srv := serve(t, a.HandlerOption())
	client := ahpv1connect.NewHarnessServiceClient(srv.Client(), srv.URL(),
		connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindBearer, Secret: agentToken})))
	_, err := client.Query(context.Background(), connect.NewRequest(&ahpv1.QueryRequest{}))
	assertEqual(t, "code", connect.CodeOf(err), connect.CodePermissionDenied)
	if len(reasons) != 1 {
		t.Errorf("%d denials %v, want one", len(reasons), reasons)
	} else if reasons[0] != auth.ReasonNoRule {
		t.Errorf("denial reason %s, want no_rule", reasons[0])
	}
}

// TestDisabledAdmitsEverything: with no credentials configured nothing is checked.
func TestDisabledAdmitsEverything(t *testing.T) {
	t.Parallel()
	a := newAuth(t, "", auth.Options{})
	assertEqual(t, "mode", a.Mode(), auth.Disabled)
	srv := serve(t, a.HandlerOption())
	client := ahpv1connect.NewObservationServiceClient(srv.Client(), srv.URL(), connect.WithGRPC())
	s, err := client.Watch(context.Background(), connect.NewRequest(&ahpv1.WatchRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Receive() {
		t.Fatalf("Watch: %v", s.Err())
	}
	assertEqual(t, "principal", s.ResponseHeader().Get("X-Principal"), "")
}
