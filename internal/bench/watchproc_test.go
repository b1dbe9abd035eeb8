package bench

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// The test binary is also the child of --watchers-process when watchersChildEnv is set.
const watchersChildEnv = "AHP_BENCH_TEST_WATCHERS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(watchersChildEnv) == "1" {
		if err := ServeWatchers(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// watchersChild is the command line of a child process for inChildProcess.
func watchersChild(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"/usr/bin/env", watchersChildEnv + "=1", exe}
}

// Watchers in a child process subscribe as the console's page does, check every item there and
// report back what they received; an item that was answered but never sent is missing, and a
// wrong verdict is an error, as with watchers in the process.
func TestWatchersInChildProcess(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(0)
	base := uint64(6) << 40
	var items []*ahpv1.WatchResponse
	for seq := range uint64(20) {
		verdict := ahpv1.Verdict_VERDICT_ALLOW + ahpv1.Verdict(seq%2)
		if seq == 7 {
			verdict = ahpv1.Verdict_VERDICT_ALLOW // seq 7 runs the denied command
		}
		items = append(items, &ahpv1.WatchResponse{Event: wl.ToolBefore(0, base+seq), Decision: &ahpv1.Decision{Verdict: verdict}, Time: time.Now().UTC().Format(time.RFC3339Nano)})
	}
	intervals := make(chan uint32, 2)
	mux := http.NewServeMux()
	mux.Handle(ahpv1connect.NewObservationServiceHandler(fakeWatch{items: items, intervals: intervals}))
	url := testkit.ServeLoopback(t, &http.Server{Handler: mux})
	f, _ := parseWatchFilter("")
	g := newWatchGroup(2, 0, url, nil, f, wl, 1, true, FixedExpectation(VerdictAllow, VerdictDeny), 5*time.Second)
	g.subscribeAsConsole(url, 0)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if err := g.inChildProcess(ctx, watchersChild(t), "", false); err != nil {
		t.Fatal(err)
	}
	defer g.close()
	p := g.begin(base, 1)
	for seq := range uint64(21) { // 20 was answered but never sent
		p.answer(0, seq)
	}
	st := &Stats{}
	p.finish(st)
	w := st.Watch
	if w.Watchers != 2 || !w.AsConsole || !w.Process || w.FlushIntervalMs != 250 || w.Expected != 21 || w.Received != 40 || w.Missing != 2 || w.Wrong != 2 || w.Delivery.Count() != 40 {
		t.Errorf("watch stats %+v: want 2 console watchers in a child process with a 250 ms flush interval, 21 expected, 40 received, 2 missing, 2 wrong, 40 delivery times", *w)
	}
	var missing, wrong uint64
	for msg, n := range st.ErrorKinds {
		switch {
		case strings.Contains(msg, "never received"):
			missing += n
		case strings.Contains(msg, "decision differs"):
			wrong += n
		}
	}
	if missing != 2 || wrong != 2 || st.Errors != 4 {
		t.Errorf("errors %d: %v; want 2 missing and 2 wrong verdicts", st.Errors, st.ErrorKinds)
	}
	for range 2 {
		if got := testkit.Receive(t, intervals, "a watcher did not subscribe"); got != uint32(ConsoleWatchFlushInterval/time.Millisecond) {
			t.Errorf("flush_interval_ms %d, want %v", got, ConsoleWatchFlushInterval)
		}
	}
	// A second phase on the same child.
	p = g.begin(base+100, 1)
	st = &Stats{}
	p.finish(st)
	if st.Watch.Watchers != 2 || st.Watch.Expected != 0 {
		t.Errorf("second phase: %+v", *st.Watch)
	}
}

// A child that cannot be started is an error of the run, not a hang.
func TestWatchersChildProcessThatFails(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(0)
	f, _ := parseWatchFilter("")
	g := newWatchGroup(1, 0, "http://127.0.0.1:1", nil, f, wl, 1, true, FixedExpectation(VerdictAllow, VerdictDeny), time.Second)
	err := g.inChildProcess(context.Background(), []string{"/bin/false"}, "", false)
	if err == nil || !strings.Contains(err.Error(), "watchers' process") {
		t.Fatalf("inChildProcess with /bin/false: %v, want an error naming the watchers' process", err)
	}
}
