package hookconfig

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-gateway/ahp/internal/adapter"
)

// copilotBuiltinMCP is the MCP server Copilot CLI ships with.
const copilotBuiltinMCP = "github-mcp-server"

// maxMCPConfigBytes bounds each MCP configuration file read per event.
const maxMCPConfigBytes = 1 << 20

// MCP returns what runtime p's MCP configuration says about its servers, for the runtimes whose
// hook input does not name a server plainly (adapter.MCPConfig); the zero value for the others.
//
//   - Copilot names MCP tools "<server>-<tool>": Servers are its built-in github-mcp-server and
//     the keys of mcpServers in $COPILOT_HOME/mcp-config.json (default ~/.copilot).
//   - Cursor's beforeMCPExecution gives the server's url or command: Endpoints maps each server's
//     url, command, and command with its arguments joined by spaces, to its name, from
//     dir/.cursor/mcp.json and ~/.cursor/mcp.json (the project's first).
//
// Missing or unreadable files are skipped.
func MCP(p adapter.Provider, getenv func(string) string, dir string) adapter.MCPConfig {
	home := getenv("HOME")
	switch p {
	case adapter.Copilot:
		cfgDir := getenv("COPILOT_HOME")
		if cfgDir == "" && home != "" {
			cfgDir = filepath.Join(home, ".copilot")
		}
		names := []string{copilotBuiltinMCP}
		if cfgDir != "" {
			for name := range readMCPServers(filepath.Join(cfgDir, "mcp-config.json")) {
				if name != "" && name != copilotBuiltinMCP {
					names = append(names, name)
				}
			}
		}
		return adapter.MCPConfig{Servers: names}
	case adapter.Cursor:
		endpoints := map[string]string{}
		for _, base := range []string{home, dir} { // the project's entries win
			if base == "" {
				continue
			}
			for name, s := range readMCPServers(filepath.Join(base, ".cursor", "mcp.json")) {
				if s.URL != "" {
					endpoints[s.URL] = name
				}
				if s.Command != "" {
					endpoints[s.Command] = name
					endpoints[strings.Join(append([]string{s.Command}, s.Args...), " ")] = name
				}
			}
		}
		if len(endpoints) == 0 {
			return adapter.MCPConfig{}
		}
		return adapter.MCPConfig{Endpoints: endpoints}
	}
	return adapter.MCPConfig{}
}

// mcpServer is one entry of an mcpServers map, as far as naming goes.
type mcpServer struct {
	URL     string   `json:"url"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// readMCPServers reads the mcpServers map of an MCP configuration file; nil when it cannot.
func readMCPServers(path string) map[string]mcpServer {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	// A file over the limit is cut short, which no JSON object survives.
	if json.NewDecoder(io.LimitReader(f, maxMCPConfigBytes)).Decode(&cfg) != nil {
		return nil
	}
	out := make(map[string]mcpServer, len(cfg.MCPServers))
	for name, raw := range cfg.MCPServers {
		var s mcpServer
		_ = json.Unmarshal(raw, &s) // an entry of another shape still names a server
		out[name] = s
	}
	return out
}
