package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
	"go.yaml.in/yaml/v3"
)

const (
	agentToken = "agent-token-0123456789abcdef"
	watchToken = "watch-token-0123456789abcdef"
)

func authenticator(t *testing.T) *auth.Authenticator {
	t.Helper()
	var cfg auth.Config
	if err := yaml.Unmarshal([]byte(`
tokens:
  - {name: agent, scopes: [agent], env: AGENT_TOKEN}
  - {name: watcher, scopes: [watch], env: WATCH_TOKEN}
`), &cfg); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENT_TOKEN": agentToken, "WATCH_TOKEN": watchToken}
	a, err := auth.New(cfg, auth.Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Logger:    testkit.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func bearer(token string) connect.ClientOption {
	return connect.WithInterceptors(auth.ClientInterceptor(auth.Credential{Kind: auth.KindBearer, Secret: token}))
}

func TestAuthAndMetricsWiredIntoEveryService(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{NoRuntimeMetrics: true})
	srv, err := server.New(server.Config{Auth: authenticator(t), Metrics: m, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	mem := memhttp.Serve(t, srv.HTTPServer())
	ctx := context.Background()

	for _, proto := range protocols {
		anon := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL(), proto.opts...)
		_, err := anon.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("auth-anon-"+proto.name, "ls")}))
		if connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("%s: no credential: %v", proto.name, err)
		}
		wrong := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL(), append(proto.opts, bearer(watchToken))...)
		_, err = wrong.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("auth-wrong-"+proto.name, "ls")}))
		if connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: watch token on Intercept: %v", proto.name, err)
		}
		ok := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL(), append(proto.opts, bearer(agentToken))...)
		resp, err := ok.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: testkit.ShellEvent("auth-ok-"+proto.name, "rm -rf /")}))
		if err != nil {
			t.Errorf("%s: agent token: %v", proto.name, err)
		} else if resp.Msg.GetDecision().GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
			t.Errorf("%s: agent token: resp.Msg.GetDecision().GetVerdict() = %v, want VERDICT_DENY", proto.name, resp.Msg.GetDecision().GetVerdict())
		}
		if err != nil && strings.Contains(err.Error(), agentToken) {
			t.Errorf("%s: error leaks the token", proto.name)
		}
	}
	// Watch needs the watch scope.
	watch := ahpv1connect.NewObservationServiceClient(mem.Client(), mem.URL(), bearer(agentToken))
	stream, err := watch.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
	if err == nil {
		for stream.Receive() {
		}
		err = stream.Err()
	}
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("agent token on Watch: %v", err)
	}

	// The metrics saw the decisions and the refusals.
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`ahp_decisions_total{synthetic="false",verdict="deny"} 4`,
		`ahp_rule_matches_total{mode="enforce",rule="deny-rm-rf-root"} 4`,
		`ahp_policy_info{digest=`,
		`ahp_auth_failures_total{reason="missing"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Identifiers longer than the schema allows are refused at the service boundary, for every
// protocol, naming the field; session memory never sees them.
func TestOverlongIdentifiersAreInvalid(t *testing.T) {
	t.Parallel()
	ts := start(t, basePolicy, nil)
	long := strings.Repeat("x", 257)
	cases := map[string]func(ev *ahpv1.Event){
		"event.session.id":       func(ev *ahpv1.Event) { ev.Session.Id = long },
		"event.session.agent.id": func(ev *ahpv1.Event) { ev.Session.Agent = &ahpv1.Agent{Id: long} },
		"event.tool.name":        func(ev *ahpv1.Event) { ev.Tool.Name = long },
		"event.source":           func(ev *ahpv1.Event) { ev.Source = strings.Repeat("x", 1025) },
	}
	for field, edit := range cases {
		ev := testkit.ShellEvent("long-"+field, "ls")
		edit(ev)
		_, err := ts.intercept().Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), field) {
			t.Errorf("%s too long: %v, want invalid_argument naming it", field, err)
		}
	}
}
