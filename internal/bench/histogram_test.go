package bench_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
)

// exactQuantile is the nearest-rank quantile of sorted microsecond values, as Histogram defines it.
func exactQuantile(sorted []uint64, q float64) uint64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = max(rank, 1)
	return sorted[rank-1]
}

// tolerance is the largest error Histogram may make at v µs: none below 1024 µs, and half a cell
// (v/1024 at most) above.
func tolerance(v uint64) float64 {
	if v < 1024 {
		return 0
	}
	return float64(v) / 1024
}

func TestHistogramEmpty(t *testing.T) {
	t.Parallel()
	var h bench.Histogram
	if h.Count() != 0 {
		t.Fatalf("empty histogram: h.Count() = %v, want 0", h.Count())
	}
	if h.Quantile(0.5) != 0 {
		t.Fatalf("empty histogram: h.Quantile(0.5) = %v, want 0", h.Quantile(0.5))
	}
	if h.Min() != 0 {
		t.Fatalf("empty histogram: h.Min() = %v, want 0", h.Min())
	}
	if h.Max() != 0 {
		t.Fatalf("empty histogram: h.Max() = %v, want 0", h.Max())
	}
	if h.Mean() != 0 {
		t.Fatalf("empty histogram: h.Mean() = %v, want 0", h.Mean())
	}
}

func TestHistogramExactBelowOneMillisecond(t *testing.T) {
	t.Parallel()
	var h bench.Histogram
	for v := range 1000 {
		h.Record(time.Duration(v+1) * time.Microsecond) // 1…1000 µs
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0, time.Microsecond}, {0.001, time.Microsecond}, {0.5, 500 * time.Microsecond},
		{0.9, 900 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {0.999, 999 * time.Microsecond},
		{1, 1000 * time.Microsecond},
	} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got, want := h.Mean(), 500500*time.Nanosecond; got != want {
		t.Errorf("Mean = %v, want %v", got, want)
	}
}

func TestHistogramRoundsToTheNearestMicrosecond(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   time.Duration
		want time.Duration
	}{
		{-5 * time.Second, 0}, {0, 0}, {499 * time.Nanosecond, 0}, {500 * time.Nanosecond, time.Microsecond},
		{1499 * time.Nanosecond, time.Microsecond}, {41_600 * time.Nanosecond, 42 * time.Microsecond},
	} {
		var h bench.Histogram
		h.Record(c.in)
		if got := h.Quantile(0.5); got != c.want {
			t.Errorf("Record(%v): p50 %v, want %v", c.in, got, c.want)
		}
	}
}

// TestHistogramAccuracy compares quantiles with the exact ones over distributions shaped like
// real latencies, spanning microseconds to minutes.
func TestHistogramAccuracy(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	dists := map[string]func() time.Duration{
		"uniform 0-5ms": func() time.Duration { return time.Duration(rng.Int64N(int64(5 * time.Millisecond))) },
		"lognormal around 100µs": func() time.Duration {
			return time.Duration(math.Exp(rng.NormFloat64()*0.8+math.Log(100)) * float64(time.Microsecond))
		},
		"bimodal with a slow tail": func() time.Duration {
			if rng.IntN(100) == 0 {
				return time.Duration(rng.Int64N(int64(3*time.Second))) + 50*time.Millisecond
			}
			return time.Duration(rng.Int64N(int64(300*time.Microsecond))) + 40*time.Microsecond
		},
		"wide exponential": func() time.Duration {
			return time.Duration(rng.ExpFloat64() * float64(20*time.Second))
		},
	}
	for name, next := range dists {
		t.Run(name, func(t *testing.T) {
			var h bench.Histogram
			values := make([]uint64, 0, 200_000)
			for range cap(values) {
				d := next()
				h.Record(d)
				values = append(values, uint64((d+500)/time.Microsecond))
			}
			slices.Sort(values)
			for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999} {
				want := exactQuantile(values, q)
				got := uint64(h.Quantile(q) / time.Microsecond)
				if diff := math.Abs(float64(got) - float64(want)); diff > tolerance(want) {
					t.Errorf("Quantile(%v) = %d µs, exact %d µs: off by %.0f µs, tolerance %.1f", q, got, want, diff, tolerance(want))
				}
			}
			if got, want := uint64(h.Min()/time.Microsecond), values[0]; got != want {
				t.Errorf("Min = %d µs, want %d", got, want)
			}
			if got, want := uint64(h.Max()/time.Microsecond), values[len(values)-1]; got != want {
				t.Errorf("Max = %d µs, want %d", got, want)
			}
			if h.Count() != uint64(len(values)) {
				t.Errorf("Count = %d, want %d", h.Count(), len(values))
			}
		})
	}
}

func TestHistogramHugeValues(t *testing.T) {
	t.Parallel()
	var h bench.Histogram
	huge := time.Duration(math.MaxInt64)
	h.Record(huge)
	h.Record(time.Microsecond)
	if got := h.Quantile(1); got != huge.Truncate(time.Microsecond) {
		t.Errorf("max = %v, want %v", got, huge.Truncate(time.Microsecond))
	}
	if got := h.Quantile(0.5); got != time.Microsecond {
		t.Errorf("p50 = %v, want 1µs", got)
	}
}

func TestHistogramMergeEqualsRecordingEverything(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var all, a, b bench.Histogram
	for i := range 50_000 {
		d := time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var merged bench.Histogram
	merged.Merge(&a)
	merged.Merge(&b)
	merged.Merge(&bench.Histogram{}) // merging an empty one changes nothing
	merged.Merge(nil)
	if merged.Count() != all.Count() {
		t.Fatalf("merged count %d, want %d", merged.Count(), all.Count())
	}
	if merged.Min() != all.Min() {
		t.Fatalf("merged min %v, want %v", merged.Min(), all.Min())
	}
	if merged.Max() != all.Max() {
		t.Fatalf("merged max %v, want %v", merged.Max(), all.Max())
	}
	if merged.Mean() != all.Mean() {
		t.Fatalf("merged mean %v, want %v", merged.Mean(), all.Mean())
	}
	for _, q := range []float64{0, 0.25, 0.5, 0.9, 0.99, 0.999, 1} {
		if merged.Quantile(q) != all.Quantile(q) {
			t.Errorf("Quantile(%v): merged %v, direct %v", q, merged.Quantile(q), all.Quantile(q))
		}
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h bench.Histogram
	d := 137 * time.Microsecond
	for b.Loop() {
		h.Record(d)
		d = (d*7 + 13*time.Microsecond) % (20 * time.Millisecond)
	}
}
