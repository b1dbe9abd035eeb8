package audit

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
)

// The state file (Path + ".state") keeps the head of the chain as of the last rotation and the
// last clean close. It lets Open tell a log that is new from one whose files were deleted or
// moved: without it, a missing log would silently start a new genesis. After a crash it may be
// behind the log, never ahead, so it cannot raise a false alarm.

// stateSuffix names the state file next to the active file.
const stateSuffix = ".state"

func (l *Log) statePath() string { return l.path + stateSuffix }

// loadState returns the head the state file records; ok is false when there is none.
func (l *Log) loadState() (Head, bool) {
	b, err := os.ReadFile(l.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return Head{}, false
	}
	var h Head
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	if err != nil {
		l.log.Warn("audit: the state file cannot be read; a missing log cannot be detected this time", "file", l.statePath(), "error", err)
		return Head{}, false
	}
	return h, true
}

// saveState records the writer's head, replacing the state file atomically. A failure is logged:
// the log works without it.
func (l *Log) saveState() {
	b, _ := json.Marshal(Head{Seq: l.w.seq, Hash: l.w.prev})
	tmp := l.statePath() + ".tmp"
	err := os.WriteFile(tmp, append(b, '\n'), 0o600)
	if err == nil {
		err = os.Rename(tmp, l.statePath())
	}
	if err != nil {
		l.log.Warn("audit: writing the state file failed", "file", l.statePath(), "error", err)
	}
}

// checkPrevious compares the resumed head with the state file: a log that is missing, or shorter
// than when it was last closed, is reported (log, Stats.FilesLost) and the new chain begins with
// a notice record naming the last record known.
func (l *Log) checkPrevious(head Head) {
	prev, ok := l.loadState()
	if !ok || prev.Seq <= head.Seq {
		return
	}
	what := "log_shorter_than_at_close"
	msg := "audit: the log ends before the last record it held when it was closed; records were removed"
	if head.Seq == 0 {
		what = "previous_log_missing"
		msg = "audit: the previous log is missing (its files were deleted or moved); starting a new chain"
	}
	l.filesLost.Add(1)
	l.log.Error(msg, "previous_seq", prev.Seq, "previous_hash", prev.Hash, "seq", head.Seq)
	l.w.notice = l.noticeBody(what, prev)
}
