package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Summary is a latency distribution in microseconds.
type Summary struct {
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Summarize reads the usual quantiles off h.
func Summarize(h *Histogram) Summary {
	return Summary{
		Min: us(h.Min()), P50: us(h.Quantile(0.50)), P90: us(h.Quantile(0.90)),
		P99: us(h.Quantile(0.99)), P999: us(h.Quantile(0.999)), Max: us(h.Max()),
		Mean: math.Round(us(h.Mean())*10) / 10,
	}
}

// Result is what one mode measured over a whole invocation (warm-up excluded).
type Result struct {
	// Mode is the mode as given ("intercept", "noop:intercept", …).
	Mode string `json:"mode"`
	// Target describes the system under test.
	Target string `json:"target"`
	// Concurrency and Rate repeat the load settings.
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"`
	// PayloadBytes is the size of a tool input as JSON (that of the allowed command; the denied
	// one differs by the length of the commands).
	PayloadBytes int `json:"payload_bytes"`
	// Count is the number of requests (events, for observe-stream) completed, failed ones included.
	Count uint64 `json:"count"`
	// Errors counts failed requests, wrong answers and count mismatches.
	Errors uint64 `json:"errors"`
	// ErrorKinds counts errors by message.
	ErrorKinds map[string]uint64 `json:"error_kinds,omitempty"`
	// Accepted is the server's count of recorded events (observe-stream).
	Accepted *uint64 `json:"accepted,omitempty"`
	// ElapsedSeconds is the measured wall time.
	ElapsedSeconds float64 `json:"elapsed_s"`
	// Throughput is Count per second of ElapsedSeconds (events/s for observe-stream).
	Throughput float64 `json:"throughput_per_s"`
	// Latency of successful requests in µs (from the due time under a fixed rate).
	Latency Summary `json:"latency_us"`
	// ServiceTime, under a fixed rate only, is measured from the actual send.
	ServiceTime *Summary `json:"service_time_us,omitempty"`
	// Completion, for requests that go on after their answer (per_event: until the bridge
	// process has exited), is measured from the send to the end.
	Completion *Summary `json:"completion_us,omitempty"`
	// LatencyMeaning says what Latency measures in this mode.
	LatencyMeaning string `json:"latency_meaning"`
	// ExpectationsLearned is true when verdicts were checked for consistency only (a custom
	// policy or an external target), not against known answers.
	ExpectationsLearned bool `json:"expectations_learned,omitempty"`
	// Interrupted is true when the run was stopped early.
	Interrupted bool `json:"interrupted,omitempty"`
	// Watch is what the mode's Watch subscribers received, in a run with --watchers (present with
	// watchers 0 for a mode that ran without them).
	Watch *WatchResult `json:"watch,omitempty"`
}

// WatchResult is what the Watch subscribers of one mode received over the whole invocation.
type WatchResult struct {
	// Watchers is the number of subscribers connected during each phase of the mode.
	Watchers int `json:"watchers"`
	// Connections is the number of HTTP/2 connections they use (Watchers when each has its own).
	Connections int `json:"connections"`
	// AsConsole is set when they subscribed as the web console does (JSON over HTTP/1.1).
	AsConsole bool `json:"as_console,omitempty"`
	// FlushIntervalMs is the flush_interval_ms of their Watch requests (0: none).
	FlushIntervalMs uint32 `json:"flush_interval_ms,omitempty"`
	// Process is set when they ran in a child process (--watchers-process).
	Process bool `json:"process,omitempty"`
	// Filter is the --watch-filter of every Watch request ("" for everything).
	Filter string `json:"filter,omitempty"`
	// Items is what the mode's requests publish: "decisions" or "events" (observations).
	Items string `json:"items,omitempty"`
	// ExpectedPerWatcher is how many items each subscriber had to receive: every request answered
	// while it was subscribed whose item passes the filter.
	ExpectedPerWatcher uint64 `json:"expected_per_watcher"`
	// Received counts the distinct items of the mode's own requests received, over all
	// subscribers (items of failed requests included).
	Received uint64 `json:"received"`
	// Missing counts expected items a subscriber never received (dropped), over all subscribers.
	// Each is also an error.
	Missing uint64 `json:"missing"`
	// Duplicates counts items received twice by the same subscriber (errors).
	Duplicates uint64 `json:"duplicates"`
	// Wrong counts items that contradict their request: outside the filter, a wrong verdict, a
	// decision missing or unexpected (errors).
	Wrong uint64 `json:"wrong"`
	// EndedEarly counts streams that ended before ahp-bench closed them (errors); CutOff counts
	// those the server ended with resource_exhausted, the hub's cut-off of a slow subscriber (or of
	// every subscriber when its own queue overflowed).
	EndedEarly uint64 `json:"ended_early"`
	CutOff     uint64 `json:"cut_off"`
	// Other counts items received that were not the phase's own (ignored).
	Other uint64 `json:"other"`
	// Throughput is Received per second of the mode's measured time.
	Throughput float64 `json:"throughput_per_s"`
	// Delivery is the time from the server's publish time to receipt by a subscriber, in µs.
	Delivery Summary `json:"delivery_us"`
	// CatchUpMs is the longest wait after the load of a phase until every subscriber had every
	// expected item, in milliseconds (not part of the measured time).
	CatchUpMs float64 `json:"catch_up_ms"`
}

func newWatchResult(w *WatchStats, elapsed time.Duration) *WatchResult {
	return &WatchResult{
		Watchers: w.Watchers, Connections: w.Connections, AsConsole: w.AsConsole, FlushIntervalMs: w.FlushIntervalMs, Process: w.Process, ExpectedPerWatcher: w.Expected, Received: w.Received, Missing: w.Missing,
		Duplicates: w.Duplicates, Wrong: w.Wrong, EndedEarly: w.EndedEarly, CutOff: w.CutOff, Other: w.Other,
		Throughput: Throughput(w.Received, elapsed), Delivery: Summarize(&w.Delivery),
		CatchUpMs: math.Round(float64(w.CatchUp)/float64(time.Millisecond)*10) / 10,
	}
}

// NewResult turns a phase's stats into a Result.
func NewResult(mode, target string, load Load, payloadBytes int, st *Stats) Result {
	r := Result{
		Mode: mode, Target: target, Concurrency: load.Concurrency, Rate: load.Rate,
		PayloadBytes: payloadBytes, Count: st.Count, Errors: st.Errors, Accepted: st.Accepted,
		ElapsedSeconds: st.Elapsed.Seconds(), Throughput: Throughput(st.Count, st.Elapsed),
		Latency: Summarize(&st.Latency), Interrupted: st.Interrupted,
	}
	if len(st.ErrorKinds) > 0 {
		r.ErrorKinds = st.ErrorKinds
	}
	if load.Rate > 0 {
		s := Summarize(&st.Service)
		r.ServiceTime = &s
	}
	if st.Completion.Count() > 0 {
		c := Summarize(&st.Completion)
		r.Completion = &c
	}
	if st.Watch != nil {
		r.Watch = newWatchResult(st.Watch, st.Elapsed)
	}
	return r
}

// Throughput returns n per second of elapsed (0 when elapsed is not positive).
func Throughput(n uint64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return math.Round(float64(n)/elapsed.Seconds()*10) / 10
}

// Ratio returns a/b rounded to three decimals, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(a/b*1000) / 1000
}

// Report is the outcome of one ahp-bench invocation.
type Report struct {
	// Run is the requested mode.
	Run Result `json:"run"`
	// Baseline is the baseline mode, when one ran.
	Baseline *Result `json:"baseline,omitempty"`
	// P50Ratio is Run's p50 over Baseline's, when a baseline ran.
	P50Ratio float64 `json:"p50_ratio,omitempty"`
	// Rounds is how many alternating slices the run and the baseline were split into.
	Rounds int `json:"rounds"`
	// Audit is the check of the in-process server's audit log, when it was on.
	Audit *AuditCheck `json:"audit,omitempty"`
	// Machine describes where the numbers were measured.
	Machine Machine `json:"machine"`

	hists []*Histogram // latency of Run and Baseline, for WriteSVG
}

// Errors returns the errors of the run and the baseline together.
func (r *Report) Errors() uint64 {
	n := r.Run.Errors
	if r.Baseline != nil {
		n += r.Baseline.Errors
	}
	if r.Audit != nil && r.Audit.Problem != "" {
		n++
	}
	return n
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report as a table followed by notes.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tcount\terrors\tthroughput/s\tp50 µs\tp90 µs\tp99 µs\tp99.9 µs\tmax µs\t")
	results := []*Result{&r.Run}
	if r.Baseline != nil {
		results = append(results, r.Baseline)
	}
	for _, res := range results {
		l := res.Latency
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
			res.Mode, res.Count, res.Errors, res.Throughput, l.P50, l.P90, l.P99, l.P999, l.Max)
		if s := res.ServiceTime; s != nil {
			fmt.Fprintf(tw, "  service time\t\t\t\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", s.P50, s.P90, s.P99, s.P999, s.Max)
		}
		if c := res.Completion; c != nil {
			fmt.Fprintf(tw, "  until exit\t\t\t\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", c.P50, c.P90, c.P99, c.P999, c.Max)
		}
		if wr := res.Watch; wr != nil && wr.Watchers > 0 {
			// Items delivered, items dropped, delivery rate and delivery latency.
			d := wr.Delivery
			fmt.Fprintf(tw, "  Watch ×%d\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
				wr.Watchers, wr.Received, wr.Missing, wr.Throughput, d.P50, d.P90, d.P99, d.P999, d.Max)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Baseline != nil {
		fmt.Fprintf(&b, "\np50 ratio %s / %s: %.3f\n", r.Run.Mode, r.Baseline.Mode, r.P50Ratio)
	}
	fmt.Fprintln(&b)
	for _, res := range results {
		fmt.Fprintf(&b, "%s: %s; %s", res.Mode, res.Target, res.LatencyMeaning)
		if res.Accepted != nil {
			fmt.Fprintf(&b, "; server accepted %d of %d events", *res.Accepted, res.Count)
		}
		if res.ExpectationsLearned {
			b.WriteString("; verdicts checked for consistency (learned from the first answers)")
		}
		if res.Interrupted {
			b.WriteString("; INTERRUPTED")
		}
		b.WriteString(".\n")
		if wr := res.Watch; wr != nil && wr.Watchers > 0 {
			writeWatchNote(&b, wr)
		}
		kinds := make([]string, 0, len(res.ErrorKinds))
		for k := range res.ErrorKinds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(&b, "  error ×%d: %s\n", res.ErrorKinds[k], k)
		}
	}
	if a := r.Audit; a != nil {
		where := a.Path
		if a.Temporary {
			where = "(temporary file)"
		}
		fmt.Fprintf(&b, "audit log %s, fsync %s: %d records this run", where, a.Fsync, a.Records)
		if a.ChainOK {
			b.WriteString(", hash chain verified")
		}
		switch {
		case a.Problem != "":
			fmt.Fprintf(&b, "; ERROR: %s", a.Problem)
		case a.Counted:
			fmt.Fprintf(&b, ", one for each of the %d decisions and accepted observations", a.Expected)
		default:
			b.WriteString(" (not compared: some requests failed or were cut off)")
		}
		b.WriteString(".\n")
	}
	m := r.Machine
	fmt.Fprintf(&b, "machine: %d CPUs (%s), GOMAXPROCS %d, load average %s → %s, %s %s/%s; %d round(s)\n",
		m.NumCPU, m.CPUModel, m.GOMAXPROCS, m.LoadBefore, m.LoadAfter, m.GoVersion, m.OS, m.Arch, r.Rounds)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeWatchNote explains the Watch row of a result.
func writeWatchNote(b *strings.Builder, wr *WatchResult) {
	filter := "everything"
	if wr.Filter != "" {
		filter = wr.Filter
	}
	catchUp := fmt.Sprintf("the slowest subscriber had everything %.1f ms after the load of a phase", wr.CatchUpMs)
	if wr.Missing > 0 || wr.EndedEarly > 0 {
		catchUp = fmt.Sprintf("waited up to %.1f ms after the load of a phase for the subscribers", wr.CatchUpMs)
	}
	conns := "own HTTP/2 connection each"
	switch {
	case wr.Connections == 1 && wr.Watchers > 1:
		conns = "all on one HTTP/2 connection"
	case wr.Connections > 1 && wr.Connections < wr.Watchers:
		conns = fmt.Sprintf("sharing %d HTTP/2 connections", wr.Connections)
	}
	if wr.AsConsole {
		conns = "as the web console: Connect JSON over HTTP/1.1, own connection each"
	}
	if wr.FlushIntervalMs > 0 {
		conns += fmt.Sprintf(", flush interval %d ms", wr.FlushIntervalMs)
	}
	if wr.Process {
		conns += ", in a child process"
	}
	fmt.Fprintf(b, "  Watch: %d subscribers (%s, filter %s), connected before each phase and closed after it, "+
		"had to receive each of the %d %s answered while they were subscribed: %d received, %d missing (dropped), "+
		"%d duplicated, %d wrong, %d streams ended early (%d cut off by the server as too slow); %d items from outside the phases ignored; "+
		"%s; the Watch row's count is items received, errors items missing, latency from the server's publish time to receipt.\n",
		wr.Watchers, conns, filter, wr.ExpectedPerWatcher, wr.Items, wr.Received, wr.Missing, wr.Duplicates, wr.Wrong,
		wr.EndedEarly, wr.CutOff, wr.Other, catchUp)
}
