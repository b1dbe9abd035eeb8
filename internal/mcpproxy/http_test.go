package mcpproxy_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/mcpproxy"
	"github.com/ahp-gateway/ahp/internal/mcpproxy/mcptest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// httpRig is the test MCP server served over Streamable HTTP by the SDK's handler, the gateway in
// front of it, and the SDK's client talking to the gateway.
type httpRig struct {
	*rig
	proxyURL string
	rec      *recorder
	progress chan float64
}

func newHTTPRig(t *testing.T, protocol string, limit int) *httpRig {
	t.Helper()
	return newHTTPRigWith(t, protocol, limit, embedded(t), 0)
}

// newHTTPRigWith is newHTTPRig deciding with clients, and Config.ApprovalWait wait.
func newHTTPRigWith(t *testing.T, protocol string, limit int, clients bridge.Clients, wait time.Duration) *httpRig {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "calls.log")
	srv := mcptest.New(logPath)
	target := testkit.StartLoopback(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))

	rec := record(clients)
	proxy, err := mcpproxy.New(mcpproxy.Config{Clients: rec.clients(), MaxMessageBytes: limit, ApprovalWait: wait, Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := proxy.NewHTTP(target, mcpproxy.HTTPOptions{LoopbackHostsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	testkit.CloseAtEnd(t, "HTTP gateway", h.Close)
	proxyURL := testkit.StartLoopback(t, h)

	progress := make(chan float64, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "http-client"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Progress
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxyURL}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting through the HTTP gateway: %v", err)
	}
	t.Cleanup(func() { session.Close() })
	r := &rig{t: t, session: session, dir: dir, logPath: logPath, stderr: &clitest.Output{}}
	return &httpRig{rig: r, proxyURL: proxyURL, rec: rec, progress: progress}
}

func TestHTTPGateway(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			t.Parallel()
			r := newHTTPRig(t, protocol, mcpproxy.DefaultMaxMessageBytes)
			progress := r.progress

			// Allowed, observed with the same call id.
			if res := r.mustCall("echo", map[string]any{"text": "over http"}); res.IsError || texts(res)[0] != "echo: over http" {
				t.Errorf("allowed: %q", texts(res))
			}
			before := testkit.Receive(t, r.rec.before, "no tool.before")
			if before.GetTool().GetName() != "mcp__testserver__echo" || before.GetTool().GetMcp().GetServer() != "testserver" {
				t.Errorf("tool.before %v: want the server's name from its handshake", before.GetTool())
			}
			after := testkit.Receive(t, r.rec.observed, "no tool.after")
			if after.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_AFTER || after.GetTool().GetCallId() != before.GetTool().GetCallId() {
				t.Errorf("tool.after %v %q, want the call id %q", after.GetType(), after.GetTool().GetCallId(), before.GetTool().GetCallId())
			}

			// Denied: never reaches the server.
			target := filepath.Join(r.dir, "forbidden-x.txt")
			if res := r.mustCall("write_file", map[string]any{"path": target, "content": "x"}); !res.IsError || texts(res)[0] != "Writing under forbidden/ is not allowed." {
				t.Errorf("denied: %q", texts(res))
			}
			testkit.Receive(t, r.rec.before, "no tool.before")
			if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the denied write happened: %v", err)
			}

			// Modified: the server writes where the policy said.
			if res := r.mustCall("write_file", map[string]any{"path": filepath.Join(r.dir, "redirect-me.txt"), "content": "m"}); res.IsError {
				t.Errorf("modified: %q", texts(res))
			}
			testkit.Receive(t, r.rec.before, "no tool.before")
			if b, err := os.ReadFile(filepath.Join(r.dir, "redirected.txt")); err != nil || string(b) != "m" {
				t.Errorf("redirected.txt: %q, %v", b, err)
			}

			// Progress over the call's event stream.
			params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 2}}
			params.SetProgressToken("h-1")
			ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
			defer cancel()
			if _, err := r.session.CallTool(ctx, params); err != nil {
				t.Fatal(err)
			}
			for want := 1.0; want <= 2; want++ {
				if got := testkit.Receive(t, progress, "progress not relayed"); got != want {
					t.Errorf("progress %v, want %v", got, want)
				}
			}
			if tools, err := r.session.ListTools(ctx, nil); err != nil || len(tools.Tools) != 8 {
				t.Errorf("tools/list: %v %v", tools, err)
			}
			got := r.received()
			if len(got) != 3 || got[0]["tool"] != "echo" || got[1]["tool"] != "write_file" || got[2]["tool"] != "progress" {
				t.Errorf("server received %v", got)
			}
		})
	}
}

func TestHTTPGatewayRefusals(t *testing.T) {
	t.Parallel()
	r := newHTTPRig(t, "2025-11-25", 16<<10)
	// A foreign Host header (DNS rebinding) is refused.
	req, err := http.NewRequest(http.MethodPost, r.proxyURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "attacker.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: status %d, want 403", resp.StatusCode)
	}
	// A batch with a tools/call is refused.
	resp, err = http.Post(r.proxyURL, "application/json", strings.NewReader(`[{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("batch with tools/call: status %d, want 400", resp.StatusCode)
	}
	if res := r.mustCall("echo", map[string]any{"text": "small"}); texts(res)[0] != "echo: small" {
		t.Errorf("after the refusals: %q", texts(res))
	}
	// An oversized POST is refused (413) before anything reaches the server.
	if _, err := r.call("echo", map[string]any{"text": strings.Repeat("a", 32<<10)}); err == nil {
		t.Error("an oversized POST went through")
	}
	if got := r.received(); len(got) != 1 {
		t.Errorf("server received %v, want only the small echo", got)
	}
}
