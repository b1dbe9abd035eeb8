package audit_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/audit"
)

func Example() {
	dir, _ := os.MkdirTemp("", "audit-example")
	defer os.RemoveAll(dir)

	l, err := audit.Open(audit.Config{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ev := &ahpv1.Event{Id: "e1", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Tool: &ahpv1.Tool{Name: "Bash", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL}}
	d := &ahpv1.Decision{DecisionId: "d1", Verdict: ahpv1.Verdict_VERDICT_ALLOW}
	if err := l.Append(audit.RecordFor(ev, d, time.Now())); err != nil {
		fmt.Println("not recorded:", err) // a required audit would deny here
	}
	_ = l.Append(audit.RecordFor(ev, nil, time.Now()))
	_ = l.Close(context.Background())

	files, _ := audit.Files(filepath.Join(dir, audit.DefaultFileName))
	rep, _ := audit.Verify(files...)
	fmt.Println(rep.OK(), rep.Records, rep.LastSeq)
	// Output: true 2 2
}
