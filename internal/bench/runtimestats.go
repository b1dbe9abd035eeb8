package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"time"
)

// The server-side cost of a decision comes from the Go runtime's own counters, as the server
// exposes them on its Prometheus /metrics: read before and after each measured phase, the
// difference divided by the phase's requests. ahp-server and ahp-jsonrpc-bridge export the
// runtime/metrics series (internal/metrics); OPA exports the classic go_memstats_* ones, which
// give the same allocation counts and GC cycles but no GC CPU time or live heap.

// The series read, in order of preference where two say the same.
var (
	allocBytesSeries  = []string{"go_gc_heap_allocs_bytes_total", "go_memstats_alloc_bytes_total"}
	allocObjSeries    = []string{"go_gc_heap_allocs_objects_total", "go_memstats_mallocs_total"}
	gcCyclesSeries    = []string{"go_gc_cycles_total_gc_cycles_total", "go_gc_duration_seconds_count"}
	gcCPUSeries       = "go_cpu_classes_gc_total_cpu_seconds_total"
	totalCPUSeries    = "go_cpu_classes_total_cpu_seconds_total"
	liveHeapSeries    = "go_gc_heap_live_bytes"
	heapAllocSeries   = "go_memstats_heap_alloc_bytes"
	gcPauseSeries     = "go_gc_duration_seconds_sum"
	processCPUSeries  = "process_cpu_seconds_total"
	runtimeStatSeries = map[string]bool{
		"go_gc_heap_allocs_bytes_total": true, "go_memstats_alloc_bytes_total": true,
		"go_gc_heap_allocs_objects_total": true, "go_memstats_mallocs_total": true,
		"go_gc_cycles_total_gc_cycles_total": true, "go_gc_duration_seconds_count": true,
		gcCPUSeries: true, totalCPUSeries: true, liveHeapSeries: true, heapAllocSeries: true,
		gcPauseSeries: true, processCPUSeries: true,
	}
)

// maxMetricsBytes bounds a /metrics answer ahp-bench reads.
const maxMetricsBytes = 8 << 20

// runtimeSample is the value of each series of runtimeStatSeries a scrape found.
type runtimeSample map[string]float64

// first returns the value of the first of names present.
func (s runtimeSample) first(names []string) (string, float64, bool) {
	for _, n := range names {
		if v, ok := s[n]; ok {
			return n, v, true
		}
	}
	return "", 0, false
}

// parseRuntimeSample reads the unlabelled series of runtimeStatSeries out of the Prometheus text
// exposition format.
func parseRuntimeSample(r io.Reader) (runtimeSample, error) {
	s := runtimeSample{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name, rest, ok := bytes.Cut(line, []byte(" "))
		if !ok || !runtimeStatSeries[string(name)] {
			continue // labelled series have a '{' in the name part and are not wanted
		}
		if f := bytes.Fields(rest); len(f) > 0 {
			v, err := strconv.ParseFloat(string(f[0]), 64)
			if err != nil {
				return nil, fmt.Errorf("series %s: value is not a number", name)
			}
			s[string(name)] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, _, ok := s.first(allocBytesSeries); !ok {
		return nil, errors.New("no Go runtime series (go_gc_heap_allocs_bytes_total or go_memstats_alloc_bytes_total)")
	}
	return s, nil
}

// scrapeRuntime reads url (a /metrics endpoint on loopback).
func scrapeRuntime(ctx context.Context, hc *http.Client, url string) (runtimeSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	if len(data) > maxMetricsBytes {
		return nil, fmt.Errorf("GET /metrics: answer larger than %d bytes", maxMetricsBytes)
	}
	return parseRuntimeSample(bytes.NewReader(data))
}

// costMeter adds up what a process's runtime counters moved during the measured phases of one
// system.
type costMeter struct {
	process string // which process: "ahp-server (pid N)", "opa (pid N)", …
	pid     int
	url     string
	err     error // the first scrape that failed; the cost is then not reported
	before  runtimeSample
	delta   map[string]float64
	heapMax map[string]float64 // gauges: the largest value seen after a phase
	seconds float64
	count   uint64
}

func newCostMeter(name string, pid int, url string) *costMeter {
	return &costMeter{process: pidDesc(name, pid), pid: pid, url: url, delta: map[string]float64{}, heapMax: map[string]float64{}}
}

// procCPU is the series name under which a meter keeps the CPU time read from /proc.
const procCPU = "proc_cpu_seconds"

// clockTicks is the unit of /proc/PID/stat's times: USER_HZ, 100 on every Linux ABI Go supports.
const clockTicks = 100

// readProcCPU returns the user+system CPU seconds of process pid from /proc/PID/stat (Linux), so
// that every peer's CPU is read the same way, whether it exports process_* metrics or not.
func readProcCPU(pid int) (float64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: count from after it.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return float64(ut+st) / clockTicks, true
}

// begin reads the counters before a phase.
func (m *costMeter) begin(ctx context.Context, hc *http.Client) {
	if m.err != nil {
		return
	}
	m.before, m.err = scrapeRuntime(ctx, hc, m.url)
	if cpu, ok := readProcCPU(m.pid); ok && m.err == nil {
		m.before[procCPU] = cpu
	}
}

// end reads them after the phase and adds the difference; count is the phase's requests and
// elapsed its wall time.
func (m *costMeter) end(ctx context.Context, hc *http.Client, count uint64, elapsed time.Duration) {
	if m.err != nil {
		return
	}
	after, err := scrapeRuntime(ctx, hc, m.url)
	if err != nil {
		m.err = err
		return
	}
	if cpu, ok := readProcCPU(m.pid); ok {
		after[procCPU] = cpu
	}
	for name, v := range after {
		switch name {
		case liveHeapSeries, heapAllocSeries:
			m.heapMax[name] = max(m.heapMax[name], v)
		default:
			if b, ok := m.before[name]; ok {
				m.delta[name] += v - b
			}
		}
	}
	m.seconds += elapsed.Seconds()
	m.count += count
}

// ServerCost is what a server process spent on the decisions of one target, from its runtime
// counters (the scrapes themselves included, a few hundred KB per phase).
type ServerCost struct {
	// Process names the process measured.
	Process string `json:"process"`
	// Error says why there are no numbers (a failed scrape).
	Error string `json:"error,omitempty"`
	// Decisions is the requests the numbers are divided by; Seconds the measured wall time.
	Decisions uint64  `json:"decisions"`
	Seconds   float64 `json:"seconds"`
	// BytesPerDecision and AllocsPerDecision are heap bytes and objects allocated per request.
	BytesPerDecision  float64 `json:"bytes_per_decision"`
	AllocsPerDecision float64 `json:"allocs_per_decision"`
	// GCCycles is the number of collections, GCPerSecond the rate.
	GCCycles    float64 `json:"gc_cycles"`
	GCPerSecond float64 `json:"gc_per_s"`
	// GCCPUFraction is the GC's share of the CPU time the runtime had (GOMAXPROCS × wall time), from
	// runtime/metrics (absent for a process that exports only go_memstats, and for a phase in which
	// no GC ended: the runtime brings its CPU classes up to date at the end of each GC cycle, so the
	// share covers the cycles that ended during the phases).
	GCCPUFraction *float64 `json:"gc_cpu_fraction,omitempty"`
	// GCPauseSeconds is the total stop-the-world pause time.
	GCPauseSeconds float64 `json:"gc_pause_s"`
	// CPUMicrosPerDecision is the process's CPU time (user+system) per request, and CPUCores the
	// cores it kept busy on average.
	CPUMicrosPerDecision float64 `json:"cpu_us_per_decision"`
	CPUCores             float64 `json:"cpu_cores"`
	// LiveHeapBytes is the largest heap marked live by a GC, read after each phase (runtime/metrics
	// only); HeapAllocBytes the largest heap in use, garbage not yet swept included.
	LiveHeapBytes  *float64 `json:"live_heap_bytes,omitempty"`
	HeapAllocBytes float64  `json:"heap_alloc_bytes"`
	// Series says which counters the allocation numbers come from.
	Series string `json:"series"`
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// result turns the meter into a ServerCost.
func (m *costMeter) result() ServerCost {
	c := ServerCost{Process: m.process, Decisions: m.count, Seconds: round(m.seconds, 3)}
	if m.err != nil {
		c.Error = m.err.Error()
		return c
	}
	if m.count == 0 || m.seconds == 0 {
		c.Error = "no measured phase"
		return c
	}
	n := float64(m.count)
	d := runtimeSample(m.delta)
	name, bytes, _ := d.first(allocBytesSeries)
	c.Series = name
	_, objs, _ := d.first(allocObjSeries)
	_, cycles, _ := d.first(gcCyclesSeries)
	c.BytesPerDecision = round(bytes/n, 0)
	c.AllocsPerDecision = round(objs/n, 1)
	c.GCCycles = cycles
	c.GCPerSecond = round(cycles/m.seconds, 2)
	if gc, ok := d[gcCPUSeries]; ok {
		if total := d[totalCPUSeries]; total > 0 {
			f := round(gc/total, 4)
			c.GCCPUFraction = &f
		}
	}
	c.GCPauseSeconds = round(d[gcPauseSeries], 4)
	_, cpu, _ := d.first([]string{procCPU, processCPUSeries})
	c.CPUMicrosPerDecision = round(cpu/n*1e6, 1)
	c.CPUCores = round(cpu/m.seconds, 2)
	if v, ok := m.heapMax[liveHeapSeries]; ok {
		c.LiveHeapBytes = &v
	}
	c.HeapAllocBytes = m.heapMax[heapAllocSeries]
	return c
}
