// Package audit is the tamper-evident, append-only audit log of ahp-server: one JSON line per
// decision and per observed event, each chained to the one before by a SHA-256 hash, so that an
// edited, removed, inserted or reordered line is found by Verify (`ahp-server audit verify`).
//
// Records are redacted before they are queued (reasons and any other text pass through a
// redact.Redactor; raw tool input and output are never recorded unless Config.IncludeEvent asks
// for the redacted event). One writer goroutine, fed by a bounded queue, owns the file: it
// batches records into few write calls, rotates by size (keeping the chain continuous across
// files) and fsyncs as configured.
//
// Nothing is lost silently. Append either accepts a record (it will be written, or Close reports
// it as dropped) or returns an error: ErrBackpressure when the queue stays full, an error
// wrapping ErrUnavailable while the writer cannot write (disk full, file gone; it retries and
// recovers on its own), ErrClosed after Close. Whether such an error must fail the decision is
// the caller's policy: Required tells it what the operator asked for.
//
// See docs/audit.md for the record format and how to verify a log with other tools.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-gateway/ahp/internal/redact"
	"google.golang.org/protobuf/encoding/protojson"
)

var (
	// ErrBackpressure is returned by Append when the queue stayed full for Config.AppendTimeout:
	// the writer is not keeping up. The record was not accepted.
	ErrBackpressure = errors.New("audit: queue full: the log writer is not keeping up")
	// ErrUnavailable is wrapped by the errors Append returns while the writer cannot write; the
	// wrapped cause says why. The record was not accepted.
	ErrUnavailable = errors.New("audit: log cannot be written")
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("audit: log closed")
	// ErrCorrupt is wrapped by Open when the last record of an existing log does not verify; run
	// Verify to find out more. Appending after it would chain onto a record nobody can trust.
	ErrCorrupt = errors.New("audit: log tail is corrupt")
)

// FsyncMode says when the log asks the operating system to put written records on disk.
type FsyncMode int

const (
	// FsyncInterval syncs at most every Config.FsyncInterval while records are being written
	// (the default): a crash loses at most that much.
	FsyncInterval FsyncMode = iota
	// FsyncAlways syncs after every batch of records, before AppendWait returns: a crash loses
	// nothing that AppendWait reported written. Batching keeps it fast under load.
	FsyncAlways
	// FsyncNever leaves syncing to the operating system, except at rotation and Close.
	FsyncNever
)

// String returns "interval", "always" or "never".
func (m FsyncMode) String() string {
	switch m {
	case FsyncAlways:
		return "always"
	case FsyncNever:
		return "never"
	case FsyncInterval:
		return "interval"
	}
	return fmt.Sprintf("FsyncMode(%d)", int(m))
}

// ParseFsyncMode parses "always", "interval" or "never".
func ParseFsyncMode(s string) (FsyncMode, error) {
	for _, m := range []FsyncMode{FsyncAlways, FsyncInterval, FsyncNever} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("audit: unknown fsync mode %q (want always, interval or never)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (m FsyncMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler, for configuration files and flags.
func (m *FsyncMode) UnmarshalText(b []byte) error {
	v, err := ParseFsyncMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// Config configures a Log. Only one of Path and Dir is needed; everything has a default.
type Config struct {
	// Path is the active log file; rotated files sit next to it as Path.000001, Path.000002, ….
	Path string
	// Dir holds the log as Dir/audit.jsonl when Path is empty (default DefaultDir()).
	Dir string
	// MaxBytes rotates the active file before a record would take it past this size (default
	// 64 MiB; negative: never rotate). A single larger record gets a file of its own.
	MaxBytes int64
	// Fsync is the durability mode (default FsyncInterval).
	Fsync FsyncMode
	// FsyncInterval is the period of FsyncInterval (default 1 s).
	FsyncInterval time.Duration
	// QueueSize bounds the records accepted but not yet written (default 8192).
	QueueSize int
	// AppendTimeout is how long Append waits for room in a full queue before it returns
	// ErrBackpressure (default 50 ms).
	AppendTimeout time.Duration
	// RetryInterval is how often a failing writer tries again (default 1 s).
	RetryInterval time.Duration
	// Required records that the operator wants decisions to fail closed when the log cannot take
	// a record. Log.Record then waits until the record is written (and synced under
	// FsyncAlways) before it returns, for at most RequiredTimeout.
	Required bool
	// RequiredTimeout bounds how long Log.Record waits for a required record (default 5 s).
	RequiredTimeout time.Duration
	// Redactor masks secrets in every record (default: redact.New(redact.Config{})).
	Redactor *redact.Redactor
	// IncludeEvent adds the redacted event (protojson) to records built by RecordFor.
	IncludeEvent bool
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock for records without a time (default time.Now).
	Now func() time.Time

	// openFile opens the active file for appending; tests replace it.
	openFile func(path string) (file, error)
	// tickEvery starts the clock of FsyncInterval; tests replace it to tick by hand.
	tickEvery func(time.Duration) (ticks <-chan time.Time, stop func())
	// changed, when set, is called by the writer after each change of its failure state, so
	// tests can wait for a state instead of polling for it.
	changed func()
}

// file is what the writer needs of the active file.
type file interface {
	Write([]byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

func openAppend(path string) (file, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
}

func newTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Head is a point in the chain: a record's seq and hash. Publishing the head now and then (a log
// line, a metric, another system) anchors the log: Verify can then prove that nothing up to that
// point was changed, even by someone who rewrote the whole file.
type Head struct {
	// Seq is the record's seq (0 before the first record).
	Seq uint64 `json:"seq"`
	// Hash is the record's hash (the genesis value before the first record).
	Hash string `json:"hash"`
}

// Stats are counters for metrics.
type Stats struct {
	// Written counts records written to the file.
	Written uint64
	// WriteErrors counts failed write, sync, rotation and open attempts.
	WriteErrors uint64
	// Rejected counts Append calls refused because the writer was failing or the log closed.
	Rejected uint64
	// Backpressure counts Append calls refused with ErrBackpressure.
	Backpressure uint64
	// Dropped counts accepted records that were never written because Close gave up on a
	// failing writer; Close reports them too. It should stay 0.
	Dropped uint64
	// Rotations counts rotated files.
	Rotations uint64
	// Withdrawn counts records whose waiter gave up (AppendWait's context ended) before the
	// writer took them: they were never written, and the caller was told so.
	Withdrawn uint64
	// FilesLost counts active files found deleted or replaced while the log had them open, and a
	// previous log found missing (or shorter than when it was closed) at Open. Each is logged
	// and recorded in the new file by a notice record. It should stay 0.
	FilesLost uint64
	// QueueDepth and QueueCapacity describe the queue now.
	QueueDepth, QueueCapacity int
	// Failing is true while the writer cannot write.
	Failing bool
}

// request is one queue item: a record to write, or (flush) a barrier to sync and answer.
type request struct {
	body  []byte     // the record's JSON object without seq, prev and hash
	done  chan error // answered once written (and synced under FsyncAlways); may be nil
	flush bool
	// claim, set for a waited record, decides who owns it when the waiter gives up: the writer
	// moves it from claimQueued to claimTaken before writing, the waiter from claimQueued to
	// claimWithdrawn, and a withdrawn record is never written.
	claim *atomic.Uint32
}

const (
	claimQueued uint32 = iota
	claimTaken
	claimWithdrawn
)

// Log is an open audit log. Its methods are safe for concurrent use.
type Log struct {
	cfg  Config
	path string
	log  *slog.Logger

	// mu is read-held while sending on queue and write-held to close it, so no send can race
	// with Close.
	mu     sync.RWMutex
	closed bool
	queue  chan request

	failure atomic.Pointer[error] // why the writer cannot write; nil when healthy
	head    atomic.Pointer[Head]
	abort   chan struct{} // closed when Close stops waiting for a failing writer
	done    chan struct{} // closed when the writer has exited
	closeMu sync.Mutex
	endErr  error // set by the writer before done is closed

	written, writeErrors, rejected, backpressure, dropped, rotations, withdrawn, filesLost atomic.Uint64

	w writer // owned by the writer goroutine
}

// Open opens (or creates) the log, continues its chain from the last record, and starts the
// writer. A half-written last line from a crash is cut off, with a warning; a last record that
// does not verify is refused with ErrCorrupt.
func Open(cfg Config) (*Log, error) {
	cfg, path, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	l := &Log{
		cfg:   cfg,
		path:  path,
		log:   cfg.Logger.With("audit_log", path),
		queue: make(chan request, cfg.QueueSize),
		abort: make(chan struct{}),
		done:  make(chan struct{}),
	}
	head, next, err := l.resume()
	if err != nil {
		return nil, err
	}
	l.w.init(head, next)
	l.head.Store(&head)
	if err := l.ensureOpen(); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if head.Seq == 0 {
		l.log.Info("audit log started", "genesis", head.Hash)
	} else {
		l.log.Info("audit log resumed", "seq", head.Seq, "hash", head.Hash)
	}
	l.checkPrevious(head)
	if n := l.w.notice; n != nil {
		// Written now, so the new chain says what happened even if nothing else is recorded.
		l.w.notice = nil
		if _, err := l.write([]request{{body: n}}); err != nil {
			l.closeFile()
			return nil, fmt.Errorf("audit: %w", err)
		}
	}
	l.saveState()
	go l.run()
	return l, nil
}

func withDefaults(cfg Config) (Config, string, error) {
	path := cfg.Path
	if path == "" {
		dir := cfg.Dir
		if dir == "" {
			d, err := DefaultDir()
			if err != nil {
				return cfg, "", err
			}
			dir = d
		}
		path = filepath.Join(dir, DefaultFileName)
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return cfg, "", fmt.Errorf("audit: %w", err)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 64 << 20
	}
	if cfg.FsyncInterval <= 0 {
		cfg.FsyncInterval = time.Second
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 8192
	}
	if cfg.AppendTimeout <= 0 {
		cfg.AppendTimeout = 50 * time.Millisecond
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = time.Second
	}
	if cfg.RequiredTimeout <= 0 {
		cfg.RequiredTimeout = 5 * time.Second
	}
	if cfg.Fsync < FsyncInterval || cfg.Fsync > FsyncNever {
		return cfg, "", fmt.Errorf("audit: invalid fsync mode %d", int(cfg.Fsync))
	}
	if cfg.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			return cfg, "", err
		}
		cfg.Redactor = r
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.openFile == nil {
		cfg.openFile = openAppend
	}
	if cfg.tickEvery == nil {
		cfg.tickEvery = newTicker
	}
	return cfg, path, nil
}

// Path returns the active file's absolute path.
func (l *Log) Path() string { return l.path }

// Required reports whether the operator asked decisions to fail closed when the log cannot take a
// record (Config.Required). The log does not act on it: the decision core does, by turning an
// Append error into a labelled synthetic denial.
func (l *Log) Required() bool { return l.cfg.Required }

// Err returns why the writer cannot write right now, or nil when it is healthy. The error wraps
// ErrUnavailable.
func (l *Log) Err() error {
	if p := l.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// Head returns the last record written (seq and hash), to anchor the log elsewhere.
func (l *Log) Head() Head { return *l.head.Load() }

// Stats returns the current counters.
func (l *Log) Stats() Stats {
	return Stats{
		Written:       l.written.Load(),
		WriteErrors:   l.writeErrors.Load(),
		Rejected:      l.rejected.Load(),
		Backpressure:  l.backpressure.Load(),
		Dropped:       l.dropped.Load(),
		Rotations:     l.rotations.Load(),
		Withdrawn:     l.withdrawn.Load(),
		FilesLost:     l.filesLost.Load(),
		QueueDepth:    len(l.queue),
		QueueCapacity: cap(l.queue),
		Failing:       l.failure.Load() != nil,
	}
}

// Append redacts rec and queues it for writing. It does not block while the queue has room; when
// the queue is full it waits up to Config.AppendTimeout and then returns ErrBackpressure. It
// returns an error wrapping ErrUnavailable while the writer cannot write, and ErrClosed after
// Close. A nil error means the record was accepted: it will be written (and Close drains it).
//
// The log assigns Seq, Prev and Hash; Time is filled in when empty.
func (l *Log) Append(rec Record) error {
	body, err := l.encode(rec)
	if err != nil {
		return err
	}
	return l.enqueue(nil, request{body: body})
}

// AppendWait is Append, then waits until the record is written (and synced, under
// FsyncAlways) or ctx ends. While the writer retries after a failure it keeps waiting. When ctx
// ends first the error wraps ErrUnavailable and ctx.Err(); a record the writer had not taken yet
// is withdrawn (never written), one it had taken may still be written.
func (l *Log) AppendWait(ctx context.Context, rec Record) error {
	body, err := l.encode(rec)
	if err != nil {
		return err
	}
	return l.enqueueWait(ctx, request{body: body})
}

// Record is how the decision core records: when the log is not required it is Append; when it
// is, it is AppendWait bounded by Config.RequiredTimeout, so a nil error means the record is in
// the file (and synced under FsyncAlways) and the answer may leave. Waiting callers share the
// writer's batches: one write (and one sync) covers every record queued meanwhile.
func (l *Log) Record(rec Record) error {
	if !l.cfg.Required {
		return l.Append(rec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.RequiredTimeout)
	defer cancel()
	return l.AppendWait(ctx, rec)
}

// Flush waits until every record accepted before it is written and synced, whatever the fsync
// mode.
func (l *Log) Flush(ctx context.Context) error {
	return l.enqueueWait(ctx, request{flush: true})
}

// enqueueWait queues req and waits for the writer's answer or the end of ctx.
func (l *Log) enqueueWait(ctx context.Context, req request) error {
	req.done = make(chan error, 1)
	if !req.flush {
		req.claim = new(atomic.Uint32)
	}
	if err := l.enqueue(ctx, req); err != nil {
		return err
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
	}
	if req.claim == nil {
		return ctx.Err()
	}
	if req.claim.CompareAndSwap(claimQueued, claimWithdrawn) {
		l.withdrawn.Add(1)
		return fmt.Errorf("%w: the record was not written in time and was withdrawn: %w", ErrUnavailable, ctx.Err())
	}
	select {
	case err := <-req.done: // taken and answered meanwhile
		return err
	default:
	}
	return fmt.Errorf("%w: the record was not confirmed written in time: %w", ErrUnavailable, ctx.Err())
}

func (l *Log) enqueue(ctx context.Context, req request) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.rejected.Add(1)
		return ErrClosed
	}
	if err := l.Err(); err != nil {
		l.rejected.Add(1)
		return err
	}
	select {
	case l.queue <- req:
		return nil
	default:
	}
	var ctxDone <-chan struct{}
	if ctx != nil {
		ctxDone = ctx.Done()
	}
	t := time.NewTimer(l.cfg.AppendTimeout)
	defer t.Stop()
	select {
	case l.queue <- req:
		return nil
	case <-t.C:
		l.backpressure.Add(1)
		return ErrBackpressure
	case <-ctxDone:
		return ctx.Err()
	}
}

// Close stops accepting records, waits until every accepted record is written and synced, and
// closes the file. If ctx ends first while the writer is failing, Close stops it, counts the
// records it could not write as dropped and says so in its error. Calling Close again returns
// the first call's result.
func (l *Log) Close(ctx context.Context) error {
	l.mu.Lock()
	first := !l.closed
	if first {
		l.closed = true
		close(l.queue)
	}
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-ctx.Done():
		l.closeMu.Lock()
		select {
		case <-l.abort:
		default:
			close(l.abort)
		}
		l.closeMu.Unlock()
		<-l.done
	}
	return l.endErr
}

// encode redacts a record and encodes it as the JSON object the writer chains.
func (l *Log) encode(rec Record) ([]byte, error) {
	if rec.Kind == "" {
		return nil, errors.New("audit: record has no kind")
	}
	rec.Seq, rec.Prev, rec.Hash, rec.Event = 0, "", "", nil
	if rec.Time == "" {
		rec.Time = FormatTime(l.cfg.Now())
	}
	rep := redactRecord(l.cfg.Redactor, &rec)
	if l.cfg.IncludeEvent && rec.event != nil {
		ev, erep := l.cfg.Redactor.Event(rec.event)
		b, err := protojson.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("audit: encoding the event: %w", err)
		}
		rec.Event = b
		erep = erep.Prefixed("event")
		rep.Masked = append(rep.Masked, erep.Masked...)
		rep.Truncated = append(rep.Truncated, erep.Truncated...)
	}
	if !rep.Empty() {
		ext := make(map[string]any, len(rec.Extensions)+1)
		for k, v := range rec.Extensions {
			ext[k] = v
		}
		ext[RedactionExtension] = rep
		rec.Extensions = ext
	}
	body, err := appendBody(make([]byte, 0, 512), &rec)
	if err != nil {
		return nil, fmt.Errorf("audit: encoding the record: %w", err)
	}
	return body, nil
}

// redactRecord masks every free-text field of rec in place and reports what it changed, by the
// record's JSON names. Fields that copy fixed names (kind, event type, tool kind, verdict, effect
// kinds) are left alone.
func redactRecord(r *redact.Redactor, rec *Record) redact.Report {
	rr := recordRedactor{r: r}
	top := func(name string) fieldPath { return fieldPath{name: name, index: -1} }
	rr.str(top("decision_id"), &rec.DecisionID)
	rr.str(top("event_id"), &rec.EventID)
	rr.str(top("source"), &rec.Source)
	rr.str(top("session_id"), &rec.SessionID)
	rr.str(top("agent_id"), &rec.AgentID)
	rr.str(top("tool_name"), &rec.ToolName)
	rr.str(top("tool_call_id"), &rec.ToolCallID)
	// The slices may be shared with the caller: copy before changing.
	rec.Effects = slices.Clone(rec.Effects)
	for i := range rec.Effects {
		rr.effect("effects", i, "", &rec.Effects[i])
	}
	rec.MatchedRuleIDs = slices.Clone(rec.MatchedRuleIDs)
	for i := range rec.MatchedRuleIDs {
		rr.str(fieldPath{base: "matched_rule_ids", index: i}, &rec.MatchedRuleIDs[i])
	}
	rec.DryRun = slices.Clone(rec.DryRun)
	for i := range rec.DryRun {
		rr.str(fieldPath{base: "dry_run", index: i, name: "rule_id"}, &rec.DryRun[i].RuleID)
		rr.effect("dry_run", i, "would_be.", &rec.DryRun[i].WouldBe)
	}
	rec.Fallbacks = slices.Clone(rec.Fallbacks)
	for i := range rec.Fallbacks {
		rr.str(fieldPath{base: "fallbacks", index: i, name: "rule_id"}, &rec.Fallbacks[i].RuleID)
		rr.str(fieldPath{base: "fallbacks", index: i, name: "reason"}, &rec.Fallbacks[i].Reason)
	}
	if rec.Approval != nil {
		a := *rec.Approval
		a.RuleIDs = slices.Clone(a.RuleIDs)
		rr.str(top("approval.comment"), &a.Comment)
		rec.Approval = &a
	}
	if len(rec.Extensions) > 0 {
		ext := make(map[string]any, len(rec.Extensions))
		for k, v := range rec.Extensions {
			ext[k] = rr.any("extensions."+k, v)
		}
		rec.Extensions = ext
	}
	return rr.rep
}

// fieldPath names a record field in a report ("effects.0.reason"); it is only rendered when
// something was found, so clean records cost no string building.
type fieldPath struct {
	base  string
	index int // -1: none
	name  string
}

// String renders the path ("effects.0.reason").
func (p fieldPath) String() string {
	s := p.base
	if p.index >= 0 {
		s += "." + strconv.Itoa(p.index)
	}
	if p.name != "" {
		if s != "" {
			s += "."
		}
		s += p.name
	}
	return s
}

// recordRedactor redacts the fields of one record and collects one report.
type recordRedactor struct {
	r   *redact.Redactor
	rep redact.Report
}

func (rr *recordRedactor) str(path fieldPath, s *string) {
	if *s == "" {
		return
	}
	out, rep := rr.r.String(*s)
	*s = out
	if !rep.Empty() {
		rep = rep.Prefixed(path.String())
		rr.rep.Masked = append(rr.rep.Masked, rep.Masked...)
		rr.rep.Truncated = append(rr.rep.Truncated, rep.Truncated...)
	}
}

// effect redacts the text fields of base.i.<prefix>….
func (rr *recordRedactor) effect(base string, i int, prefix string, e *Effect) {
	rr.str(fieldPath{base: base, index: i, name: prefix + "rule_id"}, &e.RuleID)
	rr.str(fieldPath{base: base, index: i, name: prefix + "reason"}, &e.Reason)
	rr.str(fieldPath{base: base, index: i, name: prefix + "code"}, &e.Code)
	rr.str(fieldPath{base: base, index: i, name: prefix + "message"}, &e.Message)
	rr.str(fieldPath{base: base, index: i, name: prefix + "target"}, &e.Target)
}

// any redacts the strings of a JSON-like value, returning a copy.
func (rr *recordRedactor) any(path string, v any) any {
	switch x := v.(type) {
	case string:
		rr.str(fieldPath{name: path, index: -1}, &x)
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = rr.any(path+"."+k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rr.any(path+"."+strconv.Itoa(i), e)
		}
		return out
	case nil, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v
	}
	// Anything else (a struct, a typed map or slice) goes through its JSON form, so no string in
	// it escapes redaction.
	b, err := json.Marshal(v)
	var generic any
	if err == nil {
		err = json.Unmarshal(b, &generic)
	}
	if err != nil {
		rr.rep.Masked = append(rr.rep.Masked, redact.Finding{Path: path, Kind: redact.KindError})
		return redact.Placeholder(redact.KindError)
	}
	return rr.any(path, generic)
}
