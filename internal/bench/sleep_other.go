//go:build !linux

package bench

import "time"

// fineTimer has no finer source than Go's timers here; newFineTimer returns nil and waits use
// time.Timer alone.
type fineTimer struct{}

func newFineTimer() *fineTimer { return nil }

func (*fineTimer) sleep(time.Duration) bool { return false }

func (*fineTimer) close() {}
