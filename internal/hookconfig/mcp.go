package hookconfig

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/ahp-gateway/ahp/internal/adapter"
)

// copilotBuiltinMCP is the MCP server Copilot CLI ships with.
const copilotBuiltinMCP = "github-mcp-server"

// maxMCPConfigBytes bounds the MCP configuration read per event.
const maxMCPConfigBytes = 1 << 20

// MCPServerNames returns the MCP server names a runtime that names MCP tools "<server>-<tool>"
// is configured with (Copilot: its built-in server and the keys of mcpServers in
// $COPILOT_HOME/mcp-config.json, default ~/.copilot), so the adapter can split such names; nil for
// the other runtimes. A missing or unreadable file gives the built-in name only.
func MCPServerNames(p adapter.Provider, getenv func(string) string) []string {
	if p != adapter.Copilot {
		return nil
	}
	names := []string{copilotBuiltinMCP}
	dir := getenv("COPILOT_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return names
		}
		dir = filepath.Join(home, ".copilot")
	}
	f, err := os.Open(filepath.Join(dir, "mcp-config.json"))
	if err != nil {
		return names
	}
	defer f.Close()
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	// A file over the limit is cut short, which no JSON object survives.
	if json.NewDecoder(io.LimitReader(f, maxMCPConfigBytes)).Decode(&cfg) != nil {
		return names
	}
	for name := range cfg.MCPServers {
		if name != "" && name != copilotBuiltinMCP {
			names = append(names, name)
		}
	}
	return names
}
