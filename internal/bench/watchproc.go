package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// Watchers in a child process (Config.WatchersProcess). Deployed, the consoles or watch clients
// run on other machines; run in the load tool they share its Go runtime — its scheduler, its
// garbage collector, the goroutines that drive the load — and what they cost is charged to the
// load. In a process of their own they cost the machine what their own work costs: on a machine
// with few cores they still compete for the CPUs with the server and the load, as a browser on the
// same machine would.
//
// The child is "ahp-bench watchers" (ServeWatchers). The two talk in JSON lines over the child's
// standard input and output: the parent sends a setup, then per phase a begin (the child
// subscribes every watcher and answers once they are subscribed) and a finish carrying the bit set
// of the answered items that pass the filter (the child waits for its watchers to hold them all,
// ends the streams, and answers with what they received and what went wrong). The checks are the
// in-process watchers' own (phaseWatcher.take): every item once, in the filter, with the right
// verdict. A learned expectation is learned in the child from what the watchers receive, and the
// parent compares it with its own at every finish.

// watchSetup describes the watchers of a group to the child.
type watchSetup struct {
	URL         string
	Watchers    int
	Connections int
	Protocol    string
	NoGzip      bool
	Request     json.RawMessage // protojson WatchRequest
	Decisions   bool
	Prefix      string
	Timeout     time.Duration
	AsConsole   bool
	// Verdicts is the expectation of a fixed one; nil for a learned one.
	Verdicts []Verdict
}

// watchMessage is one line from the parent.
type watchMessage struct {
	Setup  *watchSetup  `json:",omitempty"`
	Begin  *uint64      `json:",omitempty"` // the phase's base
	Finish *watchFinish `json:",omitempty"`
}

type watchFinish struct {
	Want        []uint64
	Expected    uint64
	Interrupted bool
}

// watchReply is one line from the child.
type watchReply struct {
	Error  string           `json:",omitempty"` // the child could not do what it was asked
	Result *watchResultWire `json:",omitempty"`
}

type watchResultWire struct {
	Stats    WatchStats // without Delivery
	Delivery histogramWire
	Errors   []errorCount
	Verdicts [2]Verdict // what the child's expectation holds
}

// histogramWire is a Histogram's state.
type histogramWire struct {
	Cells      [bucketCount][]uint64
	Count, Sum uint64
	Min, Max   uint64
}

func wireHistogram(h *Histogram) histogramWire {
	return histogramWire{Cells: h.cells, Count: h.count, Sum: h.sumNanos, Min: h.min, Max: h.max}
}

func (w histogramWire) histogram() (Histogram, error) {
	h := Histogram{cells: w.Cells, count: w.Count, sumNanos: w.Sum, min: w.Min, max: w.Max}
	for b, cells := range h.cells {
		if n := subBucketHalf; cells != nil && len(cells) != n && !(b == 0 && len(cells) == subBucketCount) {
			return Histogram{}, fmt.Errorf("delivery histogram: bucket %d has %d cells", b, len(cells))
		}
	}
	return h, nil
}

// watcherProcess is the parent's end of a child running a group's watchers.
type watcherProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *json.Encoder
	dec    *json.Decoder
	mu     sync.Mutex
	failed error // the first failure; later calls report it at once
}

// maxWatchLine bounds one line from the child (a result with a full histogram is a few KB).
const maxWatchLine = 16 << 20

// inChildProcess moves the group's watchers into a child process started with command (empty:
// this executable with "watchers"); protocol and noGzip are the clients' (clientOptions). It
// returns once the child has taken the setup.
func (g *watchGroup) inChildProcess(ctx context.Context, command []string, protocol string, noGzip bool) error {
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--watchers-process: %w", err)
		}
		command = []string{exe, "watchers"}
	}
	req, err := protojson.Marshal(g.req)
	if err != nil {
		return err
	}
	setup := &watchSetup{
		URL: g.url, Watchers: len(g.clients), Connections: len(g.conns), Protocol: protocol, NoGzip: noGzip,
		Request: req, Decisions: g.decisions, Prefix: g.prefix, Timeout: g.timeout, AsConsole: g.asConsole,
	}
	if !g.expect.Learned() {
		setup.Verdicts = []Verdict{Verdict(g.expect.want[0].Load()), Verdict(g.expect.want[1].Load())}
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("--watchers-process: starting %s: %w", command[0], err)
	}
	dec := json.NewDecoder(bufio.NewReader(io.LimitReader(stdout, 1<<40)))
	wp := &watcherProcess{cmd: cmd, stdin: stdin, enc: json.NewEncoder(stdin), dec: dec}
	if _, err := wp.call(watchMessage{Setup: setup}); err != nil {
		wp.close()
		return fmt.Errorf("--watchers-process: %w", err)
	}
	g.remote = wp
	g.clients, g.conns = nil, nil // the child's now
	return nil
}

// call sends m and reads the answer.
func (wp *watcherProcess) call(m watchMessage) (*watchReply, error) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.failed != nil {
		return nil, wp.failed
	}
	var r watchReply
	err := wp.enc.Encode(m)
	if err == nil {
		err = wp.dec.Decode(&r)
	}
	if err == nil && r.Error != "" {
		err = errors.New(r.Error)
	}
	if err != nil {
		wp.failed = fmt.Errorf("the watchers' process: %w", err)
		return nil, wp.failed
	}
	return &r, nil
}

// begin has the child subscribe its watchers for the phase at base; a failure is reported by
// finish.
func (wp *watcherProcess) begin(base uint64) { _, _ = wp.call(watchMessage{Begin: &base}) }

// finish has the child check its watchers against want and returns what they received.
func (wp *watcherProcess) finish(want []uint64, expected uint64, interrupted bool, expect *Expectation) (*WatchStats, []errorCount) {
	r, err := wp.call(watchMessage{Finish: &watchFinish{Want: want, Expected: expected, Interrupted: interrupted}})
	if err == nil && r.Result == nil {
		err = errors.New("the watchers' process answered without a result")
	}
	if err != nil {
		return &WatchStats{Expected: expected, Process: true}, []errorCount{{"Watch: " + err.Error(), 1}}
	}
	ws := r.Result.Stats
	ws.Process = true
	errs := r.Result.Errors
	if ws.Delivery, err = r.Result.Delivery.histogram(); err != nil {
		errs = append(errs, errorCount{"Watch: the watchers' process: " + err.Error(), 1})
	}
	// A learned expectation: the child learned from the items, the parent from the answers.
	for i, got := range r.Result.Verdicts {
		if got == VerdictUnknown {
			continue
		}
		if err := expect.Check(uint64(i), got); err != nil {
			errs = append(errs, errorCount{"Watch: decision differs from the expected answer: " + err.Error(), 1})
		}
	}
	return &ws, errs
}

// close ends the child: closing its input makes it end its streams and exit.
func (wp *watcherProcess) close() {
	_ = wp.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = wp.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = wp.cmd.Process.Kill()
		<-done
	}
}

// close ends the group's child process, if it has one.
func (g *watchGroup) close() {
	if g.remote != nil {
		g.remote.close()
	}
}

// ServeWatchers is the child of Config.WatchersProcess ("ahp-bench watchers"): it reads the
// parent's messages from in and writes its replies to out until in ends.
func ServeWatchers(ctx context.Context, in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	var g *watchGroup
	var p *watchPhase
	defer func() {
		if p != nil {
			p.cancel()
			p.wg.Wait()
		}
	}()
	for {
		var m watchMessage
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("watchers: reading the parent's message: %w", err)
		}
		var r watchReply
		switch {
		case m.Setup != nil && g == nil:
			var err error
			if g, err = watchGroupFrom(m.Setup); err != nil {
				r.Error = err.Error()
			}
		case m.Begin != nil && g != nil && p == nil:
			p = g.begin(*m.Begin, 1)
		case m.Finish != nil && p != nil:
			ws, errs := p.check(m.Finish.Want, m.Finish.Expected, m.Finish.Interrupted)
			res := &watchResultWire{Stats: *ws, Delivery: wireHistogram(&ws.Delivery), Errors: errs}
			res.Stats.Delivery = Histogram{}
			res.Verdicts = [2]Verdict{Verdict(g.expect.want[0].Load()), Verdict(g.expect.want[1].Load())}
			r.Result = res
			p = nil
		default:
			r.Error = "watchers: unexpected message (want setup, then begin and finish per phase)"
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// watchGroupFrom makes the watchers a setup describes.
func watchGroupFrom(s *watchSetup) (*watchGroup, error) {
	if s.Watchers < 1 || s.Watchers > MaxWatchers {
		return nil, fmt.Errorf("watchers: %d watchers, want 1 to %d", s.Watchers, MaxWatchers)
	}
	req := &ahpv1.WatchRequest{}
	if err := protojson.Unmarshal(s.Request, req); err != nil {
		return nil, fmt.Errorf("watchers: the Watch request: %w", err)
	}
	opts, err := clientOptions(s.Protocol, s.NoGzip)
	if err != nil {
		return nil, fmt.Errorf("watchers: %w", err)
	}
	expect := LearnedExpectation()
	if len(s.Verdicts) == 2 {
		expect = FixedExpectation(s.Verdicts[0], s.Verdicts[1])
	}
	g := &watchGroup{req: req, filter: hubFilter(req), decisions: s.Decisions, prefix: s.Prefix, expect: expect, timeout: s.Timeout, url: s.URL}
	g.connect(s.Watchers, s.Connections, s.URL, opts)
	if s.AsConsole {
		interval := time.Duration(req.GetFlushIntervalMs()) * time.Millisecond
		if interval == 0 {
			interval = -1 // none, as the parent asked
		}
		g.subscribeAsConsole(s.URL, interval)
	}
	return g, nil
}
