package bench

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Op sends request seq on behalf of worker and checks its answer; an error counts the request as
// failed. ctx carries the per-request timeout. answered is when the answer arrived; the zero time
// means "when Op returned". An Op that has more to do after the answer (a per_event process
// exiting) reports the answer's time, and the rest is measured as completion time.
type Op func(ctx context.Context, worker int, seq uint64) (answered time.Time, err error)

// Load is how much load one phase applies.
type Load struct {
	// Concurrency is the number of workers, each with at most one request outstanding.
	Concurrency int
	// Duration ends the phase after this long (0: no time limit).
	Duration time.Duration
	// Requests ends the phase after this many requests (0: no count limit).
	Requests uint64
	// Rate is the fixed arrival rate in requests per second across all workers (0: closed loop,
	// each worker sends as soon as its previous request is answered).
	Rate float64
	// Timeout bounds each request.
	Timeout time.Duration
}

// maxErrorKinds caps the distinct error messages kept per phase; later ones are counted under
// otherErrors.
const (
	maxErrorKinds = 10
	otherErrors   = "(other errors)"
)

// Stats is what a phase measured.
type Stats struct {
	// Latency of successful requests: from the due time in open loop (coordinated omission
	// corrected), from the send otherwise.
	Latency Histogram
	// Service time of successful requests: from the actual send to the answer. It equals Latency
	// in closed loop; in open loop the difference is time spent waiting for a free worker (or for
	// the load generator's own timer).
	Service Histogram
	// Completion of successful requests whose Op went on after the answer: from the actual send
	// until the Op returned (empty for every other request).
	Completion Histogram
	// Count is the number of requests completed, failed ones included.
	Count uint64
	// Errors is the number of failed requests plus any count mismatch found at the end of the
	// phase (observe-stream).
	Errors uint64
	// ErrorKinds counts errors by message.
	ErrorKinds map[string]uint64
	// Accepted is the number of events the server said it recorded (observe-stream only).
	Accepted *uint64
	// Elapsed is the wall time of the phase, from the first due time to the last answer.
	Elapsed time.Duration
	// Interrupted is set when the caller's context ended the phase early.
	Interrupted bool
	// Watch is what the phase's Watch subscribers received (nil without --watchers).
	Watch *WatchStats
}

// AddError counts one error under its message.
func (s *Stats) AddError(err error) { s.AddErrors(err.Error(), 1) }

// AddErrors counts n errors under msg.
func (s *Stats) AddErrors(msg string, n uint64) {
	if n == 0 {
		return
	}
	s.Errors += n
	if s.ErrorKinds == nil {
		s.ErrorKinds = make(map[string]uint64)
	}
	if _, ok := s.ErrorKinds[msg]; !ok && len(s.ErrorKinds) >= maxErrorKinds {
		msg = otherErrors
	}
	s.ErrorKinds[msg] += n
}

// Merge adds o's requests and errors to s. Elapsed times add up, as phases run one after another.
func (s *Stats) Merge(o *Stats) {
	s.Latency.Merge(&o.Latency)
	s.Service.Merge(&o.Service)
	s.Completion.Merge(&o.Completion)
	s.Count += o.Count
	for msg, n := range o.ErrorKinds {
		s.AddErrors(msg, n) // every error is counted under a kind, so this carries o.Errors over
	}
	if o.Accepted != nil {
		acc := *o.Accepted
		if s.Accepted != nil {
			acc += *s.Accepted
		}
		s.Accepted = &acc
	}
	s.Elapsed += o.Elapsed
	s.Interrupted = s.Interrupted || o.Interrupted
	if o.Watch != nil {
		if s.Watch == nil {
			s.Watch = &WatchStats{}
		}
		s.Watch.merge(o.Watch)
	}
}

// RunLoad applies load with op until the schedule ends or ctx is done, and returns what it
// measured. A request that fails because ctx ended is not counted.
func RunLoad(ctx context.Context, load Load, op Op) *Stats {
	return runLoad(ctx, load, op, wallClock)
}

// clock is where a phase reads the time and waits for due times. Production runs on wallClock;
// tests drive a fake one, so that a stall or a slow exit need not take real time.
type clock struct {
	now func() time.Time
	// until returns once due has come, or false if ctx ended first; nil: each worker's own
	// waiter (Go and fine timers).
	until func(ctx context.Context, due time.Time) bool
}

var wallClock = clock{now: time.Now}

func runLoad(ctx context.Context, load Load, op Op, clk clock) *Stats {
	conc := max(load.Concurrency, 1)
	timeout := load.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	start := clk.now()
	sched := NewSchedule(start, load.Rate, load.Requests, load.Duration)
	sched.now = clk.now
	perWorker := make([]Stats, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() { work(ctx, sched, clk, timeout, op, w, &perWorker[w]) })
	}
	wg.Wait()
	total := &Stats{}
	for i := range perWorker {
		total.Merge(&perWorker[i])
	}
	total.Elapsed = clk.now().Sub(start)
	return total
}

// work is one worker's loop.
func work(ctx context.Context, sched *Schedule, clk clock, timeout time.Duration, op Op, w int, st *Stats) {
	until := clk.until
	if until == nil {
		var wait waiter
		defer wait.stop()
		until = wait.until
	}
	for ctx.Err() == nil {
		seq, due, ok := sched.Next()
		if !ok {
			return
		}
		if !due.IsZero() && !until(ctx, due) {
			st.Interrupted = true
			return
		}
		sent := clk.now()
		opCtx, cancel := context.WithTimeout(ctx, timeout)
		answered, err := op(opCtx, w, seq)
		cancel()
		done := clk.now()
		if err != nil && ctx.Err() != nil {
			st.Interrupted = true
			return
		}
		st.Count++
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				st.AddErrors("request timed out", 1)
			} else {
				st.AddError(err)
			}
			continue
		}
		begin := sent
		if !due.IsZero() {
			begin = due
		}
		if !answered.IsZero() {
			st.Completion.Record(done.Sub(sent))
			done = answered
		}
		st.Latency.Record(done.Sub(begin))
		st.Service.Record(done.Sub(sent))
	}
	st.Interrupted = true
}

// waiter sleeps until a due time: a Go timer for the bulk of the wait, then, where the platform
// has one, a fineTimer for the last stretch, so that the generator's own wake-up delay (up to a
// millisecond with Go's timers alone) is not charged to the system under test.
type waiter struct {
	timer *time.Timer
	fine  *fineTimer
	init  bool
}

// fineMargin is how much of a wait is left to the fineTimer.
const fineMargin = 2 * time.Millisecond

// until returns once due has come, or false if ctx ended first.
func (w *waiter) until(ctx context.Context, due time.Time) bool {
	if !w.init {
		w.init = true
		w.fine = newFineTimer()
	}
	coarse := time.Until(due)
	if w.fine != nil {
		coarse -= fineMargin
	}
	if coarse > 0 {
		if w.timer == nil {
			w.timer = time.NewTimer(coarse)
		} else {
			w.timer.Reset(coarse)
		}
		select {
		case <-w.timer.C:
		case <-ctx.Done():
			return false
		}
	}
	if ctx.Err() != nil {
		return false
	}
	if rest := time.Until(due); rest > 0 && w.fine != nil {
		if !w.fine.sleep(rest) {
			w.fine.close()
			w.fine = nil
			time.Sleep(time.Until(due))
		}
	}
	return true
}

func (w *waiter) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.fine != nil {
		w.fine.close()
	}
}
