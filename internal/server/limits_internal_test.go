package server

import (
	"testing"

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
