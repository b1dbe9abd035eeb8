package clitest_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/cli/clitest"
)

func TestWaitSeesLinesWrittenBeforeAndAfter(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	c := clitest.Start(t, func(ctx context.Context, stdout, _ io.Writer) int {
		fmt.Fprint(stdout, "one\ntw")
		fmt.Fprint(stdout, "o\n")
		<-release
		fmt.Fprint(stdout, "three\n")
		<-ctx.Done()
		return 3
	})
	if got := c.Stdout.Wait(t, func(l string) bool { return strings.HasPrefix(l, "t") }); got != "two" {
		t.Errorf("first match %q, want two", got)
	}
	close(release)
	var seen []string
	c.Stdout.Wait(t, func(l string) bool { seen = append(seen, l); return l == "three" })
	if strings.Join(seen, ",") != "one,two,three" {
		t.Errorf("lines handed to match: %q", seen)
	}
	if code := c.Stop(t); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if c.Stdout.String() != "one\ntwo\nthree\n" {
		t.Errorf("output %q", c.Stdout.String())
	}
}

func TestWaitFailsWhenTheOutputCloses(t *testing.T) {
	t.Parallel()
	c := clitest.Start(t, func(_ context.Context, stdout, _ io.Writer) int {
		fmt.Fprintln(stdout, "bye")
		return 1
	})
	if code := c.Wait(t); code != 1 {
		t.Errorf("exit code %d", code)
	}
	// Run Wait where a failure does not end this test: it must fail, not hang.
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Stdout.Wait(ft, func(string) bool { return false })
	}()
	<-done
	if !ft.failed {
		t.Error("Wait on a closed output without the line did not fail")
	}
}

// fatalRecorder records Fatalf and ends the goroutine, as testing.T would.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}

func TestRunAndExpect(t *testing.T) {
	t.Parallel()
	r := clitest.Run(func(_ context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
		in, _ := io.ReadAll(stdin)
		fmt.Fprintf(stdout, "read %s", in)
		fmt.Fprint(stderr, "warned")
		return 4
	}, "input")
	if r != (clitest.Result{Code: 4, Stdout: "read input", Stderr: "warned"}) {
		t.Fatalf("result %+v", r)
	}
	r.Expect(t, "matching", 4, "warn")
	for _, c := range []struct {
		name   string
		check  func(testing.TB)
		errors int
	}{
		{"wrong code", func(tb testing.TB) { r.Expect(tb, "x", 0, "warn") }, 1},
		{"wrong stderr", func(tb testing.TB) { r.Expect(tb, "x", 4, "error") }, 1},
		{"both", func(tb testing.TB) { r.Expect(tb, "x", 0, "error") }, 2},
		{"stdout", func(tb testing.TB) { r.ExpectNoStdout(tb, "x") }, 1},
	} {
		rec := &errorCounter{TB: t}
		c.check(rec)
		if rec.errors != c.errors {
			t.Errorf("%s: %d errors, want %d", c.name, rec.errors, c.errors)
		}
	}
}

// errorCounter counts Errorf calls instead of failing.
type errorCounter struct {
	testing.TB
	errors int
}

func (e *errorCounter) Helper() {}

func (e *errorCounter) Errorf(string, ...any) { e.errors++ }
