package inflight_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ahp-gateway/ahp/internal/inflight"
)

func TestCloseStopsBeginAndWaitWaitsForCallsInProgress(t *testing.T) {
	t.Parallel()
	var g inflight.Group
	if !g.Begin() {
		t.Fatal("an open group refused a call")
	}
	g.Close()
	if g.Begin() {
		t.Fatal("a closed group admitted a call")
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a call in progress and a cancelled context = %v, want context.Canceled", err)
	}
	g.End()
	if err := g.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after the last End = %v", err)
	}
}
