package names

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// toolKindNames is the documented table that gives a tool kind to the tool names harnesses commonly
// use. Lookup is case-insensitive on the whole name; anything not listed is "other", except names of
// the form mcp__server__tool, which are "mcp".
var toolKindNames = []struct {
	kind  ahpv1.ToolKind
	names []string
}{
	{ahpv1.ToolKind_TOOL_KIND_SHELL, []string{"bash", "shell", "sh", "exec", "run_command", "execute_command", "terminal", "local_shell"}},
	{ahpv1.ToolKind_TOOL_KIND_FILE_READ, []string{"read", "read_file", "view", "cat", "notebookread"}},
	{ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, []string{"write", "write_file", "create_file"}},
	{ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, []string{"edit", "multiedit", "edit_file", "str_replace", "apply_patch", "notebookedit", "patch"}},
	{ahpv1.ToolKind_TOOL_KIND_SEARCH, []string{"grep", "glob", "search", "find", "ls", "list_files", "search_files", "codebase_search"}},
	{ahpv1.ToolKind_TOOL_KIND_FETCH, []string{"webfetch", "websearch", "fetch", "web_fetch", "web_search", "http_request", "curl"}},
	{ahpv1.ToolKind_TOOL_KIND_TASK, []string{"task", "agent", "subagent", "spawn_agent"}},
}

// toolKindByName is toolKindNames by (lower-case) name.
var toolKindByName = func() map[string]ahpv1.ToolKind {
	m := map[string]ahpv1.ToolKind{}
	for _, row := range toolKindNames {
		for _, name := range row.names {
			m[name] = row.kind
		}
	}
	return m
}()

// ToolKindFor gives the canonical kind of a tool from its name using the documented table
// (docs/compatibility.md): Bash/bash/shell -> shell, Read/read_file -> file_read, ... ; names of the
// form mcp__server__tool -> mcp; everything else -> other.
func ToolKindFor(name string) ahpv1.ToolKind {
	lower := strings.ToLower(name)
	if k, ok := toolKindByName[lower]; ok {
		return k
	}
	if _, _, ok := SplitMCPToolName(name); ok {
		return ahpv1.ToolKind_TOOL_KIND_MCP
	}
	return ahpv1.ToolKind_TOOL_KIND_OTHER
}

// SplitMCPToolName splits "mcp__server__tool" into server and tool.
func SplitMCPToolName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, "__")
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// ToolKindName returns the wire name of a tool kind ("file_read"), or "" for unspecified.
func ToolKindName(k ahpv1.ToolKind) string { return EnumWireName(k) }

// ParseToolKind maps a wire name ("file_read") to its ToolKind.
func ParseToolKind(name string) (ahpv1.ToolKind, bool) {
	n, ok := ParseEnumWire(ahpv1.ToolKind(0).Descriptor(), name)
	return ahpv1.ToolKind(n), ok
}
