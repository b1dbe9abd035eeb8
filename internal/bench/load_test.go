package bench_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
)

var epoch = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestScheduleOpenLoopDueTimes(t *testing.T) {
	t.Parallel()
	s := bench.NewSchedule(epoch, 1000, 0, 0)
	if !s.OpenLoop() {
		t.Fatal("a positive rate is open loop")
	}
	for want := range uint64(5) {
		seq, due, ok := s.Next()
		if !ok {
			t.Fatalf("Next: ok is false")
		}
		if seq != want {
			t.Fatalf("Next: seq = %v, want %v", seq, want)
		}
		if wantDue := epoch.Add(time.Duration(want) * time.Millisecond); !due.Equal(wantDue) {
			t.Errorf("request %d due %v, want %v", seq, due.Sub(epoch), wantDue.Sub(epoch))
		}
	}
}

func TestScheduleDueTimesDoNotDrift(t *testing.T) {
	t.Parallel()
	// 3 per second is 333.33… ms apart: summing rounded intervals would drift; Due does not.
	s := bench.NewSchedule(epoch, 3, 0, 0)
	if got, want := s.Due(3_000_000), epoch.Add(1_000_000*time.Second); !got.Equal(want) {
		t.Errorf("Due(3e6) = %v after start, want %v", got.Sub(epoch), want.Sub(epoch))
	}
	if got, want := s.Due(1), epoch.Add(333_333_333*time.Nanosecond); !got.Equal(want) {
		t.Errorf("Due(1) = %v after start, want %v", got.Sub(epoch), want.Sub(epoch))
	}
}

func TestScheduleOpenLoopEndsAtTheDuration(t *testing.T) {
	t.Parallel()
	// 100/s for 1s: requests 0…99 are due before the end, request 100 is due exactly at it.
	s := bench.NewSchedule(epoch, 100, 0, time.Second)
	n := 0
	for {
		_, _, ok := s.Next()
		if !ok {
			break
		}
		n++
	}
	if n != 100 {
		t.Errorf("handed out %d requests, want 100", n)
	}
}

func TestScheduleRequestLimit(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{0, 50} {
		s := bench.NewSchedule(epoch, rate, 7, 0)
		n := 0
		for {
			_, due, ok := s.Next()
			if !ok {
				break
			}
			if rate == 0 && !due.IsZero() {
				t.Errorf("closed loop handed out a due time")
			}
			n++
		}
		if n != 7 {
			t.Errorf("rate %v: handed out %d requests, want 7", rate, n)
		}
	}
}

func TestScheduleIsSafeForConcurrentWorkers(t *testing.T) {
	t.Parallel()
	s := bench.NewSchedule(time.Now(), 0, 10_000, 0)
	var seen sync.Map
	var handed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				seq, _, ok := s.Next()
				if !ok {
					return
				}
				if _, dup := seen.LoadOrStore(seq, true); dup {
					t.Errorf("sequence number %d handed out twice", seq)
				}
				handed.Add(1)
			}
		})
	}
	wg.Wait()
	if handed.Load() != 10_000 {
		t.Errorf("handed out %d, want 10000", handed.Load())
	}
}

func TestRunLoadCountsRequestsAndErrors(t *testing.T) {
	t.Parallel()
	errOdd := errors.New("odd request refused")
	var calls atomic.Int64
	st := bench.RunLoad(context.Background(), bench.Load{Concurrency: 4, Requests: 1000}, func(_ context.Context, _ int, seq uint64) (time.Time, error) {
		calls.Add(1)
		if seq%2 == 1 {
			return time.Time{}, errOdd
		}
		return time.Time{}, nil
	})
	if calls.Load() != 1000 {
		t.Fatalf("calls.Load() = %v, want 1000", calls.Load())
	}
	if st.Count != 1000 {
		t.Fatalf("st.Count = %v, want 1000", st.Count)
	}
	if st.Errors != 500 {
		t.Fatalf("st.Errors = %v, want 500", st.Errors)
	}
	if st.ErrorKinds[errOdd.Error()] != 500 {
		t.Fatalf("st.ErrorKinds[errOdd.Error()] = %v, want 500", st.ErrorKinds[errOdd.Error()])
	}
	if st.Latency.Count() != 500 {
		t.Errorf("st.Latency.Count() = %v, want 500", st.Latency.Count())
	} else if st.Interrupted {
		t.Errorf("st.Interrupted is true")
	}
}

func TestRunLoadTimesOutSlowRequests(t *testing.T) {
	t.Parallel()
	st := bench.RunLoad(context.Background(), bench.Load{Concurrency: 2, Requests: 4, Timeout: 20 * time.Millisecond}, func(ctx context.Context, _ int, _ uint64) (time.Time, error) {
		<-ctx.Done()
		return time.Time{}, ctx.Err()
	})
	if st.Count != 4 {
		t.Fatalf("st.Count = %v, want 4", st.Count)
	}
	if st.Errors != 4 {
		t.Fatalf("st.Errors = %v, want 4", st.Errors)
	}
	if st.ErrorKinds["request timed out"] != 4 {
		t.Fatalf("st.ErrorKinds[\"request timed out\"] = %v, want 4", st.ErrorKinds["request timed out"])
	}
}

// fakeClock is a clock the test moves: waiting for a due time jumps to it, and an Op stands for
// a slow answer by advancing the clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Until(ctx context.Context, due time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if due.After(c.now) {
		c.now = due
	}
	return true
}

// TestRunLoadOpenLoopChargesStallsToEveryDelayedRequest is the coordinated-omission check: one
// request stalls for 200 ms at 1000/s with one worker; the ~200 requests due during the stall must
// show the wait in their latency, not just the one that stalled.
func TestRunLoadOpenLoopChargesStallsToEveryDelayedRequest(t *testing.T) {
	t.Parallel()
	const stall = 200 * time.Millisecond
	clk := &fakeClock{now: epoch}
	st := bench.RunLoadOnClock(context.Background(), bench.Load{Concurrency: 1, Requests: 600, Rate: 1000}, func(_ context.Context, _ int, seq uint64) (time.Time, error) {
		if seq == 100 {
			clk.Advance(stall)
		}
		return time.Time{}, nil
	}, clk.Now, clk.Until)
	if st.Count != 600 {
		t.Fatalf("st.Count = %v, want 600", st.Count)
	}
	if st.Errors != 0 {
		t.Fatalf("st.Errors = %v, want 0", st.Errors)
	}
	// Corrected: about 200 of the 600 requests were due during the stall and waited 200…0 ms, so
	// the p90 (the 60th slowest) is about 140 ms. Uncorrected (service time), only one request
	// took long.
	if p := st.Latency.Quantile(0.9); p < 50*time.Millisecond {
		t.Errorf("latency p90 %v: the stall is not charged to the requests it delayed", p)
	}
	if p := st.Service.Quantile(0.9); p > 50*time.Millisecond {
		t.Errorf("service time p90 %v: should only see the one slow request", p)
	}
	if m := st.Latency.Max(); m < stall {
		t.Errorf("latency max %v < the stall", m)
	}
}

func TestRunLoadOpenLoopKeepsTheRate(t *testing.T) {
	t.Parallel()
	// 200 requests at 2000/s last about 100 ms; closed loop the no-op would finish at once.
	st := bench.RunLoad(context.Background(), bench.Load{Concurrency: 4, Requests: 200, Rate: 2000}, func(context.Context, int, uint64) (time.Time, error) { return time.Time{}, nil })
	if st.Count != 200 {
		t.Fatalf("st.Count = %v, want 200", st.Count)
	}
	if st.Elapsed < 95*time.Millisecond {
		t.Fatalf("st.Elapsed = %v, want at least 95*time.Millisecond", st.Elapsed)
	}
}

func TestRunLoadStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	st := bench.RunLoad(ctx, bench.Load{Concurrency: 3, Duration: time.Minute}, func(ctx context.Context, _ int, _ uint64) (time.Time, error) {
		if n.Add(1) == 50 {
			cancel()
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(time.Millisecond):
			return time.Time{}, nil
		}
	})
	if !st.Interrupted {
		t.Fatalf("interrupted %v errors %d (%v): st.Interrupted is false; a cancelled run is interrupted, and its cut-off requests are not errors", st.Interrupted, st.Errors, st.ErrorKinds)
	}
	if st.Errors != 0 {
		t.Fatalf("interrupted %v errors %d (%v): st.Errors = %v, want 0; a cancelled run is interrupted, and its cut-off requests are not errors", st.Interrupted, st.Errors, st.ErrorKinds, st.Errors)
	}
}

// TestRunLoadMeasuresToTheAnswer: an Op that reports its answer's time before returning (a
// per_event process that still has to exit) gets latency to the answer and completion to the end.
func TestRunLoadMeasuresToTheAnswer(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{now: epoch}
	st := bench.RunLoadOnClock(context.Background(), bench.Load{Concurrency: 1, Requests: 5}, func(context.Context, int, uint64) (time.Time, error) {
		answered := clk.Now()
		clk.Advance(100 * time.Millisecond) // the "exit"
		return answered, nil
	}, clk.Now, clk.Until)
	if st.Count != 5 {
		t.Fatalf("st.Count = %v, want 5", st.Count)
	}
	if st.Completion.Count() != 5 {
		t.Fatalf("st.Completion.Count() = %v, want 5", st.Completion.Count())
	}
	if lat, done := st.Latency.Max(), st.Completion.Min(); lat >= done {
		t.Errorf("lat = %v, want less than %v", lat, done)
	} else if done < 100*time.Millisecond {
		t.Errorf("done = %v, want at least 100*time.Millisecond", done)
	}
}

func TestStatsErrorKindsAreCapped(t *testing.T) {
	t.Parallel()
	var st bench.Stats
	for i := range 25 {
		st.AddError(errors.New(string(rune('a' + i))))
	}
	if st.Errors != 25 {
		t.Fatalf("st.Errors = %v, want 25", st.Errors)
	}
	if len(st.ErrorKinds) != 11 {
		t.Fatalf("len(st.ErrorKinds) = %v, want 11", len(st.ErrorKinds))
	}
	if st.ErrorKinds["(other errors)"] != 15 {
		t.Fatalf("st.ErrorKinds[\"(other errors)\"] = %v, want 15", st.ErrorKinds["(other errors)"])
	}
}

func TestStatsMerge(t *testing.T) {
	t.Parallel()
	one, two := uint64(3), uint64(4)
	a := bench.Stats{Count: 10, Accepted: &one, Elapsed: time.Second}
	a.AddErrors("x", 2)
	a.Latency.Record(time.Millisecond)
	b := bench.Stats{Count: 5, Accepted: &two, Elapsed: 2 * time.Second, Interrupted: true}
	b.AddErrors("x", 1)
	b.AddErrors("y", 1)
	b.Latency.Record(3 * time.Millisecond)
	var total bench.Stats
	total.Merge(&a)
	total.Merge(&b)
	if total.Count != 15 || total.Errors != 4 || total.ErrorKinds["x"] != 3 || total.ErrorKinds["y"] != 1 ||
		*total.Accepted != 7 || total.Elapsed != 3*time.Second || !total.Interrupted || total.Latency.Count() != 2 {
		t.Fatalf("merged %+v", total)
	}
}
