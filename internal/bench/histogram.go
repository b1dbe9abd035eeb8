package bench

import (
	"math"
	"math/bits"
	"time"
)

// The histogram is log-linear, in the manner of HdrHistogram: values are whole microseconds; the
// first bucket holds 0 to subBucketCount-1 µs exactly, and every further bucket b covers twice the
// range of the one before with subBucketHalf cells of width 2^b µs. A value is therefore kept to
// within 1 part in subBucketHalf (reported at the middle of its cell, so within half that), at any
// magnitude, in a few KiB per bucket actually used.
const (
	subBucketBits  = 10
	subBucketCount = 1 << subBucketBits // 1024: 0–1023 µs are exact
	subBucketHalf  = subBucketCount / 2
	bucketCount    = 64 - subBucketBits + 1
)

// Histogram records latencies with microsecond resolution: exact below 1.024 ms, and within 0.1 %
// above (values are reported at the middle of their cell). The zero value is empty and ready to
// use. A Histogram is not safe for concurrent use; give each goroutine its own and Merge them.
type Histogram struct {
	// cells[0] has subBucketCount cells for 0…1023 µs; cells[b] for b ≥ 1 has subBucketHalf cells
	// of width 2^b µs covering [subBucketHalf<<b, subBucketCount<<b). Buckets are allocated on
	// first use, so a histogram of loopback latencies holds two or three of them.
	cells    [bucketCount][]uint64
	count    uint64
	sumNanos uint64
	min, max uint64 // µs, exact
}

// microseconds rounds d to the nearest whole microsecond; negative durations count as 0.
func microseconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	v := uint64(d / time.Microsecond)
	if d%time.Microsecond >= time.Microsecond/2 {
		v++
	}
	return v
}

// duration converts v µs back, saturating at the largest whole-microsecond time.Duration.
func duration(v uint64) time.Duration {
	const limit = uint64(math.MaxInt64 / int64(time.Microsecond))
	return time.Duration(min(v, limit)) * time.Microsecond
}

// locate returns the bucket and the cell within it that hold v µs.
func locate(v uint64) (bucket, cell int) {
	if v < subBucketCount {
		return 0, int(v)
	}
	b := bits.Len64(v) - subBucketBits
	return b, int(v>>uint(b)) - subBucketHalf
}

// cellRange returns the lowest and highest value (µs) that a cell holds.
func cellRange(bucket, cell int) (lo, hi uint64) {
	if bucket == 0 {
		return uint64(cell), uint64(cell)
	}
	lo = uint64(cell+subBucketHalf) << uint(bucket)
	return lo, lo + (uint64(1) << uint(bucket)) - 1
}

// Record adds one observation of d.
func (h *Histogram) Record(d time.Duration) {
	v := microseconds(d)
	b, c := locate(v)
	if h.cells[b] == nil {
		n := subBucketHalf
		if b == 0 {
			n = subBucketCount
		}
		h.cells[b] = make([]uint64, n)
	}
	h.cells[b][c]++
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.count++
	if d > 0 {
		h.sumNanos += uint64(d)
	}
}

// Merge adds every observation of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.count == 0 {
		return
	}
	for b, src := range o.cells {
		if src == nil {
			continue
		}
		if h.cells[b] == nil {
			h.cells[b] = make([]uint64, len(src))
		}
		for c, n := range src {
			h.cells[b][c] += n
		}
	}
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.count += o.count
	h.sumNanos += o.sumNanos
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 { return h.count }

// Min returns the smallest observation, to the microsecond (0 when empty).
func (h *Histogram) Min() time.Duration { return duration(h.min) }

// Max returns the largest observation, to the microsecond (0 when empty).
func (h *Histogram) Max() time.Duration { return duration(h.max) }

// Mean returns the exact mean of the observations (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(h.sumNanos / h.count)
}

// Quantile returns the value at quantile q (0 ≤ q ≤ 1) by nearest rank: the cell of the
// ceil(q·n)-th smallest observation, reported at its middle and clamped to [Min, Max]. Quantile(0)
// is Min and Quantile(1) is Max; an empty histogram returns 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	if q <= 0 || math.IsNaN(q) {
		return h.Min()
	}
	if q >= 1 {
		return h.Max()
	}
	rank := uint64(math.Ceil(q * float64(h.count)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for b, cells := range h.cells {
		for c, n := range cells {
			if n == 0 {
				continue
			}
			seen += n
			if seen >= rank {
				lo, hi := cellRange(b, c)
				v := lo + (hi-lo)/2
				v = max(h.min, min(h.max, v))
				return duration(v)
			}
		}
	}
	return h.Max()
}
