//go:build unix

package mcpproxy

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the server in a process group of its own, so that stopping it reaches
// what it started (npx, uvx and shell wrappers run the real server as a grandchild).
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func terminate(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

func kill(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
