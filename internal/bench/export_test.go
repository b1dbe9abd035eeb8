package bench

import (
	"context"
	"time"
)

// RunLoadOnClock is RunLoad on a clock the test drives: now reads it, and until waits for a
// due time (returning false once ctx has ended).
func RunLoadOnClock(ctx context.Context, load Load, op Op, now func() time.Time, until func(context.Context, time.Time) bool) *Stats {
	return runLoad(ctx, load, op, clock{now: now, until: until})
}
