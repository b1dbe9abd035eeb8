package auth_test

import (
	"fmt"
	"testing"

	"connectrpc.com/grpcreflect"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/auth"
)

// TestEveryRPCHasARule walks the ahp.v1 schema, so an RPC added to it without a rule fails here
// (it would be denied to everyone at run time).
func TestEveryRPCHasARule(t *testing.T) {
	t.Parallel()
	rules := auth.DefaultRules(auth.Config{})
	services := ahpv1.File_ahp_v1_service_proto.Services()
	n := 0
	for i := range services.Len() {
		svc := services.Get(i)
		for j := range svc.Methods().Len() {
			m := svc.Methods().Get(j)
			procedure := fmt.Sprintf("/%s/%s", svc.FullName(), m.Name())
			want := auth.ScopeAgent
			if procedure == "/ahp.v1.ObservationService/Watch" {
				want = auth.ScopeWatch
			}
			rule, ok := rules.Lookup(procedure)
			switch {
			case !ok:
				t.Errorf("%s: no rule", procedure)
			case rule.Public:
				t.Errorf("%s: public, want scope %s", procedure, want)
			case rule.Scope != want:
				t.Errorf("%s: scope %s, want %s", procedure, rule.Scope, want)
			}
			n++
		}
	}
	assertEqual(t, "RPCs checked", n, 17)
}

func TestHealthAndReflectionRules(t *testing.T) {
	t.Parallel()
	no := false
	for _, tc := range []struct {
		cfg                     auth.Config
		health, reflect, alphaR bool
	}{
		{auth.Config{}, true, true, true},
		{auth.Config{PublicHealth: &no}, false, true, true},
		{auth.Config{PublicReflection: &no}, true, false, false},
	} {
		r := auth.DefaultRules(tc.cfg)
		for procedure, public := range map[string]bool{
			"/grpc.health.v1.Health/Check":                                   tc.health,
			"/grpc.health.v1.Health/Watch":                                   tc.health,
			"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":      tc.reflect,
			"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": tc.alphaR,
		} {
			rule, ok := r.Lookup(procedure)
			switch {
			case !ok:
				t.Errorf("%s: no rule", procedure)
			case rule.Public != public:
				t.Errorf("%s: public %v, want %v", procedure, rule.Public, public)
			case rule.Scope != "":
				t.Errorf("%s: scope %s, want none", procedure, rule.Scope)
			}
		}
	}
	// The names are spelled out in the package (it does not link grpcreflect); they must be
	// grpcreflect's own.
	for _, service := range []string{grpcreflect.ReflectV1ServiceName, grpcreflect.ReflectV1AlphaServiceName} {
		if rule, ok := auth.DefaultRules(auth.Config{}).Lookup("/" + service + "/ServerReflectionInfo"); !ok {
			t.Errorf("%s: no rule", service)
		} else if !rule.Public {
			t.Errorf("%s: %+v, want public", service, rule)
		}
	}
	if _, ok := auth.DefaultRules(auth.Config{}).Lookup("/ahp.v1.AdminService/ReloadPolicy"); ok {
		t.Error("an unknown procedure has a rule")
	}
}
