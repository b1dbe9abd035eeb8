package clitest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// Result is what a command left when it returned.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs a command's run function to completion with stdin and returns what it left.
func Run(run func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int, stdin string) Result {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), strings.NewReader(stdin), &stdout, &stderr)
	return Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// Expect reports, each as an error of its own that begins with what, an exit code other than
// code and a stderr without stderr in it.
func (r Result) Expect(tb testing.TB, what string, code int, stderr string) {
	tb.Helper()
	if r.Code != code {
		tb.Errorf("%s: exit code %d, want %d; stderr %q", what, r.Code, code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, stderr) {
		tb.Errorf("%s: stderr %q lacks %q", what, r.Stderr, stderr)
	}
}

// ExpectNoStdout reports, as an error that begins with what, anything on stdout.
func (r Result) ExpectNoStdout(tb testing.TB, what string) {
	tb.Helper()
	if r.Stdout != "" {
		tb.Errorf("%s: stdout %q, want nothing", what, r.Stdout)
	}
}
