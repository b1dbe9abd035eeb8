// Package reflection mounts gRPC server reflection (v1 and v1alpha) beside the AHP services, so
// that grpcurl, buf curl and similar tools can list and describe them without .proto files.
//
// It lives apart from internal/server so that only binaries that serve reflection link
// connectrpc.com/grpcreflect: ahp-server sets server.Config.Reflection to Mount, while the
// bridge's embedded server leaves it unset, sparing every per-event bridge start the package's
// initialisation.
package reflection

import (
	"net/http"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
)

// Mount serves reflection for the fully-qualified service names on mux, with opts (the options
// the services themselves get, so that authentication decides whether reflection is public).
func Mount(mux *http.ServeMux, services []string, opts ...connect.HandlerOption) {
	reflector := grpcreflect.NewStaticReflector(services...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector, opts...))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, opts...))
}
