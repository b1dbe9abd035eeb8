package mcpproxy_test

import (
	"os"
	"testing"

	"github.com/ahp-gateway/ahp/internal/mcpproxy/mcptest"
)

// The tests' MCP server is this test binary run again with mcptest.ServerEnv set.
const (
	testServerEnv = mcptest.ServerEnv
	testLogEnv    = mcptest.LogEnv
	testServer    = mcptest.Name
)

func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) == "1" {
		os.Exit(mcptest.Run())
	}
	os.Exit(m.Run())
}
