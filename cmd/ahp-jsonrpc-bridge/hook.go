package main

import (
	"context"
	"fmt"
	"io"
)

// runHook runs a native harness hook adapter (`ahp-jsonrpc-bridge hook claude-code|codex`).
func runHook(_ context.Context, args []string, _ io.Reader, _, stderr io.Writer, _ func(string) string) int {
	fmt.Fprintf(stderr, "ahp-jsonrpc-bridge hook: unknown adapter %q\n", fmt.Sprint(args))
	return 2
}
