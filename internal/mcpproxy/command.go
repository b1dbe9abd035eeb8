package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultStopGrace is how long a stopping server gets between its stdin closing and SIGTERM,
// and again between SIGTERM and SIGKILL.
const DefaultStopGrace = 2 * time.Second

// ServerExitError is the end of a server process's stream: it exited, or closed its stdout.
type ServerExitError struct {
	// Err is the process's exit (an *exec.ExitError for a non-zero status), nil for status 0.
	Err error
}

func (e *ServerExitError) Error() string {
	if e.Err == nil {
		return "the MCP server exited"
	}
	return "the MCP server exited (" + e.Err.Error() + ")"
}

func (e *ServerExitError) Unwrap() error { return e.Err }

// Process is an MCP server running as a child process, spoken to over its stdin and stdout (the
// MCP stdio transport). It is a Conn; Close stops the process.
type Process struct {
	Conn
	cmd   *exec.Cmd
	grace time.Duration

	done    chan struct{} // closed when the process has exited
	waitErr error

	stopOnce sync.Once
	stdin    *os.File
}

// StartProcess starts cmd as an MCP server. Its stdin and stdout are the relay's; its stderr is
// whatever cmd.Stderr says (the proxy passes its own, where MCP clients show server logs).
// Inbound messages are limited to limit bytes. grace is DefaultStopGrace when not positive.
func StartProcess(cmd *exec.Cmd, limit int, grace time.Duration) (*Process, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("mcpproxy: StartProcess sets the command's stdin and stdout itself")
	}
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, fmt.Errorf("starting the MCP server: %w", err)
	}
	// The child has its ends now.
	inR.Close()
	outW.Close()
	p := &Process{cmd: cmd, grace: grace, done: make(chan struct{}), stdin: inW}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	p.Conn = NewStream(outR, inW, limit, func() error {
		p.stop()
		return outR.Close()
	})
	return p, nil
}

// Read returns the server's next message; when the server's stdout ends it waits for the
// process (stopping it if it lingers) and returns a *ServerExitError.
func (p *Process) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := p.Conn.Read(ctx)
	if err == nil || !errors.Is(err, io.EOF) {
		return msg, err
	}
	p.stop()
	return nil, &ServerExitError{Err: p.waitErr}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid is the server's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// stop ends the process the way MCP's stdio transport says a client should: close its stdin,
// wait, SIGTERM, wait, SIGKILL. It returns when the process has exited.
func (p *Process) stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		terminate(p.cmd)
		t.Reset(p.grace)
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		kill(p.cmd)
		<-p.done
	})
	<-p.done
}
