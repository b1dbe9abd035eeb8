// Package mcptest is a real MCP server, on the official MCP Go SDK, for the MCP gateway's tests:
// a test binary runs itself as the server (Run, when ServerEnv is set) behind the proxy. It has
// the tools echo {text}, write_file {path, content}, progress {steps} (progress notifications,
// then an answer), wait (one progress notification, then no answer until cancelled), roots (asks the client for its roots), big {bytes} (a long answer), fail (a
// tool error result) and crash (exits with status 3), a resource note://hello and a prompt greet.
// Every tools/call it receives is appended to the file named by LogEnv as one JSON line
// {"tool", "args"}, so a test can tell exactly what reached the server. For tests only.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// ServerEnv set to "1" makes a test binary that calls Run from TestMain or init the server.
	ServerEnv = "AHP_MCPPROXY_TEST_SERVER"
	// LogEnv names the file that records the calls.
	LogEnv = "AHP_MCPPROXY_TEST_LOG"
	// Name is the server's name in its handshake.
	Name = "testserver"
)

type echoArgs struct {
	Text string `json:"text"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type progressArgs struct {
	Steps int `json:"steps"`
}

type bigArgs struct {
	Bytes int `json:"bytes"`
}

type noArgs struct{}

var logMu sync.Mutex

// recordCall appends one received call to the log file.
func recordCall(logPath, tool string, args any) {
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	line, _ := json.Marshal(map[string]any{"tool": tool, "args": args})
	if _, err := f.Write(append(line, '\n')); err != nil {
		panic(err)
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Run serves the test MCP server on stdin/stdout until the client goes away, recording every call
// in the file named by LogEnv, and returns the process's exit status.
func Run() int {
	if err := New(os.Getenv(LogEnv)).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test MCP server:", err)
		return 1
	}
	return 0
}

// New returns the test MCP server, recording every call in the file at logPath (for a server
// served in-process, e.g. over Streamable HTTP; its crash tool still exits the process).
func New(logPath string) *mcp.Server {
	recordCall := func(tool string, args any) { recordCall(logPath, tool, args) }
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			recordCall("echo", a)
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write_file", Description: "writes a file"},
		func(_ context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			recordCall("write_file", a)
			if err := os.WriteFile(a.Path, []byte(a.Content), 0o600); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "write failed"}}}, nil, nil
			}
			return text(fmt.Sprintf("wrote %d bytes", len(a.Content))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "reports progress, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, a progressArgs) (*mcp.CallToolResult, any, error) {
			recordCall("progress", a)
			token := req.Params.GetProgressToken()
			for i := 1; i <= a.Steps && token != nil; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(a.Steps)}); err != nil {
					return nil, nil, err
				}
			}
			return text("done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "reports progress once, then waits until cancelled"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			recordCall("wait", nil)
			if token := req.Params.GetProgressToken(); token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1}); err != nil {
					return nil, nil, err
				}
			}
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "asks the client for its roots"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			recordCall("roots", nil)
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, ",")), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "answers with a long text"},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			recordCall("big", a)
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "reports a tool error"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			recordCall("fail", nil)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits the server"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			recordCall("crash", nil)
			os.Exit(3)
			return nil, nil, nil
		})
	s.AddResource(&mcp.Resource{URI: "note://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from the resource"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "a greeting"},
		func(_ context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hello"}}}}, nil
		})
	return s
}
