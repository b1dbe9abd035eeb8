package auth

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
)

// Gate is a connect.RequestGateFunc: it runs once the request headers are in, before any message
// is read or decoded, so unauthenticated callers cost almost nothing. Prefer it to Interceptor:
//
//	connect.WithRequestGate(a.Gate)
//
// Refusals are Unauthenticated or PermissionDenied on every protocol (Connect, gRPC, gRPC-Web). On
// success the principal is in the returned context, and the credential headers are removed, so
// handlers cannot see or forward them.
func (a *Authenticator) Gate(ctx context.Context, spec connect.Spec, peer connect.Peer, header http.Header) (context.Context, error) {
	return a.check(ctx, spec.Procedure, peer, header)
}

// HandlerOption returns connect.WithRequestGate(a.Gate).
func (a *Authenticator) HandlerOption() connect.HandlerOption {
	return connect.WithRequestGate(a.Gate)
}

func (a *Authenticator) check(ctx context.Context, procedure string, peer connect.Peer, header http.Header) (context.Context, error) {
	if a.mode == Disabled {
		return ctx, nil
	}
	c, credErr := FromHeader(header)
	stripCredentials(header, nil)
	p, err := a.Authorize(procedure, c, credErr)
	if err != nil {
		a.report(procedure, peer.Addr, p, err)
		return ctx, ConnectError(err, peer.Protocol)
	}
	if p != nil {
		ctx = ContextWithPrincipal(ctx, *p)
	}
	return ctx, nil
}

// Interceptor returns the same check as a connect.Interceptor, for stacks built from interceptors.
// It runs for handlers only (clients pass through). Unary requests have already been read and
// decoded when an interceptor runs, which is why Gate is preferred.
func (a *Authenticator) Interceptor() connect.Interceptor { return interceptor{a} }

type interceptor struct{ a *Authenticator }

func (i interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		ctx, err := i.a.check(ctx, req.Spec().Procedure, req.Peer(), req.Header())
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (i interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := i.a.check(ctx, conn.Spec().Procedure, conn.Peer(), conn.RequestHeader())
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}

// ClientInterceptor returns a client-side interceptor that sends c on every call, unary or
// streaming (a stream's headers, which go out with its first message). bridge.NewUpstream uses it
// to present the bridge's upstream bearer token to ahp-server. Handlers pass through unchanged.
func ClientInterceptor(c Credential) connect.Interceptor { return clientInterceptor{c} }

type clientInterceptor struct{ c Credential }

func (i clientInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			i.c.SetHeader(req.Header())
		}
		return next(ctx, req)
	}
}

func (i clientInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		i.c.SetHeader(conn.RequestHeader()) // headers go out with the first message
		return conn
	}
}

func (i clientInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
