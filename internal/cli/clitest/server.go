package clitest

import (
	"testing"

	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// Serve serves an ahp-server built from cfg on a loopback port until the test ends and returns its
// base URL, for commands and child processes that need a real address. It serves the handler with
// the production HTTP settings (server.Server.HTTPServer) but not server.Server.Serve's lifecycle:
// no TLS, no policy-file polling or token-file reloads, no drain.
func Serve(tb testing.TB, cfg server.Config) string {
	tb.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return testkit.ServeLoopback(tb, srv.HTTPServer())
}
