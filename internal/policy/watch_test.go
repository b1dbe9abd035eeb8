package policy_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

const (
	policyDeny = "version: 1\nname: v1\nrules:\n  - id: a\n    effect: {deny: {reason: one}}\n"
	policyAsk  = "version: 1\nname: v2\nrules:\n  - id: a\n    effect: {ask: {reason: two}}\n"
	policyBad  = "version: 1\nname: v3\nrules:\n  - id: a\n    when: nope\n    effect: {ask: {}}\n"
)

// recorder collects watcher callbacks.
type recorder struct {
	mu       sync.Mutex
	reloads  []string
	recovers []string
	errs     []error
	reloaded chan struct{}
	failed   chan struct{}
	// polled receives a signal after each poll; a signal not yet received stands for all later
	// polls, so the watcher never waits for the test.
	polled chan struct{}
}

func newRecorder() *recorder {
	return &recorder{reloaded: make(chan struct{}, 10), failed: make(chan struct{}, 10), polled: make(chan struct{}, 1)}
}

func (r *recorder) options() policy.WatchOptions {
	return policy.WithPollHook(policy.WatchOptions{
		Interval: 5 * time.Millisecond,
		OnReload: func(p *policy.Policy) {
			r.mu.Lock()
			r.reloads = append(r.reloads, p.Name())
			r.mu.Unlock()
			signal(r.reloaded)
		},
		OnRecover: func(p *policy.Policy) {
			r.mu.Lock()
			r.recovers = append(r.recovers, p.Name())
			r.mu.Unlock()
		},
		OnError: func(err error) {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
			signal(r.failed)
		},
	}, func() { signal(r.polled) })
}

// signal sends on ch without blocking the watcher: a test that stopped listening, or fails, must
// not hang it.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// newWatcher writes content to a fresh policy file and returns a Watcher of it (not running).
func newWatcher(t *testing.T, content string) (*policy.Watcher, *recorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	testkit.ReplaceFile(t, path, content)
	rec := newRecorder()
	w, err := policy.NewWatcher(path, rec.options())
	if err != nil {
		t.Fatal(err)
	}
	return w, rec, path
}

// startWatcher is newWatcher with Run going until the test ends.
func startWatcher(t *testing.T, content string) (*policy.Watcher, *recorder, string) {
	t.Helper()
	w, rec, path := newWatcher(t, content)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
	return w, rec, path
}

func TestReloadSwapsOnGoodFile(t *testing.T) {
	t.Parallel()
	w, rec, path := startWatcher(t, policyDeny)
	if w.Policy().Name() != "v1" {
		t.Fatalf("initial policy %q", w.Policy().Name())
	}
	testkit.ReplaceFile(t, path, policyAsk)
	wait(t, rec.reloaded, "reload")
	if w.Policy().Name() != "v2" {
		t.Errorf("policy after reload = %q, want v2", w.Policy().Name())
	}
	wantVerdict(t, w.Policy().Evaluate(shell(t, "ls")), ahpv1.Verdict_VERDICT_ASK)
}

func TestReloadKeepsOldPolicyOnBrokenFile(t *testing.T) {
	t.Parallel()
	w, rec, path := startWatcher(t, policyDeny)
	old := w.Policy()
	testkit.ReplaceFile(t, path, policyBad)
	wait(t, rec.failed, "reload error")
	if w.Policy() != old {
		t.Error("a broken file replaced the policy")
	}
	rec.mu.Lock()
	msg := rec.errs[0].Error()
	rec.mu.Unlock()
	wantContains(t, "error", msg, `rule "a": when:`)
	wantContains(t, "error", msg, "keeping policy "+old.Digest())

	// Fixing the file recovers.
	testkit.ReplaceFile(t, path, policyAsk)
	wait(t, rec.reloaded, "reload after fix")
	if w.Policy().Name() != "v2" {
		t.Errorf("policy = %q, want v2", w.Policy().Name())
	}
}

func TestWatcherReportsAPersistentProblemOnce(t *testing.T) {
	t.Parallel()
	w, rec, path := startWatcher(t, policyDeny)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wait(t, rec.failed, "missing-file error")
	// Each signal stands for a poll that ended after the previous one was received; the first two
	// may stand for polls up to the failing one, so twelve signals mean ten more polls.
	for range 12 {
		wait(t, rec.polled, "a poll")
	}
	rec.mu.Lock()
	n := len(rec.errs)
	rec.mu.Unlock()
	if n != 1 {
		t.Errorf("%d errors reported for one missing file, want 1", n)
	}
	if w.Policy().Name() != "v1" {
		t.Error("a missing file replaced the policy")
	}
	testkit.ReplaceFile(t, path, policyAsk)
	wait(t, rec.reloaded, "reload after the file came back")
}

func TestReloadIgnoresRewritesWithTheSameContent(t *testing.T) {
	t.Parallel()
	w, rec, path := newWatcher(t, policyDeny)
	old := w.Policy()
	testkit.ReplaceFile(t, path, policyDeny)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if w.Policy() != old {
		t.Error("an unchanged file replaced the policy")
	}
	if len(rec.reloads) != 0 {
		t.Errorf("OnReload called for an unchanged file: %v", rec.reloads)
	}
}

func TestForcedReloadReturnsTheError(t *testing.T) {
	t.Parallel()
	w, rec, path := newWatcher(t, policyDeny)
	testkit.ReplaceFile(t, path, policyBad)
	err := w.Reload()
	if err == nil {
		t.Fatal("Reload() of a broken file = nil")
	}
	if !strings.Contains(err.Error(), "undeclared reference") {
		t.Errorf("Reload() = %v, want the compile error", err)
	}
	if len(rec.errs) != 1 {
		t.Errorf("OnError called %d times, want 1", len(rec.errs))
	}
}

func TestNewWatcherFailsOnBrokenFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	testkit.ReplaceFile(t, path, policyBad)
	if _, err := policy.NewWatcher(path, policy.WatchOptions{}); err == nil {
		t.Error("NewWatcher accepted a broken file")
	}
	if _, err := policy.NewWatcher(filepath.Join(t.TempDir(), "missing.yaml"), policy.WatchOptions{}); err == nil {
		t.Error("NewWatcher accepted a missing file")
	}
}

func TestReadersSeeAConsistentPolicyDuringReloads(t *testing.T) {
	t.Parallel()
	w, rec, path := startWatcher(t, policyDeny)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res := w.Policy().Evaluate(shell(t, "ls"))
				if res.Verdict != ahpv1.Verdict_VERDICT_DENY && res.Verdict != ahpv1.Verdict_VERDICT_ASK {
					t.Errorf("verdict %v from a half-loaded policy", res.Verdict)
					return
				}
			}
		}()
	}
	for i := range 6 {
		content := policyAsk
		if i%2 == 1 {
			content = policyDeny
		}
		testkit.ReplaceFile(t, path, content)
		wait(t, rec.reloaded, "reload")
	}
	close(stop)
	wg.Wait()
}

// policyRmLast denies "rm -rf" in its last rule: cut after its first rule, it allows it.
const policyRmLast = `version: 1
name: full
rules:
  - id: ask-push
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("git push")'
    effect: {ask: {reason: push}}
  - id: ask-curl
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("curl ")'
    effect: {ask: {reason: curl}}
  - id: deny-rm
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("rm -rf")'
    effect: {deny: {reason: no}}
`

// poll makes one check of w's file and fails the test if it reports an error.
func poll(t *testing.T, w *policy.Watcher) {
	t.Helper()
	if err := policy.Poll(w); err != nil {
		t.Fatalf("poll: %v", err)
	}
}

// An editor that truncates the file and writes it again in pieces must not get its first piece
// loaded: the watcher waits until two polls see the same file.
func TestReloadWaitsForAFileWrittenInPlaceToSettle(t *testing.T) {
	t.Parallel()
	w, rec, path := newWatcher(t, policyRmLast)
	cut := strings.Index(policyRmLast, "  - id: ask-curl")
	if err := os.WriteFile(path, []byte(policyRmLast[:cut]), 0o600); err != nil { // truncates in place
		t.Fatal(err)
	}
	poll(t, w)
	if n := len(w.Policy().Rules()); n != 3 {
		t.Fatalf("after one poll of a half-written file the policy has %d rules, want the old 3", n)
	}
	wantVerdict(t, w.Policy().Evaluate(shell(t, "rm -rf /")), ahpv1.Verdict_VERDICT_DENY)

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(policyRmLast[cut:] + "  - id: deny-dd\n    on: [tool.before]\n    when: 'has(input.command) && input.command.startsWith(\"dd \")'\n    effect: {deny: {reason: no}}\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	poll(t, w) // sees the file grow
	if n := len(w.Policy().Rules()); n != 3 {
		t.Fatalf("a file that changed since the last poll was loaded: %d rules", n)
	}
	poll(t, w) // sees it unchanged: settled
	if n := len(w.Policy().Rules()); n != 4 {
		t.Fatalf("settled file not loaded: %d rules, want 4", n)
	}
	wantVerdict(t, w.Policy().Evaluate(shell(t, "dd if=/dev/zero")), ahpv1.Verdict_VERDICT_DENY)
	if len(rec.reloads) != 1 || len(rec.errs) != 0 {
		t.Errorf("reloads %v, errors %v; want one reload", rec.reloads, rec.errs)
	}
}

// Size and modification time can stay the same across a rewrite (a coarse clock); the content
// hash still tells the two apart.
func TestReloadWaitsForTheContentToSettle(t *testing.T) {
	t.Parallel()
	w, _, path := newWatcher(t, policyDeny)
	stamp := time.Unix(1_700_000_000, 0)
	rewrite := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(policyAsk)
	poll(t, w)
	rewrite(strings.Replace(policyAsk, "two", "owt", 1)) // same size, same time
	poll(t, w)
	if w.Policy().Name() != "v1" {
		t.Fatalf("policy %q loaded while its content was still changing", w.Policy().Name())
	}
	poll(t, w)
	if w.Policy().Name() != "v2" {
		t.Fatalf("policy %q, want the settled v2", w.Policy().Name())
	}
	wantContains(t, "reason", w.Policy().Evaluate(shell(t, "ls")).Effects[0].GetAsk().GetReason(), "owt")
}

// A file restored to the policy in force after a failed reload is a recovery: reported through
// OnRecover (the server sets its reload-success metric back), not as a reload.
func TestRestoredFileRecovers(t *testing.T) {
	t.Parallel()
	w, rec, path := newWatcher(t, policyDeny)
	testkit.ReplaceFile(t, path, policyBad)
	poll(t, w)
	if err := policy.Poll(w); err == nil {
		t.Fatal("a broken file loaded")
	}
	testkit.ReplaceFile(t, path, policyDeny)
	poll(t, w)
	poll(t, w)
	if len(rec.recovers) != 1 || rec.recovers[0] != "v1" || len(rec.reloads) != 0 {
		t.Errorf("recovers %v, reloads %v; want one recovery to v1 and no reload", rec.recovers, rec.reloads)
	}
	poll(t, w)
	if len(rec.recovers) != 1 {
		t.Errorf("recovery reported %d times", len(rec.recovers))
	}

	// A forced reload (SIGHUP) of the restored file recovers as well.
	testkit.ReplaceFile(t, path, policyBad)
	if err := w.Reload(); err == nil {
		t.Fatal("Reload of a broken file = nil")
	}
	testkit.ReplaceFile(t, path, policyDeny)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if len(rec.recovers) != 2 {
		t.Errorf("recovers after a forced reload = %v, want two", rec.recovers)
	}

	// So does a missing file that comes back unchanged.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := policy.Poll(w); err == nil {
		t.Fatal("a missing file polled without an error")
	}
	testkit.ReplaceFile(t, path, policyDeny)
	poll(t, w)
	poll(t, w)
	if len(rec.recovers) != 3 || len(rec.reloads) != 0 {
		t.Errorf("recovers %v, reloads %v after the file came back; want three recoveries, no reload", rec.recovers, rec.reloads)
	}
}
