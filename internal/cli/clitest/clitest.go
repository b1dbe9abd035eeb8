// Package clitest runs the commands in tests, in-process or as built binaries, and lets a test
// wait for what a command writes instead of sleeping.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// Timeout bounds every wait of this package.
const Timeout = 20 * time.Second

// Env returns a getenv that reads vars; nil is an empty environment.
func Env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Output is an io.Writer for a command's stdout or stderr that a test may read while the command
// writes, and wait on for a line.
type Output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   []string      // the complete lines written so far, without their line feed
	partial []byte        // what follows the last line feed
	changed chan struct{} // closed and replaced when a line is complete or the output closes
	closed  bool
}

// Write appends p; it never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.init()
	o.buf.Write(p)
	o.partial = append(o.partial, p...)
	complete := false
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		o.lines = append(o.lines, string(o.partial[:i]))
		o.partial = o.partial[i+1:]
		complete = true
	}
	if complete {
		o.signal()
	}
	return len(p), nil
}

// Close says that nothing more will be written: a Wait still waiting fails at once.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.init()
	o.closed = true
	o.signal()
	return nil
}

func (o *Output) init() {
	if o.changed == nil {
		o.changed = make(chan struct{})
	}
}

func (o *Output) signal() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Wait hands match every complete line, in order, the ones already written first, until it
// returns true, and returns that line. It fails tb when Timeout passes or the output closes first.
func (o *Output) Wait(tb testing.TB, match func(line string) bool) string {
	tb.Helper()
	line, err := o.wait(match)
	if err != nil {
		tb.Fatalf("%v:\n%s", err, o.String())
	}
	return line
}

func (o *Output) wait(match func(line string) bool) (string, error) {
	timeout := time.NewTimer(Timeout)
	defer timeout.Stop()
	next := 0
	for {
		o.mu.Lock()
		o.init()
		lines, changed, closed := o.lines, o.changed, o.closed
		o.mu.Unlock()
		for ; next < len(lines); next++ {
			if match(lines[next]) {
				return lines[next], nil
			}
		}
		if closed {
			return "", errors.New("the output ended without the line waited for")
		}
		select {
		case <-changed:
		case <-timeout.C:
			return "", fmt.Errorf("no line waited for within %v", Timeout)
		}
	}
}

// Command is a command running in-process, as its run function.
type Command struct {
	Stdout, Stderr *Output
	cancel         context.CancelFunc
	done           chan struct{}
	code           int
}

// Start runs run in a goroutine with a context that Stop cancels (as SIGTERM does), writing to
// fresh Outputs that close when run returns. A test that does not call Stop has it called when it
// ends.
func Start(tb testing.TB, run func(ctx context.Context, stdout, stderr io.Writer) int) *Command {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Command{Stdout: &Output{}, Stderr: &Output{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.code = run(ctx, c.Stdout, c.Stderr)
		c.Stdout.Close()
		c.Stderr.Close()
	}()
	tb.Cleanup(func() { c.Stop(tb) })
	return c
}

// WaitStdout is c.Stdout.Wait, failing with what the command wrote on both outputs.
func (c *Command) WaitStdout(tb testing.TB, match func(line string) bool) string {
	tb.Helper()
	line, err := c.Stdout.wait(match)
	if err != nil {
		tb.Fatalf("stdout: %v\nstdout:\n%s\nstderr:\n%s", err, c.Stdout.String(), c.Stderr.String())
	}
	return line
}

// Done is closed when the command has returned.
func (c *Command) Done() <-chan struct{} { return c.done }

// Stop cancels the command's context and returns its exit code once it has returned; it fails tb
// when that takes longer than Timeout.
func (c *Command) Stop(tb testing.TB) int {
	tb.Helper()
	c.cancel()
	return c.Wait(tb)
}

// Wait returns the command's exit code once it has returned by itself; it fails tb when that takes
// longer than Timeout.
func (c *Command) Wait(tb testing.TB) int {
	tb.Helper()
	select {
	case <-c.done:
		return c.code
	case <-time.After(Timeout):
		tb.Fatalf("the command did not return within %v; stderr:\n%s", Timeout, c.Stderr.String())
		return -1
	}
}
