package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// notifications is a Notifier that hands every approval to the test.
type notifications chan approval.Approval

func (n notifications) Notify(a approval.Approval) { n <- a }

// An approval opened the moment the server starts — before anything else runs — is still
// recorded and notified: the change listener subscribes before startReloading returns. (It used
// to subscribe on its own goroutine, so under load the first approval after a start could be
// neither audited nor notified; the end-to-end approval test caught it about once in 20 runs.)
func TestAnApprovalOpenedAtStartIsNotified(t *testing.T) {
	t.Parallel()
	for i := range 20 {
		rec := make(notifications, 1)
		s, err := New(Config{Logger: testkit.Discard(), PolicyPollInterval: -1, Notifier: rec})
		if err != nil {
			t.Fatal(err)
		}
		stop := s.startReloading(context.Background())
		now := time.Now()
		id := fmt.Sprintf("approval-%d", i)
		if _, created, err := s.approvals.Store().Open(approval.Approval{
			ID: id, Key: id, Kind: "ask", Notifiers: []string{"ops"}, CreatedAt: now, HoldUntil: now.Add(time.Hour),
		}, now); err != nil || !created {
			t.Fatalf("Open = %v, created %v", err, created)
		}
		if got := testkit.Receive(t, rec, "the approval opened at start was not notified"); got.ID != id {
			t.Fatalf("notified %q, want %q", got.ID, id)
		}
		stop()
		s.stopServing()
		testkit.Receive(t, s.approvalsDone, "the approval listener did not end")
	}
}
