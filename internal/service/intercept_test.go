package service_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"connectrpc.com/connect"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/core"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/service"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"github.com/ahp-gateway/ahp/internal/typed"
)

// A panic while deciding one streamed event runs on that event's goroutine, out of reach of
// connect's recover option: it must become that event's Internal error, not end the process.
func TestInterceptStreamPanicIsThatEventsInternalError(t *testing.T) {
	t.Parallel()
	p := policy.Default()
	c := core.New(core.Config{
		Policy: func() core.Policy { return p }, Typed: typed.Decide, Logger: testkit.Discard(),
		NewID: func() string { panic("decision id source broke") },
	})
	s, err := service.New(c, service.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Register(mux)
	ts := httptest.NewUnstartedServer(mux)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)

	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	stream := ahpv1connect.NewInterceptServiceClient(ts.Client(), ts.URL).InterceptStream(ctx)
	for _, id := range []string{"e1", "e2"} {
		if err := stream.Send(&ahpv1.InterceptStreamRequest{Event: testkit.ShellEvent(id, "ls")}); err != nil {
			t.Fatalf("Send(%s): %v", id, err)
		}
		answer, err := stream.Receive()
		if err != nil {
			t.Fatalf("Receive(%s): %v", id, err)
		}
		if answer.GetEventId() != id || answer.GetError().GetCode() != connect.CodeInternal.String() {
			t.Fatalf("answer to %s = %v, want its internal error", id, answer)
		}
	}
	_ = stream.CloseRequest()
	_ = stream.CloseResponse()
}
