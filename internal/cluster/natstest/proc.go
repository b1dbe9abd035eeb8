package natstest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPU returns the CPU time (user and system) the node's process has used so far, and false when
// it cannot be read (not running, or no /proc: Linux only). Benchmarks use it to report what
// nats-server spends per operation.
func (s *Server) CPU() (time.Duration, bool) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0, false
	}
	return ProcessCPU(cmd.Process.Pid)
}

// ProcessCPU returns the CPU time (user and system) process pid has used, from /proc/pid/stat;
// false when it cannot be read.
func ProcessCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; the fields counted from its closing ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// Clock ticks: USER_HZ is 100 on every Linux architecture Go supports.
	return time.Duration(utime+stime) * (time.Second / 100), true
}
