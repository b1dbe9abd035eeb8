package server

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

func TestClientStreams(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{
		ahpv1connect.ObservationServiceObserveStreamProcedure: true,
		ahpv1connect.InterceptServiceInterceptStreamProcedure: true,
		ahpv1connect.InterceptServiceInterceptProcedure:       false,
		ahpv1connect.ObservationServiceWatchProcedure:         false,
		"/grpc.health.v1.Health/Watch":                        false,
		"/ahp.v1.InterceptService/NoSuchMethod":               false,
		"/not a path":                                         false,
	} {
		if got := clientStreams(path); got != want {
			t.Errorf("clientStreams(%q) = %v, want %v", path, got, want)
		}
	}
}

// A unary call gets UnaryTimeout unless its context already ends sooner (the client's timeout),
// and then keeps that one deadline.
func TestUnaryTimeoutOneDeadline(t *testing.T) {
	t.Parallel()
	const d = time.Minute
	var seen context.Context
	call := unaryTimeout(d)(func(ctx context.Context, _ connect.AnyRequest) (connect.AnyResponse, error) {
		seen = ctx
		return nil, nil
	})
	req := connect.NewRequest(&ahpv1.InterceptRequest{})

	sooner, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := call(sooner, req); err != nil {
		t.Fatal(err)
	}
	if seen != sooner {
		t.Error("a call whose client deadline comes before UnaryTimeout got another context")
	}

	for name, ctx := range map[string]context.Context{"no deadline": context.Background(), "later deadline": withTimeout(t, 2*d)} {
		if _, err := call(ctx, req); err != nil {
			t.Fatal(err)
		}
		got, ok := seen.Deadline()
		if !ok || time.Until(got) > d {
			t.Errorf("%s: the handler's deadline is %v (%v), want UnaryTimeout's", name, got, ok)
		}
	}
}

func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
