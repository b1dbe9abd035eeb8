package bridge

import (
	"context"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server"
)

// localClients are the Clients of NewEmbedded: unary calls in-process through local, streams over
// the in-memory HTTP/2 path of streams, which starts the server's HTTP handler on first use.
func localClients(local *server.Local, streams *pipeClients) Clients {
	return Clients{
		Intercept:   localIntercept{Local: local, streams: streams},
		Typed:       local,
		Observation: localObservation{Local: local, streams: streams},
		Harness:     local,
	}
}

// localIntercept is InterceptServiceClient with Intercept and InterceptBatch in-process.
type localIntercept struct {
	*server.Local
	streams *pipeClients
}

var _ ahpv1connect.InterceptServiceClient = localIntercept{}

// InterceptStream implements ahpv1connect.InterceptServiceClient over the in-memory pipe.
func (c localIntercept) InterceptStream(ctx context.Context) *connect.BidiStreamForClient[ahpv1.InterceptStreamRequest, ahpv1.InterceptStreamResponse] {
	return c.streams.get().Intercept.InterceptStream(ctx)
}

// localObservation is ObservationServiceClient with Observe in-process.
type localObservation struct {
	*server.Local
	streams *pipeClients
}

var _ ahpv1connect.ObservationServiceClient = localObservation{}

// ObserveStream implements ahpv1connect.ObservationServiceClient over the in-memory pipe.
func (c localObservation) ObserveStream(ctx context.Context) *connect.ClientStreamForClient[ahpv1.ObserveStreamRequest, ahpv1.ObserveStreamResponse] {
	return c.streams.get().Observation.ObserveStream(ctx)
}

// Watch implements ahpv1connect.ObservationServiceClient over the in-memory pipe.
func (c localObservation) Watch(ctx context.Context, req *connect.Request[ahpv1.WatchRequest]) (*connect.ServerStreamForClient[ahpv1.WatchResponse], error) {
	return c.streams.get().Observation.Watch(ctx, req)
}
