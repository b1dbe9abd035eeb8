package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// serverStartTimeout bounds how long a started ahp-server process may take to say where it
// listens.
const serverStartTimeout = 30 * time.Second

// serverStopGrace is how long a server process may take to exit after SIGTERM: its own shutdown
// timeout (set below) plus closing the audit log.
const serverStopGrace = 15 * time.Second

// serverProcess describes how to start ahp-server as a child process.
type serverProcess struct {
	bin        string
	policyFile string
	// auditPath, when set, turns the audit log on (required mode) at that file with fsync mode
	// auditFsync ("" for the server's default).
	auditPath  string
	auditFsync string
	// dir holds the configuration file the audit settings need.
	dir string
	// metricsAddr, when set, is the server's --metrics-addr (Prometheus /metrics).
	metricsAddr string
	// env is added to the child's environment (GOGC=off, GOMEMLIMIT=…, for diagnosis).
	env []string
	// nats, when set, runs the server in cluster mode (-nats).
	nats string
}

// args returns the command line: loopback on a free port, the policy without hot reload, logs
// only for warnings, and the audit log through a configuration file (the fsync mode has no flag).
func (p serverProcess) args() ([]string, error) {
	args := []string{
		"--addr", "127.0.0.1:0", "--policy", p.policyFile, "--policy-poll", "0",
		"--log-level", "warn", "--shutdown-timeout", "10s",
	}
	if p.metricsAddr != "" {
		args = append(args, "--metrics-addr", p.metricsAddr)
	}
	if p.nats != "" {
		args = append(args, "--nats", p.nats)
	}
	if p.auditPath == "" {
		return args, nil
	}
	fsync := p.auditFsync
	if fsync == "" {
		fsync = "interval"
	}
	// JSON strings are YAML strings, whatever the path holds.
	path, _ := json.Marshal(p.auditPath)
	mode, _ := json.Marshal(fsync)
	file := filepath.Join(p.dir, "ahp-server-audit.yaml")
	conf := fmt.Sprintf("audit:\n  path: %s\n  required: true\n  fsync: %s\n", path, mode)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	return append(args, "--config", file), nil
}

// startServerProcess starts ahp-server as a child process and waits until it listens. The child
// gets this process's environment without the AHP_* variables, so that nothing but the command
// line configures it. Stopping it sends SIGTERM — the server drains, answers what it took and
// closes its audit log — and kills it only if it has not exited after serverStopGrace.
func startServerProcess(p serverProcess) (*running, error) {
	args, err := p.args()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(p.bin, args...)
	cmd.Env = append(withoutAHPEnv(os.Environ()), p.env...)
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrServerUnavailable, p.bin, err)
	}
	exited := make(chan error, 1)
	listening := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		listening <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, r) // nothing else is expected; never let the pipe fill up
		exited <- cmd.Wait()
	}()
	stop := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := stopProcess(cmd, exited, serverStopGrace); err != nil {
			return fmt.Errorf("ahp-server process, after SIGTERM: %v; stderr: %s", err, stderr.String())
		}
		return nil
	}
	fail := func(why string) (*running, error) {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("ahp-server process %s: %s; stderr: %s", p.bin, why, stderr.String())
	}
	select {
	case line := <-listening:
		if line == "" { // stdout closed: the server is on its way out
			select {
			case err := <-exited:
				return nil, fmt.Errorf("ahp-server process %s exited before listening (%v); stderr: %s", p.bin, err, stderr.String())
			case <-time.After(time.Second):
			}
		}
		url, ok := strings.CutPrefix(line, "ahp-server listening on ")
		if !ok {
			return fail(fmt.Sprintf("first line of its output is %q, not where it listens", tail([]byte(line), 200)))
		}
		if err := CheckLoopback(url); err != nil {
			return fail(err.Error())
		}
		return &running{url: url, stop: stop, pid: cmd.Process.Pid}, nil
	case <-time.After(serverStartTimeout):
		return fail(fmt.Sprintf("did not say where it listens within %v", serverStartTimeout))
	}
}

// withoutAHPEnv returns env without the variables ahp-server reads (AHP_*).
func withoutAHPEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AHP_") {
			out = append(out, kv)
		}
	}
	return out
}
