package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/audit"
)

// rehash recomputes a line's hash after an edit, as an attacker who knows the format would.
func rehash(line string) string {
	const suffixLen = len(`,"hash":"`) + 64 + len(`"}`)
	canonical := line[:len(line)-suffixLen] + "}"
	var rec struct {
		Prev string `json:"prev"`
	}
	_ = json.Unmarshal([]byte(canonical), &rec)
	sum := sha256.Sum256([]byte(rec.Prev + canonical))
	return line[:len(line)-suffixLen] + `,"hash":"` + hex.EncodeToString(sum[:]) + `"}`
}

func TestVerifyFindsEachTamperingAtTheRightLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// tamper edits the lines of each file; it may also change the list of files verified.
		tamper func(files [][]string) [][]string
		file   int // index of the file the failure must name
		line   int
		check  audit.Check
	}{
		{"edit a field", func(f [][]string) [][]string {
			f[0][2] = strings.Replace(f[0][2], `"tool_name":"Bash"`, `"tool_name":"Bosh"`, 1)
			return f
		}, 0, 3, audit.CheckHash},
		{"edit the verdict and recompute that line's hash", func(f [][]string) [][]string {
			f[0][2] = rehash(strings.Replace(f[0][2], `"verdict":"deny"`, `"verdict":"allow"`, 1))
			return f
		}, 0, 4, audit.CheckPrev},
		{"delete a line", func(f [][]string) [][]string {
			f[0] = slices.Delete(f[0], 3, 4)
			return f
		}, 0, 4, audit.CheckSeqGap},
		{"insert a copy of an earlier line", func(f [][]string) [][]string {
			f[1] = slices.Insert(f[1], 2, f[0][1])
			return f
		}, 1, 3, audit.CheckSeqOrder},
		{"insert a forged line", func(f [][]string) [][]string {
			forged := strings.Replace(f[1][1], `"kind":"observation"`, `"kind":"decision"`, 1)
			forged = strings.Replace(forged, `"kind":"decision"`, `"kind":"decision","verdict":"allow"`, 1)
			f[1] = slices.Insert(f[1], 1, forged)
			return f
		}, 1, 2, audit.CheckHash},
		{"insert a blank line", func(f [][]string) [][]string {
			f[2] = slices.Insert(f[2], 1, "")
			return f
		}, 2, 2, audit.CheckMalformed},
		{"swap two lines", func(f [][]string) [][]string {
			f[1][2], f[1][3] = f[1][3], f[1][2]
			return f
		}, 1, 3, audit.CheckSeqOrder},
		{"truncate a rotated file", func(f [][]string) [][]string {
			f[0] = f[0][:len(f[0])-2]
			return f
		}, 1, 1, audit.CheckSeqGap},
		{"cut the start of the first file", func(f [][]string) [][]string {
			f[0] = f[0][1:]
			return f
		}, 0, 1, audit.CheckSeqGap},
		{"edit across a rotation boundary", func(f [][]string) [][]string {
			last := len(f[0]) - 1
			f[0][last] = rehash(strings.Replace(f[0][last], `"event_id":"e`, `"event_id":"x`, 1))
			return f
		}, 1, 1, audit.CheckPrev},
		{"remove a whole rotated file", func(f [][]string) [][]string {
			return slices.Delete(f, 1, 2)
		}, 1, 1, audit.CheckSeqGap},
		{"files out of order", func(f [][]string) [][]string {
			f[0], f[1] = f[1], f[0]
			return f
		}, 0, 1, audit.CheckSeqGap},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			orig := writeLog(t, 40, 3<<10)
			if len(orig) < 3 {
				t.Fatalf("need 3 files, got %v", orig)
			}
			var content [][]string
			for _, f := range orig {
				content = append(content, readLines(t, f))
			}
			content = tc.tamper(content)
			dir := t.TempDir()
			var files []string
			for i, lines := range content {
				name := filepath.Join(dir, "f"+string(rune('0'+i)))
				writeLines(t, name, lines)
				files = append(files, name)
			}
			rep, err := audit.Verify(files...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatal("tampering not detected")
			}
			if f := rep.Failure; f.File != files[tc.file] || f.Line != tc.line || f.Check != tc.check {
				t.Errorf("failure %s:%d %s (%s), want %s:%d %s", filepath.Base(f.File), f.Line, f.Check, f.Detail, filepath.Base(files[tc.file]), tc.line, tc.check)
			}
			before := tc.line - 1 // every line before the failing one verified
			for _, lines := range content[:tc.file] {
				before += len(lines)
			}
			if rep.Records != before {
				t.Errorf("%d records verified before the failure, want %d", rep.Records, before)
			}
		})
	}
}

func TestVerifyFindsACutLastLine(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 5, 0)
	b, _ := os.ReadFile(files[0])
	_ = os.WriteFile(files[0], b[:len(b)-40], 0o600)
	rep, err := audit.Verify(files...)
	if err != nil || rep.OK() || rep.Failure.Line != 5 || rep.Failure.Check != audit.CheckIncomplete || rep.Records != 4 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestVerifyAfterAHead(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 60, 3<<10)
	first := mustVerify(t, files[0])
	// The first file was pruned: the rest verifies from its head, and not without it.
	rest := files[1:]
	rep, err := audit.VerifyWith(audit.VerifyOptions{After: &first.Head}, rest...)
	if err != nil || !rep.OK() || rep.FirstSeq != first.LastSeq+1 || rep.LastSeq != 60 {
		t.Fatalf("VerifyWith(After) = %+v, %v", rep, err)
	}
	if rep, _ := audit.Verify(rest...); rep.OK() || rep.Failure.Check != audit.CheckSeqGap {
		t.Errorf("Verify of a pruned log without a head = %+v", rep.Failure)
	}
	if rep, _ := audit.VerifyWith(audit.VerifyOptions{MidChain: true}, rest...); !rep.OK() {
		t.Errorf("MidChain = %+v", rep.Failure)
	}
	wrong := first.Head
	wrong.Hash = strings.Repeat("0", 64)
	if rep, _ := audit.VerifyWith(audit.VerifyOptions{After: &wrong}, rest...); rep.OK() || rep.Failure.Check != audit.CheckPrev {
		t.Errorf("a wrong head was accepted: %+v", rep.Failure)
	}
}

// TestAnchorsCatchRewritesAndCutEnds covers what the chain alone cannot see: an attacker who
// recomputes every hash from some line on, and records cut off the end of the log.
func TestAnchorsCatchRewritesAndCutEnds(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 20, 0)
	full := mustVerify(t, files...)
	lines := readLines(t, files[0])
	mid := audit.Head{Seq: 10}
	var rec struct {
		Hash string `json:"hash"`
	}
	_ = json.Unmarshal([]byte(lines[9]), &rec)
	mid.Hash = rec.Hash
	genesis := audit.Head{Seq: 0, Hash: full.Genesis}
	anchors := []audit.Head{genesis, mid, full.Head}
	if rep, _ := audit.VerifyWith(audit.VerifyOptions{Anchors: anchors}, files...); !rep.OK() {
		t.Fatalf("anchored clean log: %+v", rep.Failure)
	}

	// Rewrite from line 5 on, recomputing prev and hash of every later line.
	rewritten := slices.Clone(lines)
	prev := ""
	for i := 4; i < len(rewritten); i++ {
		l := rewritten[i]
		if i == 4 {
			l = strings.Replace(l, `"verdict":"deny"`, `"verdict":"allow"`, 1)
		} else {
			var r struct {
				Prev string `json:"prev"`
			}
			_ = json.Unmarshal([]byte(l), &r)
			l = strings.Replace(l, `"prev":"`+r.Prev+`"`, `"prev":"`+prev+`"`, 1)
		}
		l = rehash(l)
		_ = json.Unmarshal([]byte(l), &rec)
		prev = rec.Hash
		rewritten[i] = l
	}
	name := filepath.Join(t.TempDir(), "rewritten")
	writeLines(t, name, rewritten)
	if rep, _ := audit.Verify(name); !rep.OK() {
		t.Fatalf("the rewrite should fool the chain alone: %+v", rep.Failure)
	}
	rep, _ := audit.VerifyWith(audit.VerifyOptions{Anchors: anchors}, name)
	if rep.OK() || rep.Failure.Check != audit.CheckAnchor || rep.Failure.Line != 10 {
		t.Errorf("rewrite with anchors: %+v", rep.Failure)
	}

	// Cut the last five records.
	cut := filepath.Join(t.TempDir(), "cut")
	writeLines(t, cut, lines[:15])
	rep, _ = audit.VerifyWith(audit.VerifyOptions{Anchors: anchors}, cut)
	if rep.OK() || rep.Failure.Check != audit.CheckAnchor || rep.Failure.Line != 16 {
		t.Errorf("cut end with anchors: %+v", rep.Failure)
	}

	// Another log entirely.
	other := writeLog(t, 20, 0)
	rep, _ = audit.VerifyWith(audit.VerifyOptions{Anchors: []audit.Head{genesis}}, other...)
	if rep.OK() || rep.Failure.Check != audit.CheckAnchor || rep.Failure.Line != 1 {
		t.Errorf("other log with a genesis anchor: %+v", rep.Failure)
	}

	var out, errOut bytes.Buffer
	code := audit.VerifyCommand([]string{"--anchor", itoa(full.Head.Seq) + ":" + full.Head.Hash, cut}, &out, &errOut)
	if code != audit.ExitTampered || !strings.Contains(out.String(), "anchor_mismatch") {
		t.Errorf("--anchor: %d %q %q", code, out.String(), errOut.String())
	}
	if code := audit.VerifyCommand([]string{"--anchor", "x", cut}, &out, &errOut); code != audit.ExitUsage {
		t.Errorf("bad --anchor: %d", code)
	}
}

func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	if _, err := audit.Verify(); err == nil {
		t.Error("Verify() without files succeeded")
	}
	if _, err := audit.Verify(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Verify of a missing file succeeded")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	_ = os.WriteFile(empty, nil, 0o600)
	if rep, err := audit.Verify(empty); err != nil || !rep.OK() || rep.Records != 0 {
		t.Errorf("empty file: %+v, %v", rep, err)
	}
}

func TestVerifyHandlesLongLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := open(t, audit.Config{Dir: dir})
	rec := record(0)
	rec.Extensions = map[string]any{"com.example/blob": strings.Repeat("a", 1<<20)}
	_ = l.Append(rec)
	_ = l.Append(record(1))
	closeLog(t, l)
	if rep := mustVerify(t, filepath.Join(dir, audit.DefaultFileName)); rep.Records != 2 {
		t.Errorf("records = %d", rep.Records)
	}
}

func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	files := writeLog(t, 30, 3<<10)
	dir := filepath.Dir(files[0])
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := audit.VerifyCommand(args, &out, &errOut)
		return code, out.String(), errOut.String()
	}

	if code, out, _ := run(files...); code != audit.ExitOK || !strings.HasPrefix(out, "OK: 30 record(s) in ") || !strings.Contains(out, "genesis ") {
		t.Errorf("files: %d %q", code, out)
	}
	if code, out, _ := run(dir); code != audit.ExitOK || !strings.Contains(out, "seq 1..30") {
		t.Errorf("directory: %d %q", code, out)
	}
	code, out, _ := run("--json", dir)
	var js struct {
		OK      bool `json:"ok"`
		Records int  `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &js); code != audit.ExitOK || err != nil || !js.OK || js.Records != 30 {
		t.Errorf("--json: %d %q %v", code, out, err)
	}
	if code, _, errOut := run(); code != audit.ExitUsage || !strings.Contains(errOut, "usage:") {
		t.Errorf("no args: %d %q", code, errOut)
	}
	if code, _, _ := run(filepath.Join(dir, "missing")); code != audit.ExitUsage {
		t.Errorf("missing file: %d", code)
	}
	if code, _, _ := run(t.TempDir()); code != audit.ExitUsage {
		t.Errorf("empty directory: %d", code)
	}
	if code, _, _ := run("--after", "nonsense", dir); code != audit.ExitUsage {
		t.Errorf("bad --after: %d", code)
	}
	if code, _, _ := run("--help"); code != audit.ExitOK {
		t.Errorf("--help: %d", code)
	}

	first, _ := audit.Verify(files[0])
	after := "--after=" + strings.Join([]string{itoa(first.Head.Seq), first.Head.Hash}, ":")
	if code, out, _ := run(append([]string{after}, files[1:]...)...); code != audit.ExitOK || !strings.Contains(out, "starts mid-chain") {
		t.Errorf("--after: %d %q", code, out)
	}
	if code, _, _ := run(append([]string{"--mid-chain"}, files[1:]...)...); code != audit.ExitOK {
		t.Errorf("--mid-chain: %d", code)
	}

	lines := readLines(t, files[1])
	lines[1] = strings.Replace(lines[1], `"ls`, `"rm`, 1)
	lines[1] = strings.Replace(lines[1], `"sess-1"`, `"sess-2"`, 1)
	writeLines(t, files[1], lines)
	code, out, _ = run(files...)
	if code != audit.ExitTampered || !strings.HasPrefix(out, "FAILED "+files[1]+":2: hash_mismatch") || !strings.Contains(out, "verified") {
		t.Errorf("tampered: %d %q", code, out)
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FuzzVerify: any file content gives a report or an error, never a panic, and a clean log stays
// clean.
func FuzzVerify(f *testing.F) {
	clean := writeLog(f, 4, 0)
	b, err := os.ReadFile(clean[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"seq":1,"prev":"` + strings.Repeat("0", 64) + `","hash":"` + strings.Repeat("0", 64) + `"}` + "\n"))
	f.Add([]byte("\n\n\x00"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte) {
		name := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(name, content, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := audit.Verify(name)
		if err != nil {
			t.Fatalf("Verify of a readable file: %v", err)
		}
		if rep.OK() {
			if n := bytes.Count(content, []byte("\n")); rep.Records != n {
				t.Fatalf("OK with %d records for %d lines", rep.Records, n)
			}
		} else if rep.Failure.Line < 1 || rep.Failure.Check == "" {
			t.Fatalf("failure without a place: %+v", rep.Failure)
		}
		if bytes.Equal(content, b) && !rep.OK() {
			t.Fatalf("the clean log failed: %+v", rep.Failure)
		}
	})
}
