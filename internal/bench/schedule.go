package bench

import (
	"sync/atomic"
	"time"
)

// Schedule hands out request sequence numbers to the workers of one load phase and says when
// each request is due. Closed loop (rate 0), a worker sends its next request as soon as the last
// one is answered, and requests have no due time. Open loop (rate > 0), request n is due at
// start + n/rate whatever happened before: a worker that picks it up late still measures its
// latency from the due time, so a stall of the system under test shows in the latency of every
// request it delayed instead of silently lowering the send rate (coordinated omission).
//
// A phase ends at the first of: limit requests handed out, or the end of the duration (open loop:
// no request is due at or after start+duration; closed loop: none is started after it).
type Schedule struct {
	start time.Time
	end   time.Time // zero: no time limit
	rate  float64   // requests per second; 0: closed loop
	limit uint64    // 0: no count limit
	now   func() time.Time
	next  atomic.Uint64
}

// NewSchedule returns a schedule starting at start. rate ≤ 0 means closed loop; limit 0 and
// duration ≤ 0 mean no limit of that kind.
func NewSchedule(start time.Time, rate float64, limit uint64, duration time.Duration) *Schedule {
	s := &Schedule{start: start, rate: max(rate, 0), limit: limit, now: time.Now}
	if duration > 0 {
		s.end = start.Add(duration)
	}
	return s
}

// OpenLoop reports whether requests have due times (a fixed arrival rate).
func (s *Schedule) OpenLoop() bool { return s.rate > 0 }

// Due returns when request seq is due under the fixed rate (start in closed loop). It is computed
// from start each time, so rounding never accumulates over a long run.
func (s *Schedule) Due(seq uint64) time.Time {
	if s.rate <= 0 {
		return s.start
	}
	return s.start.Add(time.Duration(float64(seq) * float64(time.Second) / s.rate))
}

// Next hands out the next sequence number and its due time (the zero time in closed loop), or
// ok == false once the phase is over. It is safe for concurrent use.
func (s *Schedule) Next() (seq uint64, due time.Time, ok bool) {
	seq = s.next.Add(1) - 1
	if s.limit > 0 && seq >= s.limit {
		return seq, time.Time{}, false
	}
	if s.rate <= 0 {
		if !s.end.IsZero() && !s.now().Before(s.end) {
			return seq, time.Time{}, false
		}
		return seq, time.Time{}, true
	}
	due = s.Due(seq)
	if !s.end.IsZero() && !due.Before(s.end) {
		return seq, time.Time{}, false
	}
	return seq, due, true
}
