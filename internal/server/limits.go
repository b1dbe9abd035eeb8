package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/internal/auth"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// envelopePrefix is the size of a gRPC / Connect streaming message's prefix (flags and length).
const envelopePrefix = 5

// exchangeKey is the context key of a request's exchange.
type exchangeKey struct{}

// exchange is a request and its response writer, for the request gate, which connect hands only
// the headers.
type exchange struct {
	w http.ResponseWriter
	r *http.Request
}

// limitBodies wraps the services' handler. A request whose procedure takes one message (unary
// and server-streaming calls) must send its body within readTimeout, and no more than one message
// of maxBytes can be read from it; a client stream's body is bounded by the stream's own limits
// (MaxStreamDuration, StreamRate) instead. Every request carries its exchange for refuseEarly.
//
// The deadline itself is the http.Server's ReadTimeout (HTTPServer sets it to readTimeout), which
// HTTP/2 arms per stream on the connection's own goroutine. Setting it from here would cost every
// HTTP/2 call two hand-offs to that goroutine (set, then lift), a fifth of an Intercept's time on
// two cores. So this handler only lifts it where it must not apply: on a client stream, and on
// HTTP/1 once the body is read, since there it is the connection's deadline and would end a long
// server stream (Watch) when it passes. On HTTP/2 a deadline that fires after the body was read
// changes nothing.
//
// With withExchange (a request gate is configured: refuseEarly) every request carries its
// exchange; without, the request goes on as it came, since a copy of the request and a context
// value per call would be allocated for nobody.
func limitBodies(next http.Handler, readTimeout time.Duration, maxBytes int, withExchange bool) http.Handler {
	return &bodyLimits{next: next, readTimeout: readTimeout, maxBytes: int64(maxBytes) + envelopePrefix, exchange: withExchange}
}

// bodyLimits is limitBodies' handler (a pointer, so that handlers compare).
type bodyLimits struct {
	next        http.Handler
	readTimeout time.Duration
	maxBytes    int64
	exchange    bool
}

// ServeHTTP implements http.Handler.
func (l *bodyLimits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http1 := r.ProtoMajor == 1
	switch {
	case r.Body == nil || r.Body == http.NoBody:
		if l.readTimeout > 0 && http1 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{}) // nothing to read
		}
	case clientStreams(r.URL.Path):
		if l.readTimeout > 0 {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
	default:
		r.Body = http.MaxBytesReader(w, r.Body, l.maxBytes)
		if l.readTimeout > 0 && http1 {
			b := &deadlineBody{ReadCloser: r.Body, w: w}
			b.rc = *http.NewResponseController(w) // one allocation for both
			r.Body = b
		}
	}
	if l.exchange {
		r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, exchange{w, r}))
	}
	l.next.ServeHTTP(w, r)
}

// clientStreams reports whether path names a method whose client sends a stream of messages.
// Unknown paths do not (they get 404 without a body being read).
func clientStreams(path string) bool {
	return clientStreamPaths()[path]
}

// clientStreamPaths is the set of "/package.Service/Method" paths of every client-streaming
// method linked into the binary, built once: a lookup per call would sit on the decision path.
var clientStreamPaths = sync.OnceValue(func() map[string]bool {
	paths := map[string]bool{}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				if md := sd.Methods().Get(j); md.IsStreamingClient() {
					paths["/"+string(sd.FullName())+"/"+string(md.Name())] = true
				}
			}
		}
		return true
	})
	return paths
})

// deadlineBody lifts an HTTP/1 connection's read deadline once the body has been read to its
// end: the same deadline would otherwise end a long server stream (Watch) when it passes. A body
// that fails to arrive in time closes the connection after the answer: what is left of the body
// would be read as the next request.
type deadlineBody struct {
	io.ReadCloser
	rc   http.ResponseController
	w    http.ResponseWriter
	done bool
}

// Read implements io.Reader.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done || err == nil:
	case errors.Is(err, io.EOF):
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.done = true
		b.w.Header().Set("Connection", "close")
	}
	return n, err
}

// refuseEarly wraps a request gate: a refused request is answered without reading its body (see
// auth.DropBody), so that an unauthenticated client cannot hold a connection by sending its body
// slowly.
func refuseEarly(gate connect.RequestGateFunc) connect.RequestGateFunc {
	return func(ctx context.Context, spec connect.Spec, peer connect.Peer, header http.Header) (context.Context, error) {
		gated, err := gate(ctx, spec, peer, header)
		if err != nil {
			if ex, ok := ctx.Value(exchangeKey{}).(exchange); ok {
				auth.DropBody(ex.w, ex.r)
			}
		}
		return gated, err
	}
}
