package clitest

import (
	"context"
	"net"
	"testing"

	"github.com/ahp-gateway/ahp/internal/server"
)

// Serve runs an ahp-server built from cfg on a loopback port until the test ends and returns its
// base URL, for commands and child processes that need a real address.
func Serve(tb testing.TB, cfg server.Config) string {
	tb.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	tb.Cleanup(func() {
		cancel()
		<-served
	})
	return "http://" + ln.Addr().String()
}
