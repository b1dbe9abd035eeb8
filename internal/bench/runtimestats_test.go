package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/testkit"
)

const exposition = `# HELP go_gc_heap_allocs_bytes_total Cumulative sum of memory allocated to the heap by the application.
# TYPE go_gc_heap_allocs_bytes_total counter
go_gc_heap_allocs_bytes_total %d
go_gc_heap_allocs_objects_total %d
go_gc_cycles_total_gc_cycles_total %d
go_cpu_classes_gc_total_cpu_seconds_total %g
go_cpu_classes_total_cpu_seconds_total %g
go_gc_heap_live_bytes %d
go_memstats_heap_alloc_bytes 5e+06
go_gc_duration_seconds{quantile="0.5"} 0.5
go_gc_duration_seconds_sum %g
go_gc_duration_seconds_count 99
go_memstats_alloc_bytes_total 1
process_cpu_seconds_total 7
ahp_decisions_total{synthetic="false",verdict="allow"} 12
`

func TestParseRuntimeSample(t *testing.T) {
	t.Parallel()
	s, err := parseRuntimeSample(strings.NewReader(fmt.Sprintf(exposition, 1000, 10, 3, 0.5, 20.0, 4096, 0.25)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"go_gc_heap_allocs_bytes_total": 1000, "go_gc_heap_allocs_objects_total": 10, "go_gc_cycles_total_gc_cycles_total": 3,
		gcCPUSeries: 0.5, totalCPUSeries: 20, liveHeapSeries: 4096, heapAllocSeries: 5e6, gcPauseSeries: 0.25,
		"go_gc_duration_seconds_count": 99, "go_memstats_alloc_bytes_total": 1, processCPUSeries: 7,
	}
	if len(s) != len(want) {
		t.Errorf("parsed %d series %v, want %d", len(s), s, len(want))
	}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s = %v, want %v", k, s[k], v)
		}
	}
	if name, v, _ := s.first(allocBytesSeries); name != "go_gc_heap_allocs_bytes_total" || v != 1000 {
		t.Errorf("runtime/metrics series not preferred: %s %v", name, v)
	}
	if _, err := parseRuntimeSample(strings.NewReader("ahp_build_info 1\n")); err == nil || !strings.Contains(err.Error(), "no Go runtime series") {
		t.Errorf("exposition without runtime series: %v", err)
	}
	if _, err := parseRuntimeSample(strings.NewReader("go_memstats_alloc_bytes_total x\n")); err == nil || !strings.Contains(err.Error(), "go_memstats_alloc_bytes_total") {
		t.Errorf("bad value: %v", err)
	}
}

// TestCostMeter serves an exposition whose counters move by known amounts between the scrapes
// around a phase and checks the per-decision arithmetic.
func TestCostMeter(t *testing.T) {
	t.Parallel()
	var scrapes atomic.Int64
	url := testkit.StartLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1) - 1 // 0 before the phase, 1 after
		// 400 decisions move the counters by 1.6 MB, 20 000 objects, 4 cycles, 0.1 of 2 CPU-seconds.
		fmt.Fprintf(w, exposition, 1000+n*1_600_000, 10+n*20_000, 3+n*4, 0.5+float64(n)*0.1, 20+float64(n)*2, 4096*(n+1), 0.25+float64(n)*0.002)
	}))
	m := newCostMeter("self", os.Getpid(), url+"/metrics")
	hc := &http.Client{}
	m.begin(context.Background(), hc)
	m.end(context.Background(), hc, 400, time.Second)
	c := m.result()
	if c.Error != "" {
		t.Fatal(c.Error)
	}
	if c.BytesPerDecision != 4000 || c.AllocsPerDecision != 50 || c.GCCycles != 4 || c.GCPerSecond != 4 {
		t.Errorf("cost %+v: want 4000 B, 50 allocs, 4 cycles, 4/s per decision", c)
	}
	if c.GCCPUFraction == nil || *c.GCCPUFraction != 0.05 {
		t.Errorf("GC CPU fraction %v, want 0.05", c.GCCPUFraction)
	}
	if c.LiveHeapBytes == nil || *c.LiveHeapBytes != 8192 || c.HeapAllocBytes != 5e6 {
		t.Errorf("heap: live %v, in use %v; want 8192 and 5e6", c.LiveHeapBytes, c.HeapAllocBytes)
	}
	if c.GCPauseSeconds != 0.002 || c.Series != "go_gc_heap_allocs_bytes_total" || c.Decisions != 400 {
		t.Errorf("cost %+v", c)
	}
	if !strings.Contains(c.Process, fmt.Sprint(os.Getpid())) {
		t.Errorf("process %q does not name the pid", c.Process)
	}

	// A failed scrape is reported, not turned into numbers.
	bad := newCostMeter("gone", os.Getpid(), "http://127.0.0.1:1/metrics")
	bad.begin(context.Background(), hc)
	bad.end(context.Background(), hc, 10, time.Second)
	if c := bad.result(); c.Error == "" || c.BytesPerDecision != 0 {
		t.Errorf("unreachable endpoint: %+v", c)
	}
}

func TestReadProcCPU(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	before, ok := readProcCPU(os.Getpid())
	if !ok {
		t.Fatal("cannot read this process's CPU time from /proc")
	}
	// Burn CPU until the clock-tick counter moves (it counts in hundredths of a second).
	deadline := time.Now().Add(30 * time.Second)
	for x := 0; time.Now().Before(deadline); x++ {
		if after, _ := readProcCPU(os.Getpid()); after > before {
			return
		}
		for i := range 1_000_000 {
			x ^= i
		}
	}
	t.Error("CPU time read from /proc never moved while the test was spinning")
}
