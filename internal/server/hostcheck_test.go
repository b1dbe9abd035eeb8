package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// withHeaders is an http.Client that adds headers to every request, as a browser page or a
// rebinding attacker's would carry them.
func withHeaders(header map[string]string, host string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for k, v := range header {
			r.Header.Set(k, v)
		}
		if host != "" {
			r.Host = host
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDNSRebindingAndCrossSiteRequestsAreRefused: in the default no-auth loopback mode, a request
// under a rebinding attacker's host name, or from another site's page, reaches neither Watch nor
// RecallMemory; the server's own clients (no Origin), loopback names and an allowed origin's
// gRPC-Web calls work.
func TestDNSRebindingAndCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	addr := serveTCP(t, func(c *server.Config) { c.AllowedOrigins = []string{"https://console.example.com"} })
	_, port, _ := strings.Cut(addr, ":")
	ctx := context.Background()
	recall := func(client *http.Client, base string, opts ...connect.ClientOption) error {
		ev := testkit.Event("r-"+base, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL, testkit.Session("s"))
		ev.Body = &ahpv1.Event_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallPayload{SessionId: "s", Query: "q"}}
		_, err := ahpv1connect.NewTypedDecisionServiceClient(client, base, opts...).RecallMemory(ctx, connect.NewRequest(&ahpv1.RecallMemoryRequest{Event: ev}))
		return err
	}
	watch := func(client *http.Client, base string) error {
		// The guard only turns a hang (a watch that was let in and waits for items) into a failure.
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s, err := ahpv1connect.NewObservationServiceClient(client, base).Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{}))
		if err != nil {
			return err
		}
		defer s.Close()
		s.Receive() // the headers or the refusal
		return s.Err()
	}
	for _, base := range []string{"http://" + addr, "http://localhost:" + port} {
		if err := recall(http.DefaultClient, base); err != nil {
			t.Errorf("a client without Origin at %s: %v", base, err)
		}
	}
	rebinding := withHeaders(nil, "rebind.attacker.example:"+port)
	crossSite := withHeaders(map[string]string{"Origin": "https://evil.example"}, "")
	for name, c := range map[string]*http.Client{"rebinding host": rebinding, "cross-site origin": crossSite} {
		err := recall(c, "http://"+addr)
		if connect.CodeOf(err) != connect.CodePermissionDenied || strings.Contains(err.Error(), "evil") || strings.Contains(err.Error(), "attacker") {
			t.Errorf("%s: RecallMemory = %v, want a refusal that echoes nothing", name, err)
		}
		if err := watch(c, "http://"+addr); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: Watch = %v, want a refusal", name, err)
		}
	}
	// gRPC-Web from the allowed origin: the browser's preflight, then the call.
	pre, _ := http.NewRequest(http.MethodOptions, "http://"+addr+ahpv1connect.TypedDecisionServiceRecallMemoryProcedure, nil)
	pre.Header.Set("Origin", "https://console.example.com")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type,x-grpc-web")
	resp, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://console.example.com" {
		t.Errorf("preflight: %d, allow-origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	browser := withHeaders(map[string]string{"Origin": "https://console.example.com"}, "")
	if err := recall(browser, "http://"+addr, connect.WithGRPCWeb()); err != nil {
		t.Errorf("gRPC-Web from the allowed origin: %v", err)
	}
}
