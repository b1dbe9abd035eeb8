package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
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

// TestUnknownEnumValuesAreRefusedInEveryProtocol: an unknown tool kind is refused as the Hooks
// codec refuses it — by name in Connect JSON, by number in binary protobuf — instead of being
// dropped and the call decided as if the tool had no kind.
func TestUnknownEnumValuesAreRefusedInEveryProtocol(t *testing.T) {
	t.Parallel()
	srv, err := server.New(server.Config{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	mem := memhttp.Serve(t, srv.HTTPServer())
	body := `{"event":{"id":"e","source":"urn:x","type":"EVENT_TYPE_TOOL_BEFORE","tool":{"callId":"c","name":"Bash","kind":"TOOL_KIND_TELEPORT"}}}`
	req, _ := http.NewRequest(http.MethodPost, mem.URL()+ahpv1connect.InterceptServiceInterceptProcedure, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := mem.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "field kind") || strings.Contains(string(b), "TELEPORT") {
		t.Errorf("JSON with an unknown kind name: %d %s, want 400 naming the field, not the value", resp.StatusCode, b)
	}
	// An unknown field is still fine (newer clients), as long as the enums are known.
	ok := `{"event":{"id":"e2","source":"urn:x","type":"EVENT_TYPE_TOOL_BEFORE","futureField":1,"tool":{"callId":"c","name":"Bash","kind":"TOOL_KIND_SHELL"}}}`
	req, _ = http.NewRequest(http.MethodPost, mem.URL()+ahpv1connect.InterceptServiceInterceptProcedure, strings.NewReader(ok))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = mem.Client().Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("JSON with an unknown field: %d, want 200", resp.StatusCode)
	}

	client := ahpv1connect.NewInterceptServiceClient(mem.Client(), mem.URL())
	ev := testkit.ShellEvent("e3", "ls")
	ev.Tool.Kind = 99
	_, err = client.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "event.tool.kind") {
		t.Errorf("binary with kind 99: %v, want invalid_argument naming event.tool.kind", err)
	}
}
