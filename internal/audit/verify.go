package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Check names the check a line failed.
type Check string

const (
	// CheckMalformed: the line is not an audit record (not JSON, no hash, seq or prev member).
	CheckMalformed Check = "malformed"
	// CheckIncomplete: the last line of a file has no newline: a write was cut short (a crash)
	// or the file was truncated.
	CheckIncomplete Check = "incomplete_line"
	// CheckHash: the line's content does not hash to its hash: the line was edited.
	CheckHash Check = "hash_mismatch"
	// CheckPrev: the line does not chain from the line before it: a line before it was
	// replaced, or this one was inserted.
	CheckPrev Check = "prev_mismatch"
	// CheckSeqGap: seq jumps forward and the missing records appear nowhere later: records were
	// removed (or, at the start, the log does not start at seq 1).
	CheckSeqGap Check = "seq_gap"
	// CheckSeqOrder: seq is not the next one, and the expected record is elsewhere or this one
	// repeats an earlier seq: lines were reordered, duplicated or inserted.
	CheckSeqOrder Check = "seq_out_of_order"
	// CheckAnchor: a record differs from a trusted head (VerifyOptions.Anchors), or the log ends
	// before it: the log was rewritten, or its newest records were cut off.
	CheckAnchor Check = "anchor_mismatch"
)

// Failure is the first line that failed verification.
type Failure struct {
	// File and Line (from 1) locate it.
	File string `json:"file"`
	Line int    `json:"line"`
	// Check is which check failed; Detail explains it for people.
	Check  Check  `json:"check"`
	Detail string `json:"detail"`
}

// Error formats the failure as "file:line: check: detail".
func (f *Failure) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Check, f.Detail)
}

// VerifyReport is the outcome of a verification.
type VerifyReport struct {
	// Files are the files verified, in order.
	Files []string `json:"files"`
	// Records counts the records that verified (those before the failure, if any).
	Records int `json:"records"`
	// FirstSeq and LastSeq bound the verified records.
	FirstSeq uint64 `json:"first_seq,omitempty"`
	LastSeq  uint64 `json:"last_seq,omitempty"`
	// Genesis is the prev of the first record: the log's genesis value when FirstSeq is 1.
	Genesis string `json:"genesis,omitempty"`
	// Head is the last verified record. Keep it: a later verification with VerifyOptions.After
	// set to it proves nothing before it changed, and a later log shorter than it was cut.
	Head Head `json:"head"`
	// Failure is the first failing line; nil when everything verified.
	Failure *Failure `json:"failure,omitempty"`
}

// OK reports whether every line verified.
func (r VerifyReport) OK() bool { return r.Failure == nil }

// VerifyOptions adjust where the chain must start.
type VerifyOptions struct {
	// After, when set, is a trusted point of the chain (from an earlier verification or a
	// published Log.Head): the first record must be the one right after it. Use it to verify
	// a log whose older files were pruned, without giving up on its start.
	After *Head
	// MidChain accepts a first record that is not seq 1, for logs whose older files were pruned
	// and no trusted head is at hand. The start is then unverified: records removed from the
	// front of the first file cannot be told from pruning.
	MidChain bool
	// Anchors are trusted heads (published Log.Head values, heads of earlier verifications): the
	// record with each anchor's seq must have its hash, and the log must reach it. This is what
	// catches a log rewritten from some point on with recomputed hashes, or cut at the end, which
	// the chain alone cannot show.
	Anchors []Head
}

// Verify checks the log files given, in order (rotated files first; Files lists them): each line
// is a record whose content hashes to its hash, seq counts up by one from 1, and each record's
// prev is the hash of the record before it, across file boundaries. It reports the first line
// that fails. The error is for files that cannot be read; a failed check is in the report.
func Verify(files ...string) (VerifyReport, error) {
	return VerifyWith(VerifyOptions{}, files...)
}

// VerifyWith is Verify with options.
func VerifyWith(opts VerifyOptions, files ...string) (VerifyReport, error) {
	rep := VerifyReport{Files: files}
	if len(files) == 0 {
		return rep, errors.New("audit: no files to verify")
	}
	v := verifier{opts: opts, rep: &rep, files: files, anchors: make(map[uint64]string, len(opts.Anchors))}
	for _, a := range opts.Anchors {
		v.anchors[a.Seq] = a.Hash
	}
	for i, name := range files {
		stop, err := v.file(i, name)
		if err != nil || stop {
			return rep, err
		}
	}
	for _, a := range opts.Anchors {
		if a.Seq > rep.LastSeq {
			rep.Failure = &Failure{File: files[len(files)-1], Line: v.lines + 1, Check: CheckAnchor,
				Detail: fmt.Sprintf("the log ends at seq %d, before the anchored seq %d: its newest records were cut off", rep.LastSeq, a.Seq)}
			break
		}
	}
	return rep, nil
}

type verifier struct {
	opts    VerifyOptions
	rep     *VerifyReport
	files   []string
	started bool
	seq     uint64
	hash    string
	anchors map[uint64]string
	lines   int // lines read in the current file
}

// file verifies one file; stop is true once a line failed.
func (v *verifier) file(index int, name string) (stop bool, err error) {
	f, err := os.Open(name)
	if err != nil {
		return false, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	for n := 1; ; n++ {
		line, complete, err := readLine(r)
		if err == io.EOF {
			v.lines = n - 1
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("audit: %s: %w", name, err)
		}
		fail := func(c Check, detail string) (bool, error) {
			v.rep.Failure = &Failure{File: name, Line: n, Check: c, Detail: detail}
			return true, nil
		}
		if !complete {
			return fail(CheckIncomplete, "the line has no newline: a write was cut short, or the file was truncated")
		}
		info, p := parseLine(line)
		if p != nil {
			return fail(p.check, p.detail)
		}
		if c, detail := v.chain(info, index, name, n); c != "" {
			return fail(c, detail)
		}
		if want, ok := v.anchors[0]; ok && info.Seq == 1 && want != info.Prev {
			return fail(CheckAnchor, "the genesis value is not the anchored one: this is not the log that was anchored")
		}
		if want, ok := v.anchors[info.Seq]; ok && info.Seq > 0 && want != info.Hash {
			return fail(CheckAnchor, fmt.Sprintf("seq %d has hash %s…, not the anchored %s…: the log was rewritten up to here", info.Seq, info.Hash[:12], want[:min(12, len(want))]))
		}
		v.started, v.seq, v.hash = true, info.Seq, info.Hash
		v.rep.Records++
		v.rep.LastSeq = info.Seq
		v.rep.Head = Head{Seq: info.Seq, Hash: info.Hash}
	}
}

// chain checks a self-consistent record against the one before it.
func (v *verifier) chain(info lineInfo, index int, name string, line int) (Check, string) {
	if !v.started {
		switch {
		case v.opts.After != nil:
			v.seq, v.hash = v.opts.After.Seq, v.opts.After.Hash
		case v.opts.MidChain:
			v.rep.FirstSeq, v.rep.Genesis = info.Seq, info.Prev
			return "", ""
		default:
			if info.Seq != 1 {
				return CheckSeqGap, fmt.Sprintf("the log starts at seq 1 but the first record given has seq %d: records were removed from the start, or earlier files were not given (pass the rotated files too, oldest first)", info.Seq)
			}
			v.rep.FirstSeq, v.rep.Genesis = info.Seq, info.Prev
			return "", ""
		}
		v.rep.FirstSeq, v.rep.Genesis = info.Seq, info.Prev
	}
	want := v.seq + 1
	switch {
	case info.Seq > want:
		if at, ok := v.find(want, index, line); ok {
			return CheckSeqOrder, fmt.Sprintf("expected seq %d, found %d; seq %d is at %s: lines were reordered", want, info.Seq, want, at)
		}
		return CheckSeqGap, fmt.Sprintf("expected seq %d, found %d: %d record(s) were removed", want, info.Seq, info.Seq-want)
	case info.Seq < want:
		return CheckSeqOrder, fmt.Sprintf("expected seq %d, found %d again: the line was moved, duplicated or inserted", want, info.Seq)
	case info.Prev != v.hash:
		return CheckPrev, fmt.Sprintf("prev %s… is not the hash %s… of the record before: a line before it was replaced, or this one was inserted", info.Prev[:12], v.hash[:12])
	}
	return "", ""
}

// find looks for the record with seq want after line of files[index], to tell reordering from
// removal. It reads only on the failure path.
func (v *verifier) find(want uint64, index, line int) (string, bool) {
	for i := index; i < len(v.files); i++ {
		f, err := os.Open(v.files[i])
		if err != nil {
			return "", false
		}
		r := bufio.NewReaderSize(f, 256<<10)
		for n := 1; ; n++ {
			b, _, err := readLine(r)
			if err != nil {
				break
			}
			if i == index && n <= line {
				continue
			}
			var head struct {
				Seq uint64 `json:"seq"`
			}
			if json.Unmarshal(b, &head) == nil && head.Seq == want {
				f.Close()
				return fmt.Sprintf("%s:%d", v.files[i], n), true
			}
		}
		f.Close()
	}
	return "", false
}

// readLine reads one line of any length, without its newline; complete is false for a last line
// that has none.
func readLine(r *bufio.Reader) (line []byte, complete bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			if line == nil {
				return chunk[:len(chunk)-1], true, nil
			}
			return append(line, chunk[:len(chunk)-1]...), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, chunk...)
		case err == io.EOF:
			line = append(line, chunk...)
			if len(line) == 0 {
				return nil, false, io.EOF
			}
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}
