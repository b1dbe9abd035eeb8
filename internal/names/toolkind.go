package names

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// toolKindByName is the documented table that gives a tool kind to the tool names harnesses commonly
// use. Lookup is case-insensitive on the whole name; anything not listed is "other", except names of
// the form mcp__server__tool, which are "mcp".
var toolKindByName = map[string]ahpv1.ToolKind{
	// shell
	"bash": ahpv1.ToolKind_TOOL_KIND_SHELL, "shell": ahpv1.ToolKind_TOOL_KIND_SHELL,
	"sh": ahpv1.ToolKind_TOOL_KIND_SHELL, "exec": ahpv1.ToolKind_TOOL_KIND_SHELL,
	"run_command": ahpv1.ToolKind_TOOL_KIND_SHELL, "execute_command": ahpv1.ToolKind_TOOL_KIND_SHELL,
	"terminal": ahpv1.ToolKind_TOOL_KIND_SHELL, "local_shell": ahpv1.ToolKind_TOOL_KIND_SHELL,
	// file_read
	"read": ahpv1.ToolKind_TOOL_KIND_FILE_READ, "read_file": ahpv1.ToolKind_TOOL_KIND_FILE_READ,
	"view": ahpv1.ToolKind_TOOL_KIND_FILE_READ, "cat": ahpv1.ToolKind_TOOL_KIND_FILE_READ,
	"notebookread": ahpv1.ToolKind_TOOL_KIND_FILE_READ,
	// file_write
	"write": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, "write_file": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE,
	"create_file": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE,
	// file_edit
	"edit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, "multiedit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
	"edit_file": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, "str_replace": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
	"apply_patch": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, "notebookedit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
	"patch": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
	// search
	"grep": ahpv1.ToolKind_TOOL_KIND_SEARCH, "glob": ahpv1.ToolKind_TOOL_KIND_SEARCH,
	"search": ahpv1.ToolKind_TOOL_KIND_SEARCH, "find": ahpv1.ToolKind_TOOL_KIND_SEARCH,
	"ls": ahpv1.ToolKind_TOOL_KIND_SEARCH, "list_files": ahpv1.ToolKind_TOOL_KIND_SEARCH,
	"search_files": ahpv1.ToolKind_TOOL_KIND_SEARCH, "codebase_search": ahpv1.ToolKind_TOOL_KIND_SEARCH,
	// fetch
	"webfetch": ahpv1.ToolKind_TOOL_KIND_FETCH, "websearch": ahpv1.ToolKind_TOOL_KIND_FETCH,
	"fetch": ahpv1.ToolKind_TOOL_KIND_FETCH, "web_fetch": ahpv1.ToolKind_TOOL_KIND_FETCH,
	"web_search": ahpv1.ToolKind_TOOL_KIND_FETCH, "http_request": ahpv1.ToolKind_TOOL_KIND_FETCH,
	"curl": ahpv1.ToolKind_TOOL_KIND_FETCH,
	// task
	"task": ahpv1.ToolKind_TOOL_KIND_TASK, "agent": ahpv1.ToolKind_TOOL_KIND_TASK,
	"subagent": ahpv1.ToolKind_TOOL_KIND_TASK, "spawn_agent": ahpv1.ToolKind_TOOL_KIND_TASK,
}

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
