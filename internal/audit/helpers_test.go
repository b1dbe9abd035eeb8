package audit_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/audit"
	"google.golang.org/protobuf/types/known/structpb"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// open opens a log in a fresh directory with test defaults; cfg fields override them.
func open(t testing.TB, cfg audit.Config) *audit.Log {
	t.Helper()
	if cfg.Path == "" && cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	l, err := audit.Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

func closeLog(t testing.TB, l *audit.Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// shellEvent is a tool.before event for a shell command.
func shellEvent(id, command string) *ahpv1.Event {
	input, _ := structpb.NewStruct(map[string]any{"command": command})
	return &ahpv1.Event{
		Id:      id,
		Source:  "urn:ahp:test",
		Type:    ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		Session: &ahpv1.Session{Id: "sess-1", Agent: &ahpv1.Agent{Id: "agent-1"}},
		Tool:    &ahpv1.Tool{CallId: "call-" + id, Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: input},
	}
}

func denial(id, reason string) *ahpv1.Decision {
	return &ahpv1.Decision{
		DecisionId:     "0190b3a4-0000-7000-8000-" + fmt.Sprintf("%012d", len(id)),
		Verdict:        ahpv1.Verdict_VERDICT_DENY,
		Effects:        []*ahpv1.Effect{{RuleId: "no-rm", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason, Code: "dev.ahpgateway.policy.deny"}}}},
		MatchedRuleIds: []string{"no-rm"},
		LatencyUs:      12,
	}
}

// record returns the i-th test record: decisions and observations alternate.
func record(i int) audit.Record {
	ev := shellEvent(fmt.Sprintf("e%d", i), "ls -la")
	if i%2 == 1 {
		return audit.RecordFor(ev, nil, t0.Add(time.Duration(i)*time.Millisecond))
	}
	return audit.RecordFor(ev, denial(ev.Id, "command not allowed"), t0.Add(time.Duration(i)*time.Millisecond))
}

// appendRecords opens a log with cfg, appends record(from) … record(to-1), closes the log and
// returns it.
func appendRecords(t testing.TB, cfg audit.Config, from, to int) *audit.Log {
	t.Helper()
	l := open(t, cfg)
	for i := from; i < to; i++ {
		if err := l.Append(record(i)); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
	closeLog(t, l)
	return l
}

// newLog writes records 0..n-1 to a new log in a fresh directory, closes it, and returns the
// directory and the active file's path.
func newLog(t testing.TB, n int) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	appendRecords(t, audit.Config{Dir: dir}, 0, n)
	return dir, filepath.Join(dir, audit.DefaultFileName)
}

// writeLog writes n records to a new log (rotating at maxBytes when > 0) and returns its files.
func writeLog(t testing.TB, n int, maxBytes int64) []string {
	t.Helper()
	dir := t.TempDir()
	appendRecords(t, audit.Config{Dir: dir, MaxBytes: maxBytes}, 0, n)
	files, err := audit.Files(filepath.Join(dir, audit.DefaultFileName))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readLines(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func writeLines(t testing.TB, name string, lines []string) {
	t.Helper()
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(name, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func countLines(t testing.TB, files []string) int {
	t.Helper()
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(fh)
		s.Buffer(nil, 16<<20)
		for s.Scan() {
			n++
		}
		fh.Close()
	}
	return n
}

func mustVerify(t testing.TB, files ...string) audit.VerifyReport {
	t.Helper()
	rep, err := audit.Verify(files...)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("Verify failed: %v", rep.Failure)
	}
	return rep
}

// faultyFile wraps the real file with switchable faults.
type faultyFile struct {
	audit.File
	faults *faults
}

type faults struct {
	failWrites   atomic.Bool
	partial      atomic.Bool // write half of the bytes, then fail
	whole        atomic.Bool // write all the bytes, then fail anyway
	failTruncate atomic.Bool
	failSyncs    atomic.Bool
	syncs        atomic.Int64
	writes       atomic.Int64
	block        chan struct{} // when set, writes wait for it to be closed
	blocked      chan struct{} // when set (buffered), a write about to wait on block sends to it if it can
	mu           sync.Mutex
	openFailures int
}

var errInjected = errors.New("injected: no space left on device")

func (f faultyFile) Write(b []byte) (int, error) {
	if f.faults.block != nil {
		select {
		case f.faults.blocked <- struct{}{}:
		default:
		}
		<-f.faults.block
	}
	if f.faults.failWrites.Load() {
		switch {
		case f.faults.partial.Load():
			n, _ := f.File.Write(b[:len(b)/2])
			return n, errInjected
		case f.faults.whole.Load():
			n, _ := f.File.Write(b)
			return n, errInjected
		}
		return 0, errInjected
	}
	f.faults.writes.Add(1)
	return f.File.Write(b)
}

func (f faultyFile) Truncate(size int64) error {
	if f.faults.failTruncate.Load() {
		return errInjected
	}
	return f.File.Truncate(size)
}

func (f faultyFile) Sync() error {
	if f.faults.failSyncs.Load() {
		return errInjected
	}
	f.faults.syncs.Add(1)
	return f.File.Sync()
}

func withFaults(cfg audit.Config, fl *faults) audit.Config {
	return audit.WithOpenFile(cfg, func(path string) (audit.File, error) {
		fl.mu.Lock()
		if fl.openFailures > 0 {
			fl.openFailures--
			fl.mu.Unlock()
			return nil, errInjected
		}
		fl.mu.Unlock()
		f, err := audit.OpenAppend(path)
		if err != nil {
			return nil, err
		}
		return faultyFile{File: f, faults: fl}, nil
	})
}

// waitUntil waits until cond holds, checking it again on each signal from changed (see
// audit.WithStateSignal), for at most 10 s.
func waitUntil(t testing.TB, changed <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
