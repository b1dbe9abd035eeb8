package audit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-gateway/ahp/internal/audit"
)

func TestChainLinesVerifyAndContinue(t *testing.T) {
	t.Parallel()
	c, err := audit.NewChain(audit.Head{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	var last audit.Head
	for _, id := range []string{"e1", "e2"} {
		line, head, err := c.Seal(audit.Record{Kind: audit.KindObservation, EventID: id})
		if err != nil {
			t.Fatal(err)
		}
		data, last = append(data, line...), head
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if head, err := audit.HeadOf(lines[1]); err != nil || head != last {
		t.Fatalf("HeadOf(last line) = %+v, %v; want %+v", head, err, last)
	}
	if _, err := audit.HeadOf(lines[1][:len(lines[1])/2]); err == nil {
		t.Fatal("HeadOf accepted half a line")
	}
	// A chain continued from the last line's head (a restarted replica) is one chain with it.
	c2, err := audit.NewChain(last, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, _, err := c2.Seal(audit.Record{Kind: audit.KindObservation, EventID: "e3"})
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, line...)
	path := filepath.Join(t.TempDir(), "chain.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(path)
	if err != nil || !rep.OK() || rep.Records != 3 {
		t.Fatalf("Verify = %+v, %v; want 3 records in one chain", rep, err)
	}
}
