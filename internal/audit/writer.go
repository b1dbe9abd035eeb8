package audit

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

const (
	// maxBatch bounds the records taken from the queue at once.
	maxBatch = 1024
	// maxWrite is the size at which a batch is written out before it is complete.
	maxWrite = 1 << 20
)

// writer is the state the writer goroutine owns.
type writer struct {
	f       file  // nil when closed after a failure; reopened before the next write
	size    int64 // bytes in the active file, all of them complete lines
	seq     uint64
	prev    string // hash of the last record written (or the genesis value)
	nextRot int    // number of the next rotated file
	dirty   bool   // written since the last sync
	// sizeKnown is set once the file was opened: from then on size, not the file, says where
	// the last complete line ends.
	sizeKnown bool
	buf       []byte // lines waiting to be written
	line      []byte // the line being built
	h         hash.Hash
	// ident identifies the open file (nil when unknown), so that a file deleted or replaced
	// under the log is noticed: the path no longer names it.
	ident os.FileInfo
	// notice is the body of a notice record to write before the next batch (nil: none).
	notice []byte
	noSync bool // the file cannot be synced (warned once)
}

func (w *writer) init(head Head, nextRot int) {
	w.seq, w.prev, w.nextRot, w.h = head.Seq, head.Hash, nextRot, sha256.New()
}

// run is the writer goroutine: it takes batches from the queue until Close closes it, then
// syncs and closes the file.
func (l *Log) run() {
	defer close(l.done)
	var tick <-chan time.Time
	if l.cfg.Fsync == FsyncInterval {
		ticks, stop := l.cfg.tickEvery(l.cfg.FsyncInterval)
		defer stop()
		tick = ticks
	}
	batch := make([]request, 0, maxBatch)
	for open := true; open; {
		select {
		case req, ok := <-l.queue:
			if !ok {
				open = false
				break
			}
			batch = append(batch[:0], req)
			batch, open = l.drain(batch)
			batch = l.claim(batch)
			l.process(batch)
			clear(batch) // do not keep written records alive until the next batch
		case <-tick:
			if l.w.dirty {
				l.syncOrFail()
			}
		}
	}
	l.endErr = l.finish()
}

// drain adds what the queue holds without waiting; open is false once the queue is closed.
func (l *Log) drain(batch []request) (_ []request, open bool) {
	for len(batch) < maxBatch {
		select {
		case req, ok := <-l.queue:
			if !ok {
				return batch, false
			}
			batch = append(batch, req)
		default:
			return batch, true
		}
	}
	return batch, true
}

// claim takes the waited records of batch from their waiters, leaving out those withdrawn.
func (l *Log) claim(batch []request) []request {
	kept := batch[:0]
	for _, req := range batch {
		if req.claim != nil && !req.claim.CompareAndSwap(claimQueued, claimTaken) {
			continue // withdrawn: its waiter was told it is not recorded
		}
		kept = append(kept, req)
	}
	clear(batch[len(kept):])
	return kept
}

// process writes a batch in order; a flush request syncs what came before it and answers.
func (l *Log) process(batch []request) {
	start := 0
	for i, req := range batch {
		if req.flush {
			l.commit(batch[start:i])
			req.done <- l.syncRetrying()
			start = i + 1
		}
	}
	l.commit(batch[start:])
}

// commit writes records, retrying after failures until they are written or Close gives up, then
// syncs under FsyncAlways and answers the waiters.
func (l *Log) commit(reqs []request) {
	if len(reqs) == 0 {
		return
	}
	l.checkFile()
	if n := l.w.notice; n != nil {
		l.w.notice = nil
		reqs = append([]request{{body: n}}, reqs...)
	}
	written := 0
	for written < len(reqs) {
		n, err := l.write(reqs[written:])
		written += n
		if err == nil {
			break
		}
		if !l.fail(err) {
			l.drop(reqs[written:], err)
			answer(reqs[:written], nil)
			return
		}
	}
	var err error
	if l.cfg.Fsync == FsyncAlways {
		err = l.syncRetrying()
	}
	if err == nil && l.checkFile() {
		// Written into a file that is no longer the log: the records went with it.
		err = fmt.Errorf("%w: the active file was deleted or replaced while these records were written", ErrUnavailable)
	}
	if err == nil {
		l.recovered()
	}
	answer(reqs, err)
}

// checkFile notices that the active file was deleted or replaced (its path names another file or
// none): it reports it (log, Stats.FilesLost), closes the old file and arranges for the next write
// to open a new one, beginning with a notice record that names the last record written. It
// returns true when it found the file gone.
func (l *Log) checkFile() bool {
	w := &l.w
	if w.f == nil || w.ident == nil {
		return false
	}
	fi, err := os.Stat(l.path)
	var how string
	switch {
	case err == nil && os.SameFile(fi, w.ident):
		return false
	case err == nil:
		how = "replaced"
	case errors.Is(err, fs.ErrNotExist):
		how = "deleted"
	default:
		return false // cannot tell; a failing write will say more
	}
	l.filesLost.Add(1)
	l.log.Error("audit: the active log file was "+how+" while open; the records in it are lost; starting a new file", "seq", w.seq, "hash", w.prev)
	l.closeFile()
	w.ident, w.sizeKnown, w.dirty = nil, false, false
	w.notice = l.noticeBody("active_file_"+how, Head{Seq: w.seq, Hash: w.prev})
	return true
}

// NoticeExtension is the Extensions key of a notice record: what happened to the log
// ("notice": active_file_deleted, active_file_replaced, previous_log_missing,
// log_shorter_than_at_close) and the last record known before it ("previous_seq",
// "previous_hash").
const NoticeExtension = "dev.ahpgateway/audit"

// noticeBody encodes a notice record.
func (l *Log) noticeBody(what string, last Head) []byte {
	body, err := l.encode(Record{Kind: KindNotice, Extensions: map[string]any{NoticeExtension: map[string]any{
		"notice": what, "previous_seq": last.Seq, "previous_hash": last.Hash,
	}}})
	if err != nil { // cannot happen: the record is made of plain values
		l.log.Error("audit: encoding a notice record failed", "error", err)
		return nil
	}
	return body
}

func answer(reqs []request, err error) {
	for _, r := range reqs {
		if r.done != nil {
			r.done <- err
		}
	}
}

// drop gives up on records after Close stopped waiting: they are counted and reported, never
// lost silently.
func (l *Log) drop(reqs []request, cause error) {
	l.dropped.Add(uint64(len(reqs)))
	l.log.Error("audit records dropped: the log could not be written before shutdown", "records", len(reqs), "error", cause)
	answer(reqs, fmt.Errorf("%w: %w", ErrUnavailable, cause))
}

// write appends as many of reqs as it can, rotating when the active file is full. It returns how
// many records are now in the file; on error the file holds only complete lines.
func (l *Log) write(reqs []request) (int, error) {
	w := &l.w
	if err := l.ensureOpen(); err != nil {
		return 0, err
	}
	written, pending := 0, 0
	seq, prev := w.seq, w.prev
	flush := func() error {
		if len(w.buf) == 0 {
			return nil
		}
		if _, err := w.f.Write(w.buf); err != nil {
			l.undoPartialWrite()
			return err
		}
		w.size += int64(len(w.buf))
		w.seq, w.prev, w.dirty = seq, prev, true
		w.buf = w.buf[:0]
		written += pending
		l.written.Add(uint64(pending))
		l.head.Store(&Head{Seq: seq, Hash: prev})
		pending = 0
		return nil
	}
	for _, req := range reqs {
		var h string
		w.line, h = appendLine(w.line[:0], w.h, seq+1, req.body, prev)
		if l.cfg.MaxBytes > 0 && w.size+int64(len(w.buf)+len(w.line)) > l.cfg.MaxBytes && w.size+int64(len(w.buf)) > 0 {
			if err := flush(); err != nil {
				return written, err
			}
			if err := l.rotate(); err != nil {
				return written, err
			}
		}
		w.buf = append(w.buf, w.line...)
		seq, prev = seq+1, h
		pending++
		if len(w.buf) >= maxWrite {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	if err := flush(); err != nil {
		return written, err
	}
	if cap(w.buf) > 4*maxWrite { // one huge record must not pin its buffer forever
		w.buf = nil
	}
	return written, nil
}

// undoPartialWrite cuts a failed write back to the last complete line, so the next attempt (or
// the next start) appends after a whole record. If even that fails the file is closed and the
// next attempt reopens it, repairing the tail as Open does.
func (l *Log) undoPartialWrite() {
	w := &l.w
	w.buf = w.buf[:0]
	if err := w.f.Truncate(w.size); err != nil {
		l.closeFile()
	}
}

// ensureOpen opens the active file if it is not open (at start, after a rotation, after a
// failure closed it). Once the writer knows the file, its own count of complete bytes is the
// truth: bytes beyond it come from a write that reported failure and are cut off (they will be
// written again), and a file shorter than that was cut by someone else, which is refused.
func (l *Log) ensureOpen() error {
	w := &l.w
	if w.f != nil {
		return nil
	}
	var size int64
	switch fi, err := os.Stat(l.path); {
	case err == nil:
		size = fi.Size()
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if w.sizeKnown {
		switch {
		case size > w.size:
			if err := os.Truncate(l.path, w.size); err != nil {
				return err
			}
			l.log.Warn("audit: cut off the remains of a failed write", "offset", w.size, "bytes", size-w.size)
		case size < w.size:
			return fmt.Errorf("%w: %s shrank from %d to %d bytes while the log was open", ErrCorrupt, l.path, w.size, size)
		}
		size = w.size
	}
	f, err := l.cfg.openFile(l.path)
	if err != nil {
		return err
	}
	w.f, w.size, w.sizeKnown, w.ident = f, size, true, nil
	if st, ok := f.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			w.ident = fi
		}
	}
	return nil
}

func (l *Log) closeFile() {
	if l.w.f != nil {
		l.w.f.Close()
		l.w.f = nil
	}
}

// rotate closes the full active file under the next rotated name and starts a new one. The
// chain goes on: the new file's first record chains from the old file's last.
func (l *Log) rotate() error {
	w := &l.w
	if err := w.f.Sync(); err != nil && !l.unsyncable(err) {
		return err
	}
	l.closeFile()
	w.dirty = false
	for {
		name := rotatedName(l.path, w.nextRot)
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			break
		}
		w.nextRot++ // never overwrite a file that is already there
	}
	name := rotatedName(l.path, w.nextRot)
	if err := os.Rename(l.path, name); err != nil {
		return err
	}
	w.nextRot++
	w.size = 0
	l.rotations.Add(1)
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		l.log.Warn("audit: syncing the directory after rotation failed", "error", err)
	}
	l.log.Info("audit log rotated", "file", name, "seq", w.seq)
	l.saveState()
	return l.ensureOpen()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// syncOrFail syncs now; a failure makes the writer failing until a later sync succeeds.
func (l *Log) syncOrFail() {
	if err := l.sync(); err != nil {
		l.setFailure(err)
		return
	}
	l.recovered()
}

func (l *Log) sync() error {
	w := &l.w
	if !w.dirty {
		return nil
	}
	if err := l.ensureOpen(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil && !l.unsyncable(err) {
		return err
	}
	w.dirty = false
	return nil
}

// unsyncable reports whether err says the file cannot be synced at all (a pipe, a terminal,
// /dev/stdout: EINVAL), which is not a failure to write; it warns once.
func (l *Log) unsyncable(err error) bool {
	if !errors.Is(err, syscall.EINVAL) {
		return false
	}
	if !l.w.noSync {
		l.w.noSync = true
		l.log.Warn("audit: the log file cannot be synced (a pipe or device); records are written but not synced", "error", err)
	}
	return true
}

// syncRetrying syncs, retrying after failures until it works or Close gives up.
func (l *Log) syncRetrying() error {
	for {
		err := l.sync()
		if err == nil {
			return nil
		}
		if !l.fail(err) {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
}

// fail records a failed attempt and waits before the next one. It returns false when Close has
// stopped waiting, and the caller must give up.
func (l *Log) fail(err error) bool {
	l.setFailure(err)
	select {
	case <-l.abort:
		return false
	default:
	}
	t := time.NewTimer(l.cfg.RetryInterval)
	defer t.Stop()
	select {
	case <-l.abort:
		return false
	case <-t.C:
		return true
	}
}

func (l *Log) setFailure(err error) {
	l.writeErrors.Add(1)
	wrapped := fmt.Errorf("%w: %w", ErrUnavailable, err)
	if l.failure.Swap(&wrapped) == nil {
		l.log.Error("audit log cannot be written; retrying", "error", err, "retry_every", l.cfg.RetryInterval)
	}
	l.stateChanged()
}

func (l *Log) recovered() {
	if l.failure.Swap(nil) != nil {
		l.log.Warn("audit log writable again", "seq", l.w.seq)
		l.stateChanged()
	}
}

func (l *Log) stateChanged() {
	if l.cfg.changed != nil {
		l.cfg.changed()
	}
}

// finish runs once the queue is closed and drained: a last sync, whatever the mode, then close.
func (l *Log) finish() error {
	defer l.closeFile()
	l.w.dirty = true // sync even under FsyncNever: Close promises durability
	err := l.syncRetrying()
	if err == nil {
		l.saveState()
		l.log.Info("audit log closed", "seq", l.w.seq, "hash", l.w.prev)
	}
	if n := l.dropped.Load(); n > 0 {
		err = errors.Join(err, fmt.Errorf("%w: %d accepted records could not be written", ErrUnavailable, n))
	}
	return err
}
