package stdio_test

import (
	"context"
	"os"
	"strings"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/transport/ndjson"
	"github.com/ahp-gateway/ahp/internal/transport/stdio"
)

// A persistent stdio backend: every line is one message, every answer one line. The handler here
// answers requests with an empty result and leaves notifications unanswered, as a dialect would.
func ExampleServe() {
	h := bridge.HandlerFunc(func(_ context.Context, msg []byte, _ bridge.Transport) bridge.Reply {
		if !strings.Contains(string(msg), `"id"`) {
			return bridge.Reply{} // a notification: no answer
		}
		return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":"1","result":{}}`)}
	})
	stdin := strings.NewReader(`{"jsonrpc":"2.0","method":"hooks/observe","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"1","method":"hooks/intercept","params":{}}` + "\n")
	if err := stdio.Serve(context.Background(), stdin, os.Stdout, h, ndjson.Options{}); err != nil {
		panic(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":"1","result":{}}
}

// The per_event binding: one message in, at most one answer out.
func ExampleServeOnce() {
	h := bridge.HandlerFunc(func(context.Context, []byte, bridge.Transport) bridge.Reply {
		return bridge.Reply{Body: []byte(`{"jsonrpc":"2.0","id":"e1","result":{"protocolVersion":"0.1","effects":[]}}`)}
	})
	stdin := strings.NewReader(`{"jsonrpc":"2.0","id":"e1","method":"hooks/intercept","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":"e2","method":"hooks/intercept","params":{}}` + "\n")
	if err := stdio.ServeOnce(context.Background(), stdin, os.Stdout, h, ndjson.Options{}); err != nil {
		panic(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":"e1","result":{"protocolVersion":"0.1","effects":[]}}
}
