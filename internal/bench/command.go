package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
)

// The errors wrapped by the error of a run that needs a command and has no binary of it to run:
// the one given does not exist, or none was given and `go build` failed (no go command, outside
// the module, or the command does not compile).
var (
	// ErrBridgeUnavailable: no ahp-jsonrpc-bridge for the bridge modes (--bridge-bin).
	ErrBridgeUnavailable = errors.New("ahp-jsonrpc-bridge is not available")
	// ErrServerUnavailable: no ahp-server for --server-process (--server-bin).
	ErrServerUnavailable = errors.New("ahp-server is not available")
)

// command is one of the module's commands that ahp-bench runs as a child process, built with the
// go command when no binary is given.
type command struct {
	pkg         string // import path
	flag        string // the flag that gives a binary instead of building one
	unavailable error  // wrapped by every error saying there is no binary
}

var (
	bridgeCommand = command{pkg: "github.com/ahp-gateway/ahp/cmd/ahp-jsonrpc-bridge", flag: "--bridge-bin", unavailable: ErrBridgeUnavailable}
	serverCommand = command{pkg: "github.com/ahp-gateway/ahp/cmd/ahp-server", flag: "--server-bin", unavailable: ErrServerUnavailable}
)

// BuildBridge builds ahp-jsonrpc-bridge into dir with the go command and returns the binary's
// path. It works from inside the module (as `go test` and `go run` do); elsewhere pass the
// binary with --bridge-bin.
func BuildBridge(ctx context.Context, dir string) (string, error) {
	return bridgeCommand.build(ctx, dir)
}

// BuildServer builds ahp-server into dir like BuildBridge; elsewhere pass the binary with
// --server-bin.
func BuildServer(ctx context.Context, dir string) (string, error) {
	return serverCommand.build(ctx, dir)
}

// binary returns given once it is known to exist or, when given is "", builds c into dir after
// saying so through progress.
func (c command) binary(ctx context.Context, given, dir string, progress func(format string, a ...any)) (string, error) {
	if given != "" {
		if _, err := os.Stat(given); err != nil {
			return "", fmt.Errorf("%w: %s: %v", c.unavailable, c.flag, err)
		}
		return given, nil
	}
	progress("building %s", c.pkg)
	return c.build(ctx, dir)
}

// build builds c into dir; its errors wrap c.unavailable and name the flag that passes a binary
// instead.
func (c command) build(ctx context.Context, dir string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: no go command to build it (%v); pass %s", c.unavailable, err, c.flag)
	}
	out := filepath.Join(dir, path.Base(c.pkg))
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, c.pkg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: go build %s (run ahp-bench inside the ahp module, or pass %s): %v\n%s",
			c.unavailable, c.pkg, c.flag, err, tail(msg, 2048))
	}
	return out, nil
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = append([]byte("…"), b[len(b)-n:]...)
	}
	return string(b)
}
