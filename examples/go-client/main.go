// Command go-client calls ahp-server with the generated Connect client (gen/ahp/v1/ahpv1connect):
// it opens a Watch on a new session, asks Intercept for two decisions (rm -rf / is denied, ls is
// allowed), reads both back from the watch, and shows how a refused call looks as a *connect.Error.
// It exits 1 when anything differs from that, so CI runs it as a test.
//
//	AHP_TOKEN=… go run . -url http://127.0.0.1:8080   # AHP_TOKEN only when the server requires auth
//
// Approvals are not in the API yet; when they are, this example will show one.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

func main() {
	url := flag.String("url", envOr("AHP_SERVER_URL", "http://127.0.0.1:8080"), "ahp-server base URL")
	grpc := flag.Bool("grpc", false, "speak gRPC instead of the Connect protocol")
	flag.Parse()
	log.SetFlags(0)
	if err := run(*url, *grpc, os.Getenv("AHP_TOKEN")); err != nil {
		log.Fatalf("go-client: %v", err)
	}
}

func run(baseURL string, useGRPC bool, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	// HTTP/2 without TLS (h2c), as ahp-server serves on http://; an https:// URL negotiates HTTP/2 over TLS.
	transport := &http.Transport{Protocols: new(http.Protocols)}
	transport.Protocols.SetHTTP1(true)
	transport.Protocols.SetHTTP2(true)
	transport.Protocols.SetUnencryptedHTTP2(true)
	httpClient := &http.Client{Transport: transport}
	opts := []connect.ClientOption{}
	if useGRPC {
		opts = append(opts, connect.WithGRPC())
	}
	if token != "" {
		opts = append(opts, connect.WithInterceptors(bearer{token: token}))
	}
	intercept := ahpv1connect.NewInterceptServiceClient(httpClient, baseURL, opts...)
	observation := ahpv1connect.NewObservationServiceClient(httpClient, baseURL, opts...)

	// Watch with a filter: this session's decisions only.
	session := "go-example-" + rand.Text()
	watch, err := observation.Watch(ctx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: session, DecisionsOnly: true}))
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer watch.Close()
	// ahp-server sends the response headers once it has subscribed: nothing published after this is missed.
	watch.ResponseHeader()

	for _, command := range []string{"rm -rf /", "ls"} {
		res, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: shellEvent(session, command)}))
		if err != nil {
			return fmt.Errorf("intercept %q: %w", command, err)
		}
		d := res.Msg.GetDecision()
		fmt.Printf("intercept %-10q verdict=%s decision=%s%s\n", command, d.GetVerdict(), d.GetDecisionId(), denial(d))
	}

	var verdicts []ahpv1.Verdict
	for len(verdicts) < 2 && watch.Receive() {
		item := watch.Msg()
		verdicts = append(verdicts, item.GetDecision().GetVerdict())
		fmt.Printf("watch     %-10q verdict=%s\n", item.GetEvent().GetTool().GetInput().GetFields()["command"].GetStringValue(), item.GetDecision().GetVerdict())
	}
	if err := watch.Err(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	if len(verdicts) != 2 || verdicts[0] != ahpv1.Verdict_VERDICT_DENY || verdicts[1] != ahpv1.Verdict_VERDICT_ALLOW {
		return fmt.Errorf("watch saw %v, want [VERDICT_DENY VERDICT_ALLOW]", verdicts)
	}

	// A refused call is a *connect.Error: its code and the server's message (which names the field).
	invalid := shellEvent(session, "ls")
	invalid.Id = ""
	_, err = intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: invalid}))
	var cerr *connect.Error
	if !errors.As(err, &cerr) || cerr.Code() != connect.CodeInvalidArgument {
		return fmt.Errorf("an event without an id: got %v, want invalid_argument", err)
	}
	fmt.Printf("error     code=%s message=%q\n", cerr.Code(), cerr.Message())
	return nil
}

// shellEvent is a tool.before event for a shell command in session.
func shellEvent(session, command string) *ahpv1.Event {
	id := "go-example-" + rand.Text()
	input, _ := structpb.NewStruct(map[string]any{"command": command}) // a string value cannot fail
	return &ahpv1.Event{
		Id:      id,
		Source:  "urn:ahp:examples:go-client",
		Type:    ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		Session: &ahpv1.Session{Id: session},
		Tool:    &ahpv1.Tool{CallId: "call-" + id, Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input},
	}
}

// denial describes the first deny effect of d, or is empty.
func denial(d *ahpv1.Decision) string {
	for _, e := range d.GetEffects() {
		if deny := e.GetDeny(); deny != nil {
			return fmt.Sprintf(" rule=%s code=%s reason=%q", e.GetRuleId(), deny.GetCode(), deny.GetReason())
		}
	}
	return ""
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// bearer sends a bearer token on every call, unary and streaming. It prints as bearer:[REDACTED].
type bearer struct{ token string }

func (b bearer) String() string { return "bearer:[REDACTED]" }

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+b.token)
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+b.token)
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
