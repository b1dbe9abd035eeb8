// Package mcpproxy is the MCP gateway: a relay between an MCP client (Claude Code, Cursor, VS
// Code, any client of the Model Context Protocol) and the MCP server it would otherwise launch
// or reach itself, which puts every tool call before the policy.
//
// The relay works on JSON-RPC messages, decoded and encoded by the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk/jsonrpc), and passes every message through untouched —
// initialize, tools/list, resources, prompts, completion, logging, sampling and elicitation
// requests from the server, notifications (progress, cancellation, list changes) in both
// directions — except:
//
//   - a tools/call request from the client becomes a canonical tool.before event (tool kind mcp,
//     tool.name "mcp__SERVER__TOOL" as Claude Code names MCP tools, tool.mcp {server, tool}, the
//     arguments as tool.input, a call id stable for the session and the JSON-RPC id) and is
//     decided by InterceptService.Intercept before anything reaches the server:
//     deny → the client gets a tool result with isError true whose text is the policy's reason
//     (the model sees why), and the server never sees the call; modify → the server receives the
//     rewritten arguments (everything else of the request, _meta and its progress token
//     included, unchanged); allow or no effect → forwarded as sent. Ask, escalate and defer
//     cannot be shown by an MCP client mid-call, so they are not advertised and the policy
//     engine's per-rule fallback applies (by default a denial saying approval is required).
//     Message effects are shown to the model as an extra text item of the tool result.
//   - the server's answer to a forwarded tools/call becomes a tool.after observation (tool.error
//     for a JSON-RPC error or a result with isError), secrets masked and size-bounded, sent in
//     the background through a bounded queue so that it never delays the answer.
//   - a notifications/cancelled for a call still being decided stops the decision; the call is
//     never forwarded and, as the protocol says for cancelled requests, not answered.
//
// When no decision can be had (backend down, deadline passed) the failure policy answers:
// fail-closed refuses the call with the bridge's synthetic reason, fail-open forwards it; both
// are logged. Every inbound message is bounded in bytes (Config.MaxMessageBytes): a longer one
// is refused — answered with a JSON-RPC error when it was a request whose id could be read —
// and the session goes on. Requests in flight are bounded in count.
//
// When the server goes away (it exits or its connection fails) every request still waiting is
// answered with a JSON-RPC error saying so, and the session ends; when the client goes away the
// server is stopped.
//
// Proxy.Serve relays one session between two Conns: NewStream frames stdio (the client's side,
// and StartProcess's server process). Proxy.NewHTTP is the same gateway for a server reached with
// the Streamable HTTP transport, as an http.Handler in front of it. docs/mcp.md is the
// user's guide.
package mcpproxy
