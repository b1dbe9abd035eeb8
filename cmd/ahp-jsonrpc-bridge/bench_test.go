package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// BenchmarkOnceStartAndAnswer is the per_event cost a harness pays per tool call: start the
// binary with -once (embedded mode, default policy), write one hooks/intercept, read the answer.
// ns/op runs to the answer; exit-ns/op to the process's exit, which a harness may also wait for.
// The goal is 10 ms.
func BenchmarkOnceStartAndAnswer(b *testing.B) {
	benchStartAndAnswer(b, []string{"-once"}, hooksIntercept("bench", "ls -la")+"\n", `"effects":[]`)
}

// benchStartAndAnswer measures per-event processes: start the binary with args, write input, read
// the one line of answer, which must contain want (ns/op), and wait for the exit (exit-ns/op).
func benchStartAndAnswer(b *testing.B, args []string, input, want string) {
	bin := needBinary(b)
	var exitTotal time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		cmd := exec.Command(bin, args...)
		cmd.Env = childEnv()
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(stdin, input)
		stdin.Close()
		// The answer is one line; the process may still be stopping the decision core.
		answer, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			b.Fatalf("answer %q: %v", answer, err)
		}
		if !strings.Contains(answer, want) {
			b.Fatalf("answer %q lacks %s", answer, want)
		}
		b.StopTimer()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		exitTotal += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(exitTotal.Nanoseconds())/float64(b.N), "exit-ns/op")
}

// BenchmarkRoundTrip is one hooks/intercept through a running bridge, on stdio (one persistent
// process, one line out, one line back) and on HTTP (keep-alive POSTs), in embedded mode and in
// front of an ahp-server on loopback. Compare with BenchmarkDirectConnect, the same decision
// asked of the same ahp-server without a bridge.
func BenchmarkRoundTrip(b *testing.B) {
	up := startUpstream(b)
	modes := []struct {
		name string
		args []string
	}{
		{"embedded", nil},
		{"upstream", []string{"-upstream", up, "-failure-policy", "fail-closed"}},
	}
	for _, m := range modes {
		b.Run("stdio-"+m.name, func(b *testing.B) {
			p := startBenchProc(b, m.args...)
			w := bufio.NewWriter(p.stdin)
			r := bufio.NewReader(p.stdout)
			i := 0
			for b.Loop() {
				i++
				w.WriteString(hooksIntercept(fmt.Sprintf("bench-%d", i), "ls -la"))
				w.WriteByte('\n')
				w.Flush()
				line, err := r.ReadString('\n')
				if err != nil || !strings.Contains(line, `"effects":[]`) {
					b.Fatalf("answer %q: %v", line, err)
				}
			}
		})
		b.Run("http-"+m.name, func(b *testing.B) {
			p := startBenchProc(b, append([]string{"-http", "127.0.0.1:0", "-log-format", "json", "-log-level", "info"}, m.args...)...)
			addr := listening(b, p.stderr, "http")["http"]
			client := &http.Client{Timeout: testTimeout}
			url := "http://" + addr + "/hooks"
			i := 0
			for b.Loop() {
				i++
				resp, err := client.Post(url, "application/json", strings.NewReader(hooksIntercept(fmt.Sprintf("bench-%d", i), "ls -la")))
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), `"effects":[]`) {
					b.Fatalf("answer %q", body)
				}
			}
		})
	}
}

// BenchmarkRoundTripDraft is BenchmarkRoundTrip's stdio-embedded case for a draft
// hooks/intercept (the same tool call in the draft's shape), to compare the two versions.
func BenchmarkRoundTripDraft(b *testing.B) {
	p := startBenchProc(b)
	w := bufio.NewWriter(p.stdin)
	r := bufio.NewReader(p.stdout)
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("bench-%d", i)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%q,"method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":%q,"source":"urn:bench:harness","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1"},"call":{"id":"c-%d"},"tool":{"name":"Bash","kind":"shell","input":{"command":"ls -la"},"origin":"native"},"path":"native"},"capabilities":{"effects":["deny"]}}}`+"\n", id, id, i)
		w.Flush()
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, `"protocolVersion":"draft"`) {
			b.Fatalf("answer %q: %v", line, err)
		}
	}
}

// BenchmarkDirectConnect asks the loopback ahp-server of BenchmarkRoundTrip for the same decision
// over Connect (h2c), without a bridge: the baseline for the bridge's overhead.
func BenchmarkDirectConnect(b *testing.B) {
	up := startUpstream(b)
	client := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), up)
	input, _ := structpb.NewStruct(map[string]any{"command": "ls -la"})
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("bench-%d", i)
		ev := &ahpv1.Event{
			Id: id, Source: "urn:bridge-test", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
			Session: &ahpv1.Session{Id: "s1"},
			Tool:    &ahpv1.Tool{CallId: "c-" + id, Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input},
		}
		if _, err := client.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev})); err != nil {
			b.Fatal(err)
		}
	}
}

// benchProc is a bridge process for benchmarks: raw pipes, no per-line checks.
type benchProc struct {
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *clitest.Output
}

func startBenchProc(b *testing.B, args ...string) *benchProc {
	b.Helper()
	bin := needBinary(b)
	cmd := exec.Command(bin, append([]string{"-log-level", "warn"}, args...)...)
	cmd.Env = childEnv()
	p := &benchProc{stderr: &clitest.Output{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		p.stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(testTimeout):
			_ = cmd.Process.Kill()
		}
	})
	return p
}
