package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// resume finds where the chain goes on: the last record of the active file, or of the newest
// rotated file when the active one is empty or missing (a crash right after a rotation). A new
// log starts from a random genesis value. It also returns the number of the next rotated file.
func (l *Log) resume() (Head, int, error) {
	rot, err := rotatedFiles(l.path)
	if err != nil {
		return Head{}, 0, fmt.Errorf("audit: %w", err)
	}
	next := 1
	if len(rot) > 0 {
		next = rot[len(rot)-1].n + 1
	}
	src := l.path
	line, err := repairTail(l.path, l.log)
	if err != nil {
		return Head{}, 0, fmt.Errorf("audit: %w", err)
	}
	if line == nil && len(rot) > 0 {
		// A rotated file was synced and closed whole, so it is never repaired: a cut line
		// there is damage, not a crash.
		src = rot[len(rot)-1].name
		var complete bool
		line, complete, err = readLastLine(src)
		if err != nil {
			return Head{}, 0, fmt.Errorf("audit: %w", err)
		}
		if line != nil && !complete {
			return Head{}, 0, fmt.Errorf("%w: the last line of %s is incomplete", ErrCorrupt, src)
		}
	}
	if line == nil {
		return Head{Hash: newGenesis()}, next, nil
	}
	info, p := parseLine(line)
	if p != nil {
		return Head{}, 0, fmt.Errorf("%w: the last record of %s: %s (run `ahp-server audit verify`)", ErrCorrupt, src, p.detail)
	}
	return Head{Seq: info.Seq, Hash: info.Hash}, next, nil
}

// repairTail makes the file at path end with a complete line and returns its last line (nil when
// the file is empty or missing). A last line without its newline is the trace of a write cut
// short by a crash: if it is nevertheless a whole record it gets its newline back, otherwise it
// is cut off, with a warning (it was never fully written, so it was never durable).
func repairTail(path string, log *slog.Logger) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	line, start, complete, err := lastLine(f, fi.Size())
	if err != nil || line == nil || complete {
		return line, err
	}
	if _, p := parseLine(line); p == nil {
		if _, err := f.WriteAt([]byte{'\n'}, fi.Size()); err != nil {
			return nil, err
		}
		log.Warn("audit: the last record had lost its newline; restored it", "file", path)
		return line, f.Sync()
	}
	if err := f.Truncate(start); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	log.Warn("audit: cut off a half-written last line (a write was interrupted)", "file", path, "offset", start, "bytes", fi.Size()-start)
	line, _, _, err = lastLine(f, start)
	return line, err
}

// readLastLine returns the last line of the file at path and whether it ends with a newline.
func readLastLine(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	line, _, complete, err := lastLine(f, fi.Size())
	return line, complete, err
}

// lastLine reads backwards from end to find the last line of f[0:end): its bytes without the
// newline, its offset, and whether it ended with a newline. It returns a nil line when end is 0.
func lastLine(f *os.File, end int64) (line []byte, start int64, complete bool, err error) {
	const chunk = 64 << 10
	var buf []byte
	for pos := end; pos > 0; {
		n := min(chunk, pos)
		pos -= n
		b := make([]byte, n, n+int64(len(buf)))
		if _, err := f.ReadAt(b, pos); err != nil {
			return nil, 0, false, err
		}
		buf = append(b, buf...)
		body := buf
		complete = body[len(body)-1] == '\n'
		if complete {
			body = body[:len(body)-1]
		}
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return body[i+1:], pos + int64(i) + 1, complete, nil
		}
		if pos == 0 {
			return body, 0, complete, nil
		}
	}
	return nil, 0, false, nil
}
