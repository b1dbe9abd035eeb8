package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/types/known/structpb"
)

// startServer runs the command in-process and returns its base URL and a stop function that
// cancels it (like SIGTERM) and returns its exit code.
func startServer(t *testing.T, args []string, env map[string]string) (url string, stderr *clitest.Output, stop func() int) {
	t.Helper()
	c := clitest.Start(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), stdout, stderr, clitest.Env(env))
	})
	return listenURL(t, c), c.Stderr, func() int { return c.Stop(t) }
}

// Planted secrets: each must appear in no audit record, no Watch item and no log line.
var planted = []string{
	"ghp_0123456789abcdefghijABCDEFGHIJ012345",
	"AKIAIOSFODNN7EXAMPLE",
	"xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx",
	"hunter2-very-secret-password",
}

func secretEvent(id string, decided bool) *ahpv1.Event {
	input, _ := structpb.NewStruct(map[string]any{
		"command":  "curl -H 'Authorization: Bearer " + planted[0] + "' https://api.github.com",
		"env":      "AWS_ACCESS_KEY_ID=" + planted[1],
		"password": planted[3],
	})
	output, _ := structpb.NewValue("posted with " + planted[2])
	ev := &ahpv1.Event{
		Id: id, Source: "urn:hardening-test", Session: &ahpv1.Session{Id: "hardening"},
		Tool: &ahpv1.Tool{CallId: "c-" + id, Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input},
	}
	if decided {
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE
	} else {
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
		ev.Tool.Output = output
	}
	return ev
}

func TestAuditHoldsEveryAcceptedEventAcrossShutdownAndNoSecretLeaks(t *testing.T) {
	t.Parallel()
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	url, stderr, stop := startServer(t, []string{"-audit-path", auditFile, "-log-level", "debug"}, nil)
	ctx := context.Background()
	intercept := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), url)
	observe := ahpv1connect.NewObservationServiceClient(testkit.H2CClient(), url)

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watch, err := observe.Watch(watchCtx, connect.NewRequest(&ahpv1.WatchRequest{SessionId: "hardening"}))
	if err != nil {
		t.Fatal(err)
	}

	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: secretEvent(fmt.Sprintf("d-%d", i), true)}))
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := observe.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: secretEvent(fmt.Sprintf("o-%d", i), false)}))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var streamed strings.Builder
	for seen := 0; seen < 2*n && watch.Receive(); seen++ {
		fmt.Fprintln(&streamed, watch.Msg().String())
	}
	stopWatch()
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}

	data, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines < 2*n {
		t.Fatalf("audit has %d records, want at least %d (every decision and observation)", lines, 2*n)
	}
	if r := runServer([]string{"audit", "verify", auditFile}, nil); r.Code != 0 {
		t.Fatalf("audit verify: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	for _, secret := range planted {
		for where, text := range map[string]string{"audit": string(data), "watch": streamed.String(), "log": stderr.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains planted secret %q", where, secret[:8])
			}
		}
	}
	if !strings.Contains(streamed.String(), "REDACTED") {
		t.Error("watch items show no sign of redaction")
	}
}

func TestRequiredAuditOnUnwritablePath(t *testing.T) {
	t.Parallel()
	// A path below a regular file cannot be created even by root (mode bits would not stop root).
	dir := t.TempDir()
	blocker := filepath.Join(dir, "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runServer([]string{"-addr", "127.0.0.1:0", "-audit-required", "-audit-path", filepath.Join(blocker, "audit.jsonl")}, nil)
	r.Expect(t, "required audit log below a file", 1, "audit log (required)")
}
