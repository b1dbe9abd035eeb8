package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// TestRequiredRecordIsWrittenBeforeItReturns stalls the writer (every write blocks) under a
// required log: no Record returns nil while its record is not in the file, each gives up at
// RequiredTimeout with ErrUnavailable, and records not yet taken by the writer are withdrawn
// rather than written later under a decision that was never given.
func TestRequiredRecordIsWrittenBeforeItReturns(t *testing.T) {
	t.Parallel()
	fl := &faults{block: make(chan struct{}), blocked: make(chan struct{}, 1)}
	unblock := sync.OnceFunc(func() { close(fl.block) })
	defer unblock() // a failing check must not leave the writer stalled for the log's Close
	dir := t.TempDir()
	l := open(t, withFaults(audit.Config{Dir: dir, Required: true, RequiredTimeout: 50 * time.Millisecond, Fsync: audit.FsyncAlways}, fl))

	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	recordAsync := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- l.Record(record(i))
		}()
	}
	// The writer takes the first record and stalls in its write; only then do the others come,
	// so they queue behind a stalled writer, whatever the machine's speed.
	recordAsync(0)
	testkit.Receive(t, fl.blocked, "the writer did not start writing the first record")
	for i := 1; i < n; i++ {
		recordAsync(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, audit.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Record with a stalled writer = %v, want ErrUnavailable and DeadlineExceeded", err)
		}
	}
	st := l.Stats()
	if st.Withdrawn != n-1 {
		t.Fatalf("Withdrawn = %d, want %d: every record queued behind the stalled writer", st.Withdrawn, n-1)
	}
	unblock() // the disk comes back
	// AppendWait is Record's wait without the 50 ms bound the stall above needed: the writer may
	// first finish the batch it held, and on a loaded machine that takes longer.
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if err := l.AppendWait(ctx, record(n)); err != nil {
		t.Fatalf("AppendWait after the writer recovered: %v", err)
	}
	lines := readLines(t, filepath.Join(dir, audit.DefaultFileName))
	if got := lines[len(lines)-1]; !strings.Contains(got, `"event_id":"e40"`) {
		t.Fatalf("Record returned before its record was in the file; last line: %s", got)
	}
	closeLog(t, l)
	lines = readLines(t, filepath.Join(dir, audit.DefaultFileName))
	// Only the batch the writer had taken when it stalled can be there, besides the last record.
	if want := n + 1 - int(st.Withdrawn); len(lines) != want {
		t.Fatalf("%d lines, want %d (%d records, %d withdrawn)", len(lines), want, n+1, st.Withdrawn)
	}
	mustVerify(t, filepath.Join(dir, audit.DefaultFileName))
}

// TestRecordWithoutRequiredDoesNotWait: an optional log only queues.
func TestRecordWithoutRequiredDoesNotWait(t *testing.T) {
	t.Parallel()
	fl := &faults{block: make(chan struct{})}
	defer close(fl.block) // before the log's Close (a cleanup), on every path
	l := open(t, withFaults(audit.Config{}, fl))
	if err := l.Record(record(0)); err != nil {
		t.Fatalf("Record: %v", err)
	}
}

// notice is the notice part of an audit line.
type notice struct {
	Kind       string `json:"kind"`
	Seq        uint64 `json:"seq"`
	Extensions map[string]struct {
		Notice       string `json:"notice"`
		PreviousSeq  uint64 `json:"previous_seq"`
		PreviousHash string `json:"previous_hash"`
	} `json:"extensions"`
}

func noticeHash(t *testing.T, line string) string {
	t.Helper()
	var n notice
	if err := json.Unmarshal([]byte(line), &n); err != nil {
		t.Fatal(err)
	}
	return n.Extensions[audit.NoticeExtension].PreviousHash
}

func parseNotice(t *testing.T, line string) (what string, prev uint64) {
	t.Helper()
	var n notice
	if err := json.Unmarshal([]byte(line), &n); err != nil {
		t.Fatal(err)
	}
	if n.Kind != string(audit.KindNotice) {
		t.Fatalf("line is a %q record, want a notice: %s", n.Kind, line)
	}
	e := n.Extensions[audit.NoticeExtension]
	return e.Notice, e.PreviousSeq
}

// TestDeletedOrReplacedActiveFileIsNoticed deletes, then replaces, the active file while the log
// has it open: the next write notices (log line, Stats.FilesLost), opens a new file that begins
// with a notice naming the last record written, and goes on with the chain.
func TestDeletedOrReplacedActiveFileIsNoticed(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"deleted", "replaced"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, audit.DefaultFileName)
			logs := &testkit.LogBuffer{}
			l := open(t, audit.Config{Dir: dir, Required: true, Logger: logs.Logger()})
			for i := range 3 {
				if err := l.Record(record(i)); err != nil {
					t.Fatal(err)
				}
			}
			switch how {
			case "deleted":
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			case "replaced":
				other := filepath.Join(dir, "other")
				if err := os.WriteFile(other, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(other, path); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Record(record(3)); err != nil {
				t.Fatalf("Record after the file was %s: %v", how, err)
			}
			lines := readLines(t, path)
			if len(lines) != 2 {
				t.Fatalf("new file has %d lines, want a notice and the record", len(lines))
			}
			if what, prev := parseNotice(t, lines[0]); what != "active_file_"+how || prev != 3 {
				t.Fatalf("notice = %q after seq %d, want active_file_%s after seq 3", what, prev, how)
			}
			if !strings.Contains(lines[1], `"seq":5,`) || !strings.Contains(lines[1], `"event_id":"e3"`) {
				t.Fatalf("record after the notice: %s", lines[1])
			}
			if got := l.Stats().FilesLost; got != 1 {
				t.Fatalf("FilesLost = %d, want 1", got)
			}
			if !strings.Contains(logs.String(), "the active log file was "+how) {
				t.Fatalf("no log line says the file was %s:\n%s", how, logs.String())
			}
			closeLog(t, l)
			// The new file verifies on its own from the head the notice names.
			rep, err := audit.VerifyWith(audit.VerifyOptions{After: &audit.Head{Seq: 3, Hash: noticeHash(t, lines[0])}}, path)
			if err != nil || !rep.OK() {
				t.Fatalf("verify the new file after the notice's head: %v %v", err, rep.Failure)
			}
		})
	}
}

// TestDeletionDuringAWriteFailsItsWaiters: a file deleted between the check and the write takes
// the batch with it, so the waiters are told their records are not recorded (a required
// decision fails closed), and the next record goes to a new file after a notice.
func TestDeletionDuringAWriteFailsItsWaiters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, audit.DefaultFileName)
	var once sync.Once
	cfg := audit.WithOpenFile(audit.Config{Dir: dir, Required: true}, func(p string) (audit.File, error) {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		return deletingFile{File: f, before: func() { once.Do(func() { _ = os.Remove(p) }) }}, nil
	})
	l := open(t, cfg)
	if err := l.Record(record(0)); !errors.Is(err, audit.ErrUnavailable) {
		t.Fatalf("Record into a file deleted during the write = %v, want ErrUnavailable", err)
	}
	if err := l.Record(record(1)); err != nil {
		t.Fatalf("Record after: %v", err)
	}
	lines := readLines(t, path)
	if what, prev := parseNotice(t, lines[0]); what != "active_file_deleted" || prev != 1 || len(lines) != 2 {
		t.Fatalf("new file: notice %q after %d, %d lines; want active_file_deleted after 1, 2 lines", what, prev, len(lines))
	}
}

// deletingFile runs before ahead of its first write.
type deletingFile struct {
	*os.File
	before func()
}

func (f deletingFile) Write(b []byte) (int, error) {
	f.before()
	return f.File.Write(b)
}

// TestMissingPreviousLogIsReported: a log whose files were deleted between runs does not
// silently start over: Open logs it, counts it, and the new chain begins with a notice naming
// the last record of the old one.
func TestMissingPreviousLogIsReported(t *testing.T) {
	t.Parallel()
	dir, path := newLog(t, 3)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	l := open(t, audit.Config{Dir: dir, Logger: logs.Logger()})
	if got := l.Stats().FilesLost; got != 1 {
		t.Fatalf("FilesLost = %d, want 1", got)
	}
	if !strings.Contains(logs.String(), "the previous log is missing") {
		t.Fatalf("no log line says the previous log is missing:\n%s", logs.String())
	}
	closeLog(t, l)
	lines := readLines(t, path)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want the notice", len(lines))
	}
	if what, prev := parseNotice(t, lines[0]); what != "previous_log_missing" || prev != 3 {
		t.Fatalf("notice %q after %d, want previous_log_missing after 3", what, prev)
	}
	mustVerify(t, path) // a new genesis, and a valid chain

	// A log that is new, or continues where it was closed, raises nothing.
	logs2 := &testkit.LogBuffer{}
	l2 := open(t, audit.Config{Dir: dir, Logger: logs2.Logger()})
	if got := l2.Stats().FilesLost; got != 0 {
		t.Fatalf("reopening a complete log: FilesLost = %d, want 0", got)
	}
}
