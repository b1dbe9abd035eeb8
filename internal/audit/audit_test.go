package audit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/redact"
)

func TestAppendAndVerify(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 100, 0)
	if len(files) != 1 {
		t.Fatalf("files = %v", files)
	}
	rep := mustVerify(t, files...)
	if rep.Records != 100 || rep.FirstSeq != 1 || rep.LastSeq != 100 || len(rep.Genesis) != 64 || rep.Head.Seq != 100 {
		t.Errorf("report %+v", rep)
	}
	lines := readLines(t, files[0])
	var first audit.Record
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Seq != 1 || first.Prev != rep.Genesis || first.Kind != audit.KindDecision || first.Verdict != "deny" || first.Time != "2026-11-29T10:00:00.000000000Z" {
		t.Errorf("first record %+v", first)
	}
	if !strings.HasPrefix(lines[0], `{"seq":1,"time":`) {
		t.Errorf("line does not start with seq: %s", lines[0])
	}
}

// TestLineFormatAsDocumented re-implements the verifier from docs/audit.md, independently of the
// package: strip the hash member, hash prev + the rest, compare, chain.
func TestLineFormatAsDocumented(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 20, 0)
	prev := ""
	for i, line := range readLines(t, files[0]) {
		const suffixLen = len(`,"hash":"`) + 64 + len(`"}`)
		canonical := line[:len(line)-suffixLen] + "}"
		hash := line[len(line)-suffixLen+len(`,"hash":"`) : len(line)-2]
		var rec struct {
			Seq  uint64 `json:"seq"`
			Prev string `json:"prev"`
		}
		if err := json.Unmarshal([]byte(canonical), &rec); err != nil {
			t.Fatalf("line %d: canonical bytes are not JSON: %v", i+1, err)
		}
		sum := sha256.Sum256([]byte(rec.Prev + canonical))
		if hex.EncodeToString(sum[:]) != hash {
			t.Fatalf("line %d: hash does not match the documented construction", i+1)
		}
		if rec.Seq != uint64(i+1) || (prev != "" && rec.Prev != prev) {
			t.Fatalf("line %d: chain broken", i+1)
		}
		if !strings.HasSuffix(canonical, `,"prev":"`+rec.Prev+`"}`) {
			t.Fatalf("line %d: prev is not the last member before hash", i+1)
		}
		prev = hash
	}
}

func TestRecordFor(t *testing.T) {
	t.Parallel()
	ev := shellEvent("e1", "rm -rf /")
	ev.Harness = &ahpv1.HarnessEnvelope{AgentId: "harness-agent"}
	d := &ahpv1.Decision{
		DecisionId: "d1",
		Verdict:    ahpv1.Verdict_VERDICT_DENY,
		Effects: []*ahpv1.Effect{
			{RuleId: "r1", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no", Code: "c"}}},
			{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: ahpv1.ModifyTarget_MODIFY_TARGET_INPUT, Reason: "m"}}},
			{Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Reason: "e", Target: "security"}}},
			{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: 500}}},
			{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "hi"}}},
		},
		MatchedRuleIds: []string{"r1", "dry"},
		DryRuns:        []*ahpv1.DryRun{{RuleId: "dry", WouldBe: &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "ask?"}}}}},
		Fallbacks:      []*ahpv1.Fallback{{RuleId: "r2", Wanted: &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{}}}, Reason: "caller cannot ask"}},
		Synthetic:      true,
		Replayed:       true,
		LatencyUs:      42,
		Typed:          &ahpv1.Decision_Planning{Planning: &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Block{Block: &ahpv1.TypedBlock{Reason: "x"}}}},
	}
	rec := audit.RecordFor(ev, d, t0)
	want := audit.Record{
		Time: "2026-11-29T10:00:00.000000000Z", Kind: audit.KindDecision, DecisionID: "d1", EventID: "e1",
		Source: "urn:ahp:test", SessionID: "sess-1", AgentID: "harness-agent", EventType: "tool.before",
		ToolName: "Bash", ToolKind: "shell", ToolCallID: "call-e1", Verdict: "deny",
		Effects: []audit.Effect{
			{Kind: "deny", RuleID: "r1", Reason: "no", Code: "c"},
			{Kind: "modify", Reason: "m", Target: "input"},
			{Kind: "escalate", Reason: "e", Target: "security"},
			{Kind: "defer", RetryAfterMs: 500},
			{Kind: "message", Message: "hi"},
		},
		MatchedRuleIDs: []string{"r1", "dry"},
		DryRun:         []audit.DryRun{{RuleID: "dry", WouldBe: audit.Effect{Kind: "ask", Reason: "ask?"}}},
		Fallbacks:      []audit.Fallback{{RuleID: "r2", Wanted: "ask", Reason: "caller cannot ask"}},
		Typed:          "block", Synthetic: true, Replayed: true, LatencyUs: 42,
	}
	got, _ := json.Marshal(rec)
	exp, _ := json.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("RecordFor\n got %s\nwant %s", got, exp)
	}
	obs := audit.RecordFor(ev, nil, t0)
	if obs.Kind != audit.KindObservation || obs.DecisionID != "" || obs.Verdict != "" || obs.EventType != "tool.before" {
		t.Errorf("observation %+v", obs)
	}
}

func TestRecordsAreRedactedAndCarryNoPayload(t *testing.T) {
	t.Parallel()
	const token = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	const password = "Sup3rS3cretPw"
	for _, include := range []bool{false, true} {
		dir := t.TempDir()
		l := open(t, audit.Config{Dir: dir, IncludeEvent: include})
		ev := shellEvent("e1", "GITHUB_TOKEN="+token+" git push https://u:"+password+"@example.com/r.git && echo done")
		ev.Tool.Output = nil
		d := denial("e1", "command uses "+token)
		d.Effects = append(d.Effects, &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "password=" + password}}})
		rec := audit.RecordFor(ev, d, t0)
		rec.Extensions = map[string]any{"com.example/note": map[string]any{"why": "token " + token}}
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
		closeLog(t, l)
		b, err := os.ReadFile(filepath.Join(dir, audit.DefaultFileName))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.Contains(text, "u8jzPde0") || strings.Contains(text, password) {
			t.Fatalf("secret written (IncludeEvent=%v): %s", include, text)
		}
		if strings.Contains(text, "git push") != include {
			t.Errorf("IncludeEvent=%v but the command is present=%v: %s", include, !include, text)
		}
		var got audit.Record
		if err := json.Unmarshal(bytes.TrimSpace(b), &got); err != nil {
			t.Fatal(err)
		}
		red, ok := got.Extensions[audit.RedactionExtension].(map[string]any)
		if !ok {
			t.Fatalf("no redaction marker: %s", text)
		}
		masked, _ := json.Marshal(red["masked"])
		for _, path := range []string{"effects.0.reason", "effects.1.message", "extensions.com.example/note.why"} {
			if !strings.Contains(string(masked), `"path":"`+path+`"`) {
				t.Errorf("marker %s lacks %s", masked, path)
			}
		}
		if include && !strings.Contains(string(masked), `"path":"event.tool.input.command"`) {
			t.Errorf("marker %s lacks the event's path", masked)
		}
		if include && !strings.Contains(text, `"event":{`) {
			t.Errorf("no event: %s", text)
		}
		if !include && strings.Contains(text, `"event"`) {
			t.Errorf("event written without IncludeEvent: %s", text)
		}
		mustVerify(t, filepath.Join(dir, audit.DefaultFileName))
	}
}

func TestAppendIgnoresChainFieldsAndFillsTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := open(t, audit.Config{Dir: dir, Now: func() time.Time { return t0 }})
	if err := l.Append(audit.Record{Kind: audit.KindObservation, Seq: 99, Prev: "x", Hash: "y", Event: []byte(`{"raw":"secret"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(audit.Record{}); err == nil {
		t.Error("a record without kind was accepted")
	}
	closeLog(t, l)
	lines := readLines(t, filepath.Join(dir, audit.DefaultFileName))
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":1,"time":"2026-11-29T10:00:00.000000000Z","kind":"observation","prev":"`) {
		t.Errorf("lines %q", lines)
	}
}

func TestRotationKeepsTheChain(t *testing.T) {
	t.Parallel()
	const maxBytes = 4 << 10
	files := writeLog(t, 200, maxBytes)
	if len(files) < 4 {
		t.Fatalf("expected several files, got %v", files)
	}
	for i, f := range files[:len(files)-1] {
		if want := filepath.Join(filepath.Dir(f), audit.DefaultFileName) + "." + []string{"000001", "000002", "000003"}[min(i, 2)]; i < 3 && f != want {
			t.Errorf("file %d = %s, want %s", i, f, want)
		}
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxBytes {
			t.Errorf("%s is %d bytes, over %d", f, fi.Size(), maxBytes)
		}
	}
	for i := 1; i < len(files); i++ {
		prevLines, lines := readLines(t, files[i-1]), readLines(t, files[i])
		var last, first audit.Record
		_ = json.Unmarshal([]byte(prevLines[len(prevLines)-1]), &last)
		_ = json.Unmarshal([]byte(lines[0]), &first)
		if first.Prev != last.Hash || first.Seq != last.Seq+1 {
			t.Errorf("%s does not continue %s: %d/%s after %d/%s", files[i], files[i-1], first.Seq, first.Prev, last.Seq, last.Hash)
		}
	}
	if rep := mustVerify(t, files...); rep.Records != 200 {
		t.Errorf("records = %d", rep.Records)
	}
}

func TestResumeContinuesTheChain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for round := range 3 {
		l := appendRecords(t, audit.Config{Dir: dir, MaxBytes: 3 << 10}, round*15, (round+1)*15)
		if h := l.Head(); h.Seq != uint64(round+1)*15 {
			t.Errorf("round %d: head %+v", round, h)
		}
	}
	files, _ := audit.Files(filepath.Join(dir, audit.DefaultFileName))
	if rep := mustVerify(t, files...); rep.Records != 45 {
		t.Errorf("records = %d", rep.Records)
	}
}

func TestResumeAfterCrashDuringRotation(t *testing.T) {
	t.Parallel()
	dir, path := newLog(t, 5)
	// The crash happened after the rename and before the new active file was created.
	if err := os.Rename(path, path+".000001"); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, audit.Config{Dir: dir}, 5, 6)
	files, _ := audit.Files(path)
	if len(files) != 2 {
		t.Errorf("files %v, want the rotated one and a new active one", files)
	}
	if rep := mustVerify(t, files...); rep.Records != 6 {
		t.Errorf("records = %d, want 6", rep.Records)
	}
}

func TestHalfWrittenTailIsCut(t *testing.T) {
	t.Parallel()
	dir, path := newLog(t, 5)
	whole, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"seq":6,"time":"2026-11-29T10:00:01.000000000Z","kind":"deci`)
	f.Close()

	// Before a restart, Verify points at the cut line.
	rep, err := audit.Verify(path)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.OK() {
		t.Fatal("Verify passed a log with a half-written line")
	}
	if rep.Failure.Line != 6 || rep.Failure.Check != audit.CheckIncomplete {
		t.Errorf("Verify failure %+v, want line 6, %s", rep.Failure, audit.CheckIncomplete)
	}
	if rep.Records != 5 {
		t.Errorf("Verify records = %d, want 5", rep.Records)
	}

	var logs bytes.Buffer
	l := open(t, audit.Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if !strings.Contains(logs.String(), "half-written") {
		t.Errorf("no warning: %s", logs.String())
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, whole) {
		t.Errorf("the partial line was not cut off exactly")
	}
	_ = l.Append(record(5))
	closeLog(t, l)
	if rep := mustVerify(t, path); rep.Records != 6 {
		t.Errorf("records = %d", rep.Records)
	}
}

func TestTailMissingOnlyItsNewlineIsKept(t *testing.T) {
	t.Parallel()
	dir, path := newLog(t, 3)
	b, _ := os.ReadFile(path)
	_ = os.WriteFile(path, bytes.TrimSuffix(b, []byte("\n")), 0o600)
	appendRecords(t, audit.Config{Dir: dir}, 3, 4)
	if rep := mustVerify(t, path); rep.Records != 4 {
		t.Errorf("records = %d", rep.Records)
	}
}

func TestOpenRefusesACorruptTail(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 3, 0)
	lines := readLines(t, files[0])
	lines[2] = strings.Replace(lines[2], `"Bash"`, `"Bash2"`, 1)
	writeLines(t, files[0], lines)
	_, err := audit.Open(audit.Config{Path: files[0], Logger: quietLogger()})
	if !errors.Is(err, audit.ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrCorrupt", err)
	}
}

func TestOpenFailsOnAnUnwritablePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []audit.Config{
		{Path: filepath.Join(blocker, "audit.jsonl")},
		{Dir: filepath.Join(blocker, "sub")},
		{Path: dir}, // a directory is not a log file
	} {
		cfg.Logger = quietLogger()
		if l, err := audit.Open(cfg); err == nil {
			_ = l.Close(context.Background())
			t.Errorf("Open(%+v) succeeded", cfg)
		}
	}
}

func TestWriteFailureIsExplicitAndRecovers(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"nothing written", "half written", "all written, truncate fails"} {
		dir := t.TempDir()
		fl := &faults{}
		cfg, changed := audit.WithStateSignal(withFaults(audit.Config{Dir: dir, Required: true, RetryInterval: 5 * time.Millisecond}, fl))
		l := open(t, cfg)
		if !l.Required() {
			t.Fatal("Required() = false")
		}
		for i := range 3 {
			if err := l.Append(record(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}

		fl.partial.Store(mode == "half written")
		fl.whole.Store(mode == "all written, truncate fails")
		fl.failTruncate.Store(mode == "all written, truncate fails")
		fl.failWrites.Store(true)
		accepted := 3
		if err := l.Append(record(3)); err == nil { // accepted, then the write fails
			accepted++
		}
		waitUntil(t, changed, "the writer to report failure", func() bool { return l.Err() != nil })
		err := l.Append(record(accepted))
		if !errors.Is(err, audit.ErrUnavailable) || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("Append while failing = %v, want ErrUnavailable with its cause", err)
		}
		st := l.Stats()
		if !st.Failing {
			t.Errorf("stats while failing: Failing = false (%+v)", st)
		}
		if st.WriteErrors == 0 {
			t.Errorf("stats while failing: WriteErrors = 0 (%+v)", st)
		}
		if st.Rejected == 0 {
			t.Errorf("stats while failing: Rejected = 0 (%+v)", st)
		}

		fl.failWrites.Store(false)
		waitUntil(t, changed, "recovery", func() bool { return l.Err() == nil })
		if err := l.Append(record(accepted)); err != nil {
			t.Fatalf("Append after recovery: %v", err)
		}
		accepted++
		closeLog(t, l)
		path := filepath.Join(dir, audit.DefaultFileName)
		if rep := mustVerify(t, path); rep.Records != accepted {
			t.Errorf("%s: %d records written, %d accepted", mode, rep.Records, accepted)
		}
		if st := l.Stats(); st.Dropped != 0 {
			t.Errorf("%s: Dropped = %d, want 0", mode, st.Dropped)
		}
		if st := l.Stats(); st.Written != uint64(accepted) {
			t.Errorf("%s: Written = %d, want %d", mode, st.Written, accepted)
		}
	}
}

func TestReopenAfterOpenFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fl := &faults{}
	cfg, changed := audit.WithStateSignal(withFaults(audit.Config{Dir: dir, MaxBytes: 1 << 10, RetryInterval: 5 * time.Millisecond}, fl))
	l := open(t, cfg)
	fl.mu.Lock()
	fl.openFailures = 3 // the new file after each rotation fails to open a few times
	fl.mu.Unlock()
	for i := range 40 {
		for {
			err := l.Append(record(i))
			if err == nil {
				break
			}
			if !errors.Is(err, audit.ErrUnavailable) {
				t.Fatalf("Append %d = %v, want nil or ErrUnavailable", i, err)
			}
			waitUntil(t, changed, "recovery", func() bool { return l.Err() == nil })
		}
	}
	closeLog(t, l)
	files, _ := audit.Files(filepath.Join(dir, audit.DefaultFileName))
	if rep := mustVerify(t, files...); rep.Records != 40 {
		t.Errorf("records = %d", rep.Records)
	}
}

func TestBackpressure(t *testing.T) {
	t.Parallel()
	fl := &faults{block: make(chan struct{})}
	unblock := sync.OnceFunc(func() { close(fl.block) })
	defer unblock() // a failing check must not leave the writer stalled for the log's Close
	l := open(t, withFaults(audit.Config{QueueSize: 4, AppendTimeout: 20 * time.Millisecond}, fl))
	accepted := 0
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		if err = l.Append(record(i)); err == nil {
			accepted++
		}
	}
	if !errors.Is(err, audit.ErrBackpressure) {
		t.Fatalf("Append on a full queue = %v, want ErrBackpressure", err)
	}
	if st := l.Stats(); st.Backpressure != 1 || st.QueueDepth != 4 || st.QueueCapacity != 4 {
		t.Errorf("stats %+v", st)
	}
	unblock()
	closeLog(t, l)
	if st := l.Stats(); st.Written != uint64(accepted) || st.Dropped != 0 {
		t.Errorf("accepted %d, stats %+v", accepted, st)
	}
}

func TestCloseDrainsConcurrentAppenders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := open(t, audit.Config{Dir: dir, QueueSize: 64, MaxBytes: 64 << 10, AppendTimeout: time.Second})
	const writers, each = 8, 400
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int
		refused  []error
	)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := l.Append(record(w*each + i))
				mu.Lock()
				if err == nil {
					accepted++
				} else {
					refused = append(refused, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	closeLog(t, l)
	if err := l.Append(record(0)); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	files, _ := audit.Files(filepath.Join(dir, audit.DefaultFileName))
	if n := countLines(t, files); n != accepted || accepted != writers*each {
		t.Errorf("%d lines, %d accepted of %d (refused: %v)", n, accepted, writers*each, refused)
	}
	mustVerify(t, files...)
	if err := l.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestCloseWithConcurrentAppendsNeverLosesAnAcceptedRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := open(t, audit.Config{Dir: dir, QueueSize: 16})
	const beforeClose = 100 // accepted records, several queues' worth, before Close starts
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted int
		busy     = make(chan struct{}) // closed when beforeClose records were accepted
	)
	for range 4 {
		wg.Go(func() {
			for {
				err := l.Append(record(1))
				if errors.Is(err, audit.ErrClosed) {
					return
				}
				if err == nil {
					mu.Lock()
					accepted++
					if accepted == beforeClose {
						close(busy)
					}
					mu.Unlock()
				}
			}
		})
	}
	<-busy
	closeLog(t, l)
	wg.Wait()
	if n := countLines(t, []string{filepath.Join(dir, audit.DefaultFileName)}); n != accepted {
		t.Errorf("%d lines, %d accepted", n, accepted)
	}
}

func TestCloseGivesUpOnAFailingWriterAndSaysSo(t *testing.T) {
	t.Parallel()
	fl := &faults{}
	fl.failWrites.Store(true)
	l := open(t, withFaults(audit.Config{RetryInterval: 5 * time.Millisecond}, fl))
	accepted := 0
	for i := range 5 {
		if l.Append(record(i)) == nil {
			accepted++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := l.Close(ctx)
	if !errors.Is(err, audit.ErrUnavailable) {
		t.Fatalf("Close = %v, want ErrUnavailable", err)
	}
	if st := l.Stats(); accepted == 0 || st.Dropped != uint64(accepted) {
		t.Errorf("accepted %d, stats %+v", accepted, st)
	}
}

func TestAppendWaitAndFlush(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := open(t, audit.Config{Dir: dir, Fsync: audit.FsyncNever})
	ctx := context.Background()
	if err := l.AppendWait(ctx, record(0)); err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, []string{filepath.Join(dir, audit.DefaultFileName)}); n != 1 {
		t.Errorf("after AppendWait: %d lines", n)
	}
	_ = l.Append(record(1))
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, []string{filepath.Join(dir, audit.DefaultFileName)}); n != 2 {
		t.Errorf("after Flush: %d lines", n)
	}
	if h := l.Head(); h.Seq != 2 || len(h.Hash) != 64 {
		t.Errorf("head %+v", h)
	}
}

func TestFsyncModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("always", func(t *testing.T) {
		t.Parallel()
		fl := &faults{}
		l := open(t, withFaults(audit.Config{Fsync: audit.FsyncAlways}, fl))
		for i := range 5 {
			before := fl.syncs.Load()
			if err := l.AppendWait(ctx, record(i)); err != nil {
				t.Fatal(err)
			}
			if fl.syncs.Load() == before {
				t.Fatalf("record %d reported written before a sync", i)
			}
		}
	})
	t.Run("interval", func(t *testing.T) {
		t.Parallel()
		fl := &faults{}
		interval := make(chan time.Duration, 1)
		ticks := make(chan time.Time)
		l := open(t, audit.WithTicker(withFaults(audit.Config{FsyncInterval: 10 * time.Millisecond}, fl), func(d time.Duration) <-chan time.Time {
			interval <- d
			return ticks
		}))
		if err := l.AppendWait(ctx, record(0)); err != nil {
			t.Fatal(err)
		}
		if d := <-interval; d != 10*time.Millisecond {
			t.Errorf("ticker interval %v, want 10ms", d)
		}
		if n := fl.syncs.Load(); n != 0 {
			t.Errorf("%d syncs before the first tick", n)
		}
		// A send returns once the writer took the tick, the next one once it has handled it: after
		// four sends the first three ticks (one after the write, two idle) are handled.
		for range 4 {
			ticks <- t0
		}
		if n := fl.syncs.Load(); n != 1 {
			t.Errorf("%d syncs for one write; idle intervals must not sync", n)
		}
	})
	t.Run("never", func(t *testing.T) {
		t.Parallel()
		fl := &faults{}
		var ticker atomic.Bool
		l := open(t, audit.WithTicker(withFaults(audit.Config{Fsync: audit.FsyncNever, FsyncInterval: time.Millisecond}, fl), func(time.Duration) <-chan time.Time {
			ticker.Store(true)
			return nil
		}))
		for i := range 5 {
			if err := l.AppendWait(ctx, record(i)); err != nil {
				t.Fatal(err)
			}
		}
		if ticker.Load() {
			t.Error("FsyncNever started the interval ticker")
		}
		if n := fl.syncs.Load(); n != 0 {
			t.Errorf("%d syncs under FsyncNever", n)
		}
		closeLog(t, l)
		if n := fl.syncs.Load(); n != 1 {
			t.Errorf("%d syncs at Close, want 1", n)
		}
	})
	t.Run("sync failure", func(t *testing.T) {
		t.Parallel()
		fl := &faults{}
		fl.failSyncs.Store(true)
		cfg, changed := audit.WithStateSignal(withFaults(audit.Config{Fsync: audit.FsyncAlways, RetryInterval: 5 * time.Millisecond}, fl))
		l := open(t, cfg)
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if err := l.AppendWait(wctx, record(0)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("AppendWait with failing syncs = %v", err)
		}
		if !errors.Is(l.Err(), audit.ErrUnavailable) {
			t.Errorf("Err() = %v", l.Err())
		}
		fl.failSyncs.Store(false)
		waitUntil(t, changed, "recovery", func() bool { return l.Err() == nil })
	})
}

func TestParseFsyncMode(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"always", "interval", "never"} {
		var m audit.FsyncMode
		if err := m.UnmarshalText([]byte(s)); err != nil || m.String() != s {
			t.Errorf("%s: %v, %v", s, m, err)
		}
	}
	if _, err := audit.ParseFsyncMode("sometimes"); err == nil {
		t.Error("ParseFsyncMode accepted nonsense")
	}
}

func TestDefaultDirAndFiles(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/lib/state")
	if d, err := audit.DefaultDir(); err != nil || d != "/var/lib/state/ahp-server/audit" {
		t.Errorf("DefaultDir = %q, %v", d, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, audit.DefaultFileName)
	for _, name := range []string{"audit.jsonl.000010", "audit.jsonl.000002", "audit.jsonl.bak", "audit.jsonl.", "other.jsonl.000001"} {
		_ = os.WriteFile(filepath.Join(dir, name), nil, 0o600)
	}
	files, err := audit.Files(path)
	want := []string{path + ".000002", path + ".000010"}
	if err != nil || !slices.Equal(files, want) {
		t.Errorf("Files = %v, %v; want %v", files, err, want)
	}
	if files, err := audit.Files(filepath.Join(dir, "missing", "audit.jsonl")); err != nil || len(files) != 0 {
		t.Errorf("Files of a missing log = %v, %v", files, err)
	}
}

// denialWithCap writes one denial of reason through a log whose redactor caps fields at 64 bytes
// and returns the log's lines.
func denialWithCap(t *testing.T, reason string) []string {
	t.Helper()
	dir := t.TempDir()
	r, err := redact.New(redact.Config{MaxFieldBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	l := open(t, audit.Config{Dir: dir, Redactor: r})
	_ = l.Append(audit.RecordFor(shellEvent("e", "ls"), denial("e", reason), t0))
	closeLog(t, l)
	return readLines(t, filepath.Join(dir, audit.DefaultFileName))
}

func TestRedactorIsUsed(t *testing.T) {
	t.Parallel()
	text := strings.Join(denialWithCap(t, strings.Repeat("long reason ", 10)), "\n")
	if !strings.Contains(text, "[TRUNCATED:120 bytes]") || !strings.Contains(text, `"truncated":[{"path":"effects.0.reason","bytes":120}]`) || !strings.Contains(text, `"decision_id":"0190b3a4-0000-7000-8000-000000000001"`) {
		t.Errorf("truncation not applied or not marked: %s", text)
	}
}

// A field cut at the cap keeps whole runes, so the record stays valid UTF-8 JSON.
func TestTruncatedFieldKeepsRunesWhole(t *testing.T) {
	t.Parallel()
	lines := denialWithCap(t, "a"+strings.Repeat("é", 200))
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1", len(lines))
	}
	var rec struct {
		Effects []struct {
			Reason string `json:"reason"`
		} `json:"effects"`
	}
	if !utf8.ValidString(lines[0]) || json.Unmarshal([]byte(lines[0]), &rec) != nil || len(rec.Effects) != 1 {
		t.Fatalf("record is not valid UTF-8 JSON with one effect: %q", lines[0])
	}
	want := "a" + strings.Repeat("é", 31) + "[TRUNCATED:401 bytes]"
	if got := rec.Effects[0].Reason; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}
