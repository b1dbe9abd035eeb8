package auth_test

import (
	"fmt"
	"net/http"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/auth"
)

// A server loads the auth section, gates every Connect handler with it, and reports refusals.
func Example() {
	cfg, err := auth.ParseConfig([]byte(`
tokens:
  - {name: ci-agent, scopes: [agent], env: AHP_CI_TOKEN}
  - {name: dashboard, scopes: [watch], env: AHP_DASHBOARD_TOKEN}
`))
	if err != nil {
		panic(err)
	}
	env := map[string]string{"AHP_CI_TOKEN": "ci-0123456789abcdef", "AHP_DASHBOARD_TOKEN": "dash-0123456789abcdef"}
	a, err := auth.New(cfg, auth.Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		OnDeny:    func(d auth.Denial) { fmt.Println("refused:", d.Procedure, d.Reason, d.Principal) },
	})
	if err != nil {
		panic(err)
	}
	_ = a.HandlerOption() // pass to every ahpv1connect.New…Handler, grpchealth and grpcreflect

	// What the gate decides for a call, given its headers:
	h := http.Header{"Authorization": {"Bearer ci-0123456789abcdef"}}
	c, credErr := auth.FromHeader(h)
	p, err := a.Authorize(ahpv1connect.InterceptServiceInterceptProcedure, c, credErr)
	fmt.Println(p.Name, p.Scopes(), err)
	_, err = a.Authorize(ahpv1connect.ObservationServiceWatchProcedure, c, credErr)
	fmt.Println(err)
	// Output:
	// ci-agent [agent] <nil>
	// permission denied: /ahp.v1.ObservationService/Watch needs the "watch" scope
}

// Without credentials the server must stay on loopback; anything else gets a warning to log.
func ExampleCheckListenAddress() {
	fmt.Printf("%q\n", auth.CheckListenAddress("127.0.0.1:8080", false))
	fmt.Println(auth.CheckListenAddress("0.0.0.0:8080", false))
	// Output:
	// ""
	// listening on every network interface (0.0.0.0:8080) without authentication: anyone who can reach it can ask for decisions and watch every event; configure auth tokens, or listen on 127.0.0.1
}
