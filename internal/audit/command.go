package audit

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Exit codes of VerifyCommand.
const (
	// ExitOK: every line verified.
	ExitOK = 0
	// ExitTampered: a line failed verification.
	ExitTampered = 1
	// ExitUsage: bad arguments, or a file could not be read.
	ExitUsage = 2
)

// VerifyCommand implements `ahp-server audit verify [flags] FILE|DIR…`. Files are verified in the
// order given (rotated files first); a directory stands for the log inside it (DIR/audit.jsonl
// and its rotated files, oldest first). It prints a report on stdout and returns ExitOK,
// ExitTampered or ExitUsage.
func VerifyCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ahp-server audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ahp-server audit verify [--json] [--anchor SEQ:HASH]... [--after SEQ:HASH | --mid-chain] FILE|DIR...")
		fmt.Fprintln(stderr, "\nVerifies the hash chain of an audit log. Give the files oldest first (rotated files,")
		fmt.Fprintln(stderr, "then the active one), or the directory that holds the log.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the report as JSON")
	after := fs.String("after", "", "trusted `SEQ:HASH` the first record must follow (from an earlier verification)")
	midChain := fs.Bool("mid-chain", false, "accept a log whose older files were pruned (its start is not verified)")
	var anchors []Head
	fs.Func("anchor", "trusted `SEQ:HASH` the log must contain (repeatable): catches rewrites and cut-off ends", func(s string) error {
		h, err := parseHead(s)
		anchors = append(anchors, h)
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	opts := VerifyOptions{MidChain: *midChain, Anchors: anchors}
	if *after != "" {
		h, err := parseHead(*after)
		if err != nil {
			fmt.Fprintln(stderr, "ahp-server audit verify: --after:", err)
			return ExitUsage
		}
		opts.After = &h
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return ExitUsage
	}
	var files []string
	for _, arg := range fs.Args() {
		fi, err := os.Stat(arg)
		if err != nil {
			fmt.Fprintln(stderr, "ahp-server audit verify:", err)
			return ExitUsage
		}
		if !fi.IsDir() {
			files = append(files, arg)
			continue
		}
		logFiles, err := Files(filepath.Join(arg, DefaultFileName))
		if err != nil {
			fmt.Fprintln(stderr, "ahp-server audit verify:", err)
			return ExitUsage
		}
		if len(logFiles) == 0 {
			fmt.Fprintf(stderr, "ahp-server audit verify: no audit log (%s) in %s\n", DefaultFileName, arg)
			return ExitUsage
		}
		files = append(files, logFiles...)
	}
	rep, err := VerifyWith(opts, files...)
	if err != nil {
		fmt.Fprintln(stderr, "ahp-server audit verify:", err)
		return ExitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(struct {
			OK bool `json:"ok"`
			VerifyReport
		}{rep.OK(), rep})
	} else {
		printReport(stdout, rep)
	}
	if !rep.OK() {
		return ExitTampered
	}
	return ExitOK
}

func printReport(w io.Writer, rep VerifyReport) {
	if f := rep.Failure; f != nil {
		fmt.Fprintf(w, "FAILED %s:%d: %s\n  %s\n", f.File, f.Line, f.Check, f.Detail)
		if rep.Records > 0 {
			fmt.Fprintf(w, "  the %d record(s) before it verified (seq %d..%d)\n", rep.Records, rep.FirstSeq, rep.LastSeq)
		}
		return
	}
	if rep.Records == 0 {
		fmt.Fprintf(w, "OK: no records in %d file(s)\n", len(rep.Files))
		return
	}
	fmt.Fprintf(w, "OK: %d record(s) in %d file(s), seq %d..%d\n", rep.Records, len(rep.Files), rep.FirstSeq, rep.LastSeq)
	if rep.FirstSeq == 1 {
		fmt.Fprintf(w, "  genesis %s\n", rep.Genesis)
	} else {
		fmt.Fprintf(w, "  starts mid-chain after prev %s\n", rep.Genesis)
	}
	fmt.Fprintf(w, "  head    %d:%s\n", rep.Head.Seq, rep.Head.Hash)
}

// parseHead parses SEQ:HASH.
func parseHead(s string) (Head, error) {
	seqText, hash, ok := strings.Cut(s, ":")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if !ok || err != nil || !isHex(hash) {
		return Head{}, fmt.Errorf("want SEQ:HASH (a seq and 64 lower-case hex digits), got %q", s)
	}
	return Head{Seq: seq, Hash: hash}, nil
}
