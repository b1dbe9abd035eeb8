package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
)

// echoSecret is a secret-looking value fed into every error path below.
const echoSecret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"

// TestErrorsNeverEchoValues feeds secret-looking values into each error the Connect JSON
// protocol can give for a bad message — a string in a number field, a duplicate map key, a bad
// token, a bad number, a wrong-type enum, an unknown field name in the path — and checks that no
// reply carries the value, while each still says where and what.
func TestErrorsNeverEchoValues(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	mem := memhttp.Serve(t, srv.HTTPServer())
	s := echoSecret
	for _, c := range []struct{ name, body, want string }{
		{"string in a uint32", `{"event":{"id":"e","harness":{"depth":"` + s + `"}}}`, "field depth"},
		{"duplicate map key", `{"event":{"id":"e","tool":{"input":{"password=` + s + `":1,"password=` + s + `":2}}}}`, "duplicate map key"},
		{"bare word", `{"event":{"id":"e","tool":{"input":` + s + `}}}`, "invalid value"},
		{"unexpected token", `{"event":{"id":"e","tool":{"input":["` + s + `" "` + s + `"]}}}`, "unexpected token"},
		{"bad number", `{"event":{"id":"e","harness":{"depth":1e` + s + `}}}`, "invalid value"},
		{"number in an enum", `{"event":{"id":"e","tool":{"kind":{"` + s + `":1}}}}`, "field kind"},
		{"object in a string", `{"event":{"id":{"x":"` + s + `"}}}`, "field id"},
		{"bare word in a struct", `{"event":{"id":"e","native":{"payload":{"x":` + s + `}}}}`, "invalid value"},
	} {
		for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
			req, _ := http.NewRequest(http.MethodPost, mem.URL()+ahpv1connect.InterceptServiceInterceptProcedure, strings.NewReader(c.body))
			req.Header.Set("Content-Type", ct)
			resp, err := mem.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "ghp_") || strings.Contains(string(body), "0123456789abcdef") {
				t.Errorf("%s (%s): the reply echoes the value: %s", c.name, ct, body)
			}
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), c.want) {
				t.Errorf("%s (%s): %d %s, want 400 naming %q", c.name, ct, resp.StatusCode, body, c.want)
			}
		}
	}
}
