package service

import (
	"context"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Handshake implements ahpv1connect.HarnessServiceHandler.
func (s *Services) Handshake(ctx context.Context, req *connect.Request[ahpv1.HandshakeRequest]) (*connect.Response[ahpv1.HandshakeResponse], error) {
	return answer(s, req.Msg, func() (*ahpv1.HandshakeResponse, error) { return s.core.Handshake(ctx, req.Msg) })
}

// Query implements ahpv1connect.HarnessServiceHandler.
func (s *Services) Query(ctx context.Context, req *connect.Request[ahpv1.QueryRequest]) (*connect.Response[ahpv1.QueryResponse], error) {
	return answer(s, req.Msg, func() (*ahpv1.QueryResponse, error) { return s.core.Query(ctx, req.Msg) })
}

// GetCapabilities implements ahpv1connect.HarnessServiceHandler.
func (s *Services) GetCapabilities(context.Context, *connect.Request[ahpv1.GetCapabilitiesRequest]) (*connect.Response[ahpv1.GetCapabilitiesResponse], error) {
	return connect.NewResponse(s.core.Capabilities()), nil
}
