package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ahp-gateway/ahp/internal/bench"
)

func TestThroughputAndRatio(t *testing.T) {
	t.Parallel()
	if got := bench.Throughput(1000, 2*time.Second); got != 500 {
		t.Errorf("Throughput(1000, 2s) = %v", got)
	}
	if got := bench.Throughput(1, 3*time.Second); got != 0.3 {
		t.Errorf("Throughput(1, 3s) = %v, want 0.3 (one decimal)", got)
	}
	if got := bench.Throughput(5, 0); got != 0 {
		t.Errorf("Throughput over no time = %v", got)
	}
	if got := bench.Ratio(125, 100); got != 1.25 {
		t.Errorf("Ratio(125, 100) = %v", got)
	}
	if got := bench.Ratio(2, 3); got != 0.667 {
		t.Errorf("Ratio(2, 3) = %v, want 0.667", got)
	}
	if got := bench.Ratio(1, 0); got != 0 {
		t.Errorf("Ratio over 0 = %v", got)
	}
}

func TestNewResult(t *testing.T) {
	t.Parallel()
	st := &bench.Stats{Count: 4, Elapsed: 2 * time.Second}
	for _, us := range []int{100, 200, 300} {
		st.Latency.Record(time.Duration(us) * time.Microsecond)
		st.Service.Record(time.Duration(us/2) * time.Microsecond)
	}
	st.AddErrors("wrong verdict", 1)
	load := bench.Load{Concurrency: 3, Rate: 50}
	r := bench.NewResult("intercept", "somewhere", load, 20, st)
	if r.Count != 4 {
		t.Errorf("result: r.Count = %v, want 4 in %+v", r.Count, r)
	} else if r.Errors != 1 {
		t.Errorf("result: r.Errors = %v, want 1 in %+v", r.Errors, r)
	} else if r.Throughput != 2 {
		t.Errorf("result: r.Throughput = %v, want 2 in %+v", r.Throughput, r)
	} else if r.Concurrency != 3 {
		t.Errorf("result: r.Concurrency = %v, want 3 in %+v", r.Concurrency, r)
	} else if r.Rate != 50 {
		t.Errorf("result: r.Rate = %v, want 50 in %+v", r.Rate, r)
	} else if r.PayloadBytes != 20 {
		t.Errorf("result: r.PayloadBytes = %v, want 20 in %+v", r.PayloadBytes, r)
	}
	want := bench.Summary{Min: 100, P50: 200, P90: 300, P99: 300, P999: 300, Max: 300, Mean: 200}
	if r.Latency != want {
		t.Errorf("latency %+v, want %+v", r.Latency, want)
	}
	if r.ServiceTime == nil {
		t.Errorf("service time %+v: r.ServiceTime is nil; want it under a fixed rate, p50 100", r.ServiceTime)
	} else if r.ServiceTime.P50 != 100 {
		t.Errorf("service time %+v: r.ServiceTime.P50 = %v, want 100; want it under a fixed rate, p50 100", r.ServiceTime, r.ServiceTime.P50)
	}
	if closed := bench.NewResult("intercept", "", bench.Load{Concurrency: 1}, 0, st); closed.ServiceTime != nil {
		t.Error("closed loop results carry no separate service time")
	}
}

func sampleReport() *bench.Report {
	accepted := uint64(10)
	run := bench.Result{
		Mode: "observe-stream", Target: "in-process", Concurrency: 2, Count: 10, Accepted: &accepted,
		ElapsedSeconds: 1, Throughput: 10, Latency: bench.Summary{P50: 120, P90: 150, P99: 300, P999: 900, Max: 1000},
		LatencyMeaning: "latency of one Send",
	}
	base := run
	base.Mode, base.Latency.P50 = "noop:observe-stream", 100
	base.Errors, base.ErrorKinds = 2, map[string]uint64{"ObserveStream: accepted count differs from events sent": 2}
	return &bench.Report{Run: run, Baseline: &base, P50Ratio: 1.2, Rounds: 3, Machine: bench.Machine{NumCPU: 2, CPUModel: "Test CPU"}}
}

func TestReportJSONHasEveryField(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := sampleReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	run := got["run"].(map[string]any)
	for _, k := range []string{"mode", "target", "concurrency", "payload_bytes", "count", "errors", "accepted", "elapsed_s", "throughput_per_s", "latency_us", "latency_meaning"} {
		if _, ok := run[k]; !ok {
			t.Errorf("run has no %q: %s", k, buf.String())
		}
	}
	lat := run["latency_us"].(map[string]any)
	for _, k := range []string{"min", "p50", "p90", "p99", "p99_9", "max", "mean"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_us has no %q", k)
		}
	}
	if got["p50_ratio"] != 1.2 {
		t.Errorf("report: got[\"p50_ratio\"] = %v, want 1.2 in %s", got["p50_ratio"], buf.String())
	} else if got["baseline"] == nil {
		t.Errorf("report: got[\"baseline\"] is nil in %s", buf.String())
	} else if got["rounds"] != 3.0 {
		t.Errorf("report: got[\"rounds\"] = %v, want 3.0 in %s", got["rounds"], buf.String())
	} else if got["machine"].(map[string]any)["cpu_model"] != "Test CPU" {
		t.Errorf("report: got[\"machine\"].(map[string]any)[\"cpu_model\"] = %v, want \"Test CPU\" in %s", got["machine"].(map[string]any)["cpu_model"], buf.String())
	}
	if errs := got["baseline"].(map[string]any)["error_kinds"]; errs == nil {
		t.Error("baseline error kinds missing")
	}
}

func TestReportText(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := sampleReport()
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"throughput/s", "p50 µs", "p99.9 µs", "observe-stream", "noop:observe-stream",
		"p50 ratio observe-stream / noop:observe-stream: 1.200", "server accepted 10 of 10 events",
		"error ×2: ObserveStream: accepted count differs", "2 CPUs (Test CPU)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if r.Errors() != 2 {
		t.Errorf("Errors() = %d, want 2", r.Errors())
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bench.Mode{
		"intercept":         {Transport: "intercept"},
		"observe-stream":    {Transport: "observe-stream"},
		"noop":              {Transport: "intercept", Noop: true},
		"noop:bridge-stdio": {Transport: "bridge-stdio", Noop: true},
	} {
		got, err := bench.ParseMode(in)
		if err != nil {
			t.Errorf("ParseMode(%q): %v", in, err)
		} else if got != want {
			t.Errorf("ParseMode(%q): got = %v, want %v", in, got, want)
		}
	}
	for _, bad := range []string{"", "Intercept", "noop:", "noop:noop", "bridge"} {
		if _, err := bench.ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) accepted", bad)
		}
	}
	if s := (bench.Mode{Transport: "intercept", Noop: true}).String(); s != "noop:intercept" {
		t.Errorf("String = %q", s)
	}
}

func TestCheckLoopback(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"http://127.0.0.1:8080", "http://127.0.0.2:1", "https://localhost:8443", "http://[::1]:8080", "http://LOCALHOST:80/"} {
		if err := bench.CheckLoopback(ok); err != nil {
			t.Errorf("CheckLoopback(%q): %v", ok, err)
		}
	}
	for _, remote := range []string{"http://10.0.0.1:8080", "http://example.com:8080", "http://0.0.0.0:8080", "http://[::]:80", "http://127.0.0.1.nip.io:80"} {
		if err := bench.CheckLoopback(remote); !errors.Is(err, bench.ErrNotLoopback) {
			t.Errorf("CheckLoopback(%q) = %v, want ErrNotLoopback", remote, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://127.0.0.1", "http://user:pw@127.0.0.1:1", "http://127.0.0.1:1/path", "http://127.0.0.1:1?q=1", "::"} {
		if err := bench.CheckLoopback(bad); err == nil {
			t.Errorf("CheckLoopback(%q) accepted", bad)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := bench.Config{Mode: "intercept", Baseline: "noop:intercept", Target: "http://127.0.0.1:9"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	watch := bench.Config{Mode: "intercept", Baseline: "intercept", Watchers: 100, BaselineWatchers: 0, WatchFilter: "decisions,session=0"}
	if err := watch.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]bench.Config{
		"bad mode":             {Mode: "nope"},
		"bad baseline":         {Mode: "intercept", Baseline: "nope"},
		"remote target":        {Mode: "intercept", Target: "http://192.0.2.1:80"},
		"policy with target":   {Mode: "intercept", Target: "http://127.0.0.1:9", PolicyFile: "p.yaml"},
		"embedded with target": {Mode: "bridge-stdio", Target: "http://127.0.0.1:9", BridgeEmbedded: true},
		"process with target":  {Mode: "intercept", Target: "http://127.0.0.1:9", ServerProcess: true},
		"server bin, in-proc":  {Mode: "intercept", ServerBin: "/bin/true"},
		"negative rate":        {Mode: "intercept", Load: bench.Load{Rate: -1}},
		"huge payload":         {Mode: "intercept", PayloadBytes: bench.MaxPayloadBytes + 1},
		"bad protocol":         {Mode: "intercept", Protocol: "soap"},
		"more rounds than req": {Mode: "intercept", Rounds: 5, Load: bench.Load{Requests: 4}},
		"watchers on no-op":    {Mode: "noop:intercept", Watchers: 1},
		"watchers on embedded": {Mode: "bridge-stdio", BridgeEmbedded: true, Watchers: 1},
		"too many watchers":    {Mode: "intercept", Watchers: bench.MaxWatchers + 1},
		"baseline watchers":    {Mode: "intercept", BaselineWatchers: 3},
		"no-op base watchers":  {Mode: "intercept", Baseline: "noop:intercept", BaselineWatchers: 3},
		"filter, no watchers":  {Mode: "intercept", WatchFilter: "decisions"},
		"bad filter":           {Mode: "intercept", Watchers: 1, WatchFilter: "tool=spoon"},
		"flush, not console":   {Mode: "intercept", Watchers: 1, WatchFlushInterval: time.Millisecond},
		"flush over 1s":        {Mode: "intercept", Watchers: 1, WatchAsConsole: true, WatchFlushInterval: 2 * time.Second},
		"process, no watchers": {Mode: "intercept", WatchersProcess: true},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
