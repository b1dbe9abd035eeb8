package bench

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/ahp-gateway/ahp/internal/audit"
)

// AuditCheck is what the audit log of the in-process ahp-server held after the run.
type AuditCheck struct {
	// Path is the active file of the log.
	Path string `json:"path"`
	// Temporary is true when the log was in a temporary directory, removed after the run.
	Temporary bool `json:"temporary,omitempty"`
	// Fsync is the durability mode it ran with.
	Fsync string `json:"fsync"`
	// Records is the number of records this run added.
	Records uint64 `json:"records"`
	// Expected is the number of decisions and accepted observations the server answered in this
	// run, warm-up included; valid when Counted.
	Expected uint64 `json:"expected"`
	// Counted is false when Expected is unknown: a request failed or was cut off, and the server
	// may or may not have recorded it.
	Counted bool `json:"counted"`
	// ChainOK reports that every record verified (audit.Verify: hashes, sequence, chain).
	ChainOK bool `json:"chain_ok"`
	// Problem says what is wrong, if anything; a problem counts as an error of the run.
	Problem string `json:"problem,omitempty"`
}

// openAudit opens the in-process server's audit log: at path, or in dir when path is "". The log
// is required, so a record it cannot take fails the decision closed and shows as an error.
func openAudit(path, dir, fsync string) (*audit.Log, uint64, error) {
	mode := audit.FsyncInterval
	if fsync != "" {
		var err error
		if mode, err = audit.ParseFsyncMode(fsync); err != nil {
			return nil, 0, err
		}
	}
	if path == "" {
		path = filepath.Join(dir, "audit.jsonl")
	}
	l, err := audit.Open(audit.Config{Path: path, Fsync: mode, Required: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, 0, fmt.Errorf("audit log: %w", err)
	}
	return l, l.Head().Seq, nil
}

// checkAudit verifies the closed log at path and compares what this run added (after startSeq)
// with expected.
func checkAudit(path string, temporary bool, fsync string, startSeq, expected uint64, counted bool) *AuditCheck {
	if fsync == "" {
		fsync = audit.FsyncInterval.String()
	}
	c := &AuditCheck{Path: path, Temporary: temporary, Fsync: fsync, Expected: expected, Counted: counted}
	files, err := audit.Files(path)
	if err != nil {
		c.Problem = fmt.Sprintf("listing the audit files: %v", err)
		return c
	}
	rep, err := audit.Verify(files...)
	if err != nil {
		c.Problem = fmt.Sprintf("reading the audit log: %v", err)
		return c
	}
	c.ChainOK = rep.OK()
	if rep.Head.Seq >= startSeq {
		c.Records = rep.Head.Seq - startSeq
	}
	switch {
	case !c.ChainOK:
		c.Problem = fmt.Sprintf("the audit log does not verify: %+v", *rep.Failure)
	case counted && c.Records != expected:
		c.Problem = fmt.Sprintf("the audit log has %d records for %d decisions and observations", c.Records, expected)
	}
	return c
}
