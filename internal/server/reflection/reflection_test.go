package reflection_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/server/reflection"
	"github.com/ahp-gateway/ahp/internal/testkit/memhttp"
)

// TestMountListsAndDescribesTheServices: what Mount serves answers grpcurl's two questions —
// which services there are, and the schema of one — and runs behind the handler options given.
func TestMountListsAndDescribesTheServices(t *testing.T) {
	t.Parallel()
	var streams atomic.Int32
	mux := http.NewServeMux()
	services := []string{ahpv1connect.InterceptServiceName, ahpv1connect.HarnessServiceName}
	reflection.Mount(mux, services, connect.WithInterceptors(countStreams{&streams}))
	srv := memhttp.New(t, mux)
	client := grpcreflect.NewClient(srv.Client(), srv.URL(), connect.WithGRPC())
	stream := client.NewStream(context.Background())
	defer stream.Close()
	names, err := stream.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, n := range names {
		listed[string(n)] = true
	}
	for _, want := range services {
		if !listed[want] {
			t.Errorf("ListServices %v lacks %s", names, want)
		}
	}
	files, err := stream.FileContainingSymbol(ahpv1connect.InterceptServiceName)
	if err != nil {
		t.Fatalf("FileContainingSymbol: %v", err)
	}
	if len(files) == 0 {
		t.Fatal("FileContainingSymbol found no file")
	}
	if streams.Load() == 0 {
		t.Error("the handler options given to Mount were not applied")
	}
}

// countStreams counts the streaming calls it sees.
type countStreams struct{ n *atomic.Int32 }

func (c countStreams) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc { return next }

func (c countStreams) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (c countStreams) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		c.n.Add(1)
		return next(ctx, conn)
	}
}
