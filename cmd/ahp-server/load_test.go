package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/cli/clitest"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/types/known/structpb"
)

// The load suite runs briefly by default (CI); -load.duration runs it longer, e.g.
// go test ./cmd/ahp-server -run Load -load.duration 10m.
var (
	loadDuration = flag.Duration("load.duration", 10*time.Second, "how long the sustained-load test runs")
	loadRate     = flag.Int("load.rate", 300, "calls per second in the sustained-load test")
)

// loadEvent is event i of a load worker: a Bash tool.after for kind "obs", a tool.before
// otherwise, in session "load", with call id "c-<i>".
func loadEvent(kind string, i int) *ahpv1.Event {
	typ := ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE
	if kind == "obs" {
		typ = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	}
	return testkit.ShellEvent(fmt.Sprintf("%s-%d", kind, i), "ls -la",
		testkit.Source("urn:load"), testkit.Session("load"), testkit.Type(typ),
		func(ev *ahpv1.Event) { ev.Tool.CallId = fmt.Sprintf("c-%d", i) })
}

// auditIDs reads an audit log and returns the decision ids and observed event ids it holds.
func auditIDs(t *testing.T, path string) (decisions, observations map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decisions, observations = map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Kind       string `json:"kind"`
			DecisionID string `json:"decision_id"`
			EventID    string `json:"event_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.DecisionID != "" {
			decisions[rec.DecisionID] = true
		} else if rec.EventID != "" {
			observations[rec.EventID] = true
		}
	}
	return decisions, observations
}

// TestSustainedLoadEveryAcceptedEventIsAudited drives a fixed rate of intercepts and observations
// for a fixed time: zero errors, and every decision and observation is in the audit log.
func TestSustainedLoadEveryAcceptedEventIsAudited(t *testing.T) {
	t.Parallel()
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	url, stderr, stop := startServer(t, []string{"-audit-path", auditFile, "-audit-required"}, nil)
	ctx := context.Background()
	intercept := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), url)
	observe := ahpv1connect.NewObservationServiceClient(testkit.H2CClient(), url)

	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		decisionIDs []string
		observed    []string
		errs        atomic.Int64
	)
	tick := time.NewTicker(time.Second / time.Duration(*loadRate))
	defer tick.Stop()
	end := time.Now().Add(*loadDuration)
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				resp, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: loadEvent("dec", i)}))
				if err != nil {
					errs.Add(1)
					return
				}
				mu.Lock()
				decisionIDs = append(decisionIDs, resp.Msg.GetDecision().GetDecisionId())
				mu.Unlock()
				return
			}
			if _, err := observe.Observe(ctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: loadEvent("obs", i)})); err != nil {
				errs.Add(1)
				return
			}
			mu.Lock()
			observed = append(observed, fmt.Sprintf("obs-%d", i))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := errs.Load(); n != 0 {
		t.Fatalf("%d calls failed under load", n)
	}
	decisions, observations := auditIDs(t, auditFile)
	for _, id := range decisionIDs {
		if !decisions[id] {
			t.Fatalf("decision %s is not in the audit log", id)
		}
	}
	for _, id := range observed {
		if !observations[id] {
			t.Fatalf("observation %s is not in the audit log", id)
		}
	}
	if len(decisionIDs) == 0 {
		t.Fatal("no decision was asked for")
	}
	if len(observed) == 0 {
		t.Fatal("no event was observed")
	}
	t.Logf("%d decisions and %d observations in %v, all audited", len(decisionIDs), len(observed), *loadDuration)
}

// TestBrokenPolicyUnderLoadFailsNoCall replaces the policy file with a broken one while calls are
// in flight: the old policy keeps serving and no call fails.
func TestBrokenPolicyUnderLoadFailsNoCall(t *testing.T) {
	t.Parallel()
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	good := "version: 1\nname: load\nrules:\n  - id: deny-rm\n    on: [tool.before]\n    when: 'has(input.command) && input.command.startsWith(\"rm \")'\n    effect: {deny: {reason: no rm}}\n"
	if err := os.WriteFile(policyFile, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stderr, stop := startServer(t, []string{"-policy", policyFile, "-policy-poll", "20ms"}, nil)
	intercept := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var calls, failures atomic.Int64
	done := make(chan struct{})
	called := make(chan struct{}, 1) // a call ended since the test last looked
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				ev := loadEvent(fmt.Sprintf("w%d", w), i)
				ev.Tool.Input.Fields["command"] = structpb.NewStringValue("rm -rf build")
				resp, err := intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{Event: ev}))
				calls.Add(1)
				if err != nil || resp.Msg.GetDecision().GetVerdict() != ahpv1.Verdict_VERDICT_DENY {
					failures.Add(1)
				}
				select {
				case called <- struct{}{}:
				default:
				}
			}
		}()
	}
	// moreCalls returns once n more calls have ended, so that every policy file meets load.
	moreCalls := func(n int64) {
		for target := calls.Load() + n; calls.Load() < target; {
			<-called
		}
	}
	reportedFailures := 0
	moreCalls(20)
	for _, content := range []string{"rules: [this is: broken", "version: 1\nrules:\n  - id: x\n    when: 'nope('\n    effect: {deny: {reason: r}}\n", good} {
		tmp := policyFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, policyFile); err != nil {
			t.Fatal(err)
		}
		if content != good {
			// Each broken file is reported once; the good one is not, being the policy in force.
			reportedFailures++
			seen := 0
			stderr.Wait(t, func(line string) bool {
				if strings.Contains(line, "policy reload failed") {
					seen++
				}
				return seen == reportedFailures
			})
		}
		moreCalls(20)
	}
	close(done)
	wg.Wait()
	stop()
	if calls.Load() == 0 {
		t.Fatal("no call was made")
	}
	if failures.Load() != 0 {
		t.Fatalf("%d of %d calls failed or lost the policy while it was replaced", failures.Load(), calls.Load())
	}
}

// TestSIGTERMUnderLoadAnswersInFlightAndAuditsThem stops the server while calls are in flight:
// every call that got an answer is in the audit log, and the server exits 0.
func TestSIGTERMUnderLoadAnswersInFlightAndAuditsThem(t *testing.T) {
	t.Parallel()
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	url, stderr, stop := startServer(t, []string{"-audit-path", auditFile, "-audit-required"}, nil)
	intercept := ahpv1connect.NewInterceptServiceClient(testkit.H2CClient(), url)
	var (
		mu       sync.Mutex
		answered []string
		wg       sync.WaitGroup
	)
	const before = 50 // answers before the stop, so that the stop meets calls in flight
	enough := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				resp, err := intercept.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: loadEvent(fmt.Sprintf("t%d", w), i)}))
				if err != nil {
					return // the server is going away: refused calls are fine, lost answers are not
				}
				mu.Lock()
				answered = append(answered, resp.Msg.GetDecision().GetDecisionId())
				if len(answered) == before {
					close(enough)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(clitest.Timeout):
		t.Fatalf("fewer than %d calls answered within %v", before, clitest.Timeout)
	}
	code := stop() // like SIGTERM: cancels the serve context
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	decisions, _ := auditIDs(t, auditFile)
	mu.Lock()
	defer mu.Unlock()
	if len(answered) == 0 {
		t.Fatal("no call was answered before the stop")
	}
	for _, id := range answered {
		if !decisions[id] {
			t.Fatalf("answered decision %s is missing from the audit log", id)
		}
	}
}
