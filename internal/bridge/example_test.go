package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/server"
)

// A bridge with the decision core in-process: ahp-jsonrpc-bridge without --upstream. A transport
// hands it one message at a time and writes back Reply.Body, if any.
func Example_embedded() {
	// In the binary: slog.New(slog.NewTextHandler(os.Stderr, nil)); stdout belongs to the stdio
	// transport. Quiet here.
	logger := slog.New(slog.DiscardHandler)
	limits := bridge.DefaultHarnessConfig()
	clients, closer, err := bridge.NewEmbedded(server.Config{Logger: logger, Limits: bridge.ServerLimits(limits)})
	if err != nil {
		log.Fatal(err)
	}
	defer closer.Close()
	b, err := bridge.New(bridge.Config{
		Clients:       clients,
		FailurePolicy: bridge.FailClosed,
		Timeout:       2 * time.Second,
		HarnessConfig: limits,
		Logger:        logger,
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	request := `{"jsonrpc":"2.0","id":"r1","method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":"rm -rf /"}}}}`
	reply := b.Handle(ctx, []byte(request), bridge.TransportStdio)
	var resp struct {
		Result struct{ Decision, Reason string }
	}
	if err := json.Unmarshal(reply.Body, &resp); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Result.Decision+":", resp.Result.Reason)

	notification := `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","output":"ok"}}}`
	reply = b.Handle(ctx, []byte(notification), bridge.TransportStdio)
	fmt.Println("notification answered:", reply.Body != nil)
	// Output:
	// block: Refusing to recursively delete the filesystem root or the home directory.
	// notification answered: false
}

// Wiring against a remote ahp-server, as cmd/ahp-jsonrpc-bridge does with --upstream.
func ExampleNewUpstream() {
	clients, closer, err := bridge.NewUpstream("http://127.0.0.1:8080", bridge.UpstreamOptions{
		BearerTokenEnv: "AHP_UPSTREAM_TOKEN", // optional; the token itself is never logged
		Getenv:         func(string) string { return "example-token" },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer closer.Close()
	b, err := bridge.New(bridge.Config{Clients: clients, FailurePolicy: bridge.FailOpen, Dialect: bridge.DialectHooks})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Config().Dialect, b.Config().FailurePolicy, b.Config().Timeout)
	// Output: hooks fail-open 2s
}
