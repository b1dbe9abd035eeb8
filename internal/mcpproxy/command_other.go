//go:build !unix

package mcpproxy

import (
	"os"
	"os/exec"
)

func ownProcessGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }

func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
