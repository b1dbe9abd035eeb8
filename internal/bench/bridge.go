package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// bridgeSetup is how the bridge processes of one system are started.
type bridgeSetup struct {
	bin string
	// upstream is the ahp-server URL, or "" for embedded mode with policyFile.
	upstream   string
	policyFile string
	// concurrency is passed as the bridge's --concurrency (messages handled at once per stream).
	concurrency int
	// metricsAddr, when set, is the bridge's --metrics-addr (its Prometheus /metrics, runtime
	// series included, for the server-side cost of ahp-bench compare).
	metricsAddr string
}

func (b bridgeSetup) args(extra ...string) []string {
	var args []string
	if b.upstream != "" {
		args = append(args, "--upstream", b.upstream, "--failure-policy", "fail-closed")
	} else {
		args = append(args, "--policy-poll", "0")
		if b.policyFile != "" {
			args = append(args, "--policy", b.policyFile)
		}
	}
	if b.metricsAddr != "" {
		args = append(args, "--metrics-addr", b.metricsAddr)
	}
	return append(args, extra...)
}

// hooksAnswer is the part of a hooks/intercept answer the benchmark checks.
type hooksAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Effects []struct {
			Type string `json:"type"`
		} `json:"effects"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseHooksAnswer reads one answer line and returns its id.
func parseHooksAnswer(line []byte) (hooksAnswer, string, error) {
	var a hooksAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		return a, "", fmt.Errorf("unreadable answer from the bridge: %v", err)
	}
	var id string
	if err := json.Unmarshal(a.ID, &id); err != nil {
		return a, "", errors.New("answer from the bridge without a string id")
	}
	return a, id, nil
}

// checkHooksAnswer checks the answer to request seq: a result, not synthetic, whose effects give
// the expected verdict (none: allow; one deny: deny).
func checkHooksAnswer(a hooksAnswer, seq uint64, expect *Expectation) error {
	if e := a.Error; e != nil {
		return fmt.Errorf("bridge answered JSON-RPC error %d: %s", e.Code, e.Message)
	}
	if a.Result == nil {
		return errors.New("bridge answer has neither result nor error")
	}
	if raw, ok := a.Result.Extensions["dev.ahpgateway"]; ok {
		var ns struct {
			Synthetic bool   `json:"synthetic"`
			Failure   string `json:"failure"`
		}
		if json.Unmarshal(raw, &ns) == nil && ns.Synthetic {
			return fmt.Errorf("synthetic answer from the bridge (upstream failure %q)", ns.Failure)
		}
	}
	v := VerdictOther
	switch {
	case len(a.Result.Effects) == 0:
		v = VerdictAllow
	case len(a.Result.Effects) == 1 && a.Result.Effects[0].Type == "deny":
		v = VerdictDeny
	}
	return expect.Check(seq, v)
}

// tailBuffer keeps the last bytes written to it: a child's stderr, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return tail(t.buf, tailBytes)
}

// stopProcess waits up to grace for cmd to exit on its own, then kills it.
func stopProcess(cmd *exec.Cmd, exited <-chan error, grace time.Duration) error {
	select {
	case err := <-exited:
		return err
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("did not exit within %v; killed", grace)
	}
}

// stdioDriver runs one persistent bridge process and writes every request to its stdin as one
// NDJSON line; a reader goroutine hands each answer line to the worker waiting for its id.
type stdioDriver struct {
	wl      *Workload
	expect  *Expectation
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	writeMu sync.Mutex
	lines   [][]byte // per worker, reused
	pending *correlator[hooksAnswer]
	stderr  *tailBuffer
	read    chan struct{} // closed when the reader is done
	exited  chan error
}

func newStdioDriver(setup bridgeSetup, wl *Workload, expect *Expectation, concurrency int) (*stdioDriver, error) {
	cmd := exec.Command(setup.bin, setup.args("--log-level", "warn", "--concurrency", strconv.Itoa(min(max(setup.concurrency, 1), 1024)))...)
	d := &stdioDriver{
		wl: wl, expect: expect, cmd: cmd, lines: make([][]byte, concurrency),
		pending: newCorrelator[hooksAnswer](), stderr: &tailBuffer{},
		read: make(chan struct{}), exited: make(chan error, 1),
	}
	cmd.Stderr = d.stderr
	var err error
	if d.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBridgeUnavailable, err)
	}
	go d.readAnswers(stdout)
	go func() {
		<-d.read
		d.exited <- cmd.Wait()
	}()
	return d, nil
}

func (d *stdioDriver) readAnswers(stdout io.Reader) {
	defer close(d.read)
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			a, id, perr := parseHooksAnswer(line)
			if perr == nil {
				d.pending.deliver(id, a)
			}
		}
		if err != nil {
			msg := "ahp-jsonrpc-bridge closed its stdout"
			if s := d.stderr.String(); s != "" {
				msg += "; its stderr ends with: " + s
			}
			d.pending.fail(errors.New(msg))
			return
		}
	}
}

func (d *stdioDriver) op(ctx context.Context, w int, seq uint64) error {
	line := d.wl.AppendHooksIntercept(d.lines[w][:0], w, seq)
	line = append(line, '\n')
	d.lines[w] = line
	id := d.wl.EventID(seq)
	wait, err := d.pending.expect(id)
	if err != nil {
		return err
	}
	d.writeMu.Lock()
	// A bridge that stops reading would block the write, and every worker behind it, for good:
	// the request's deadline bounds it. A cut-off write leaves half a line on the pipe, so the
	// stream is given up after any failed write.
	if dl, ok := ctx.Deadline(); ok {
		if f, ok := d.stdin.(interface{ SetWriteDeadline(time.Time) error }); ok {
			_ = f.SetWriteDeadline(dl)
		}
	}
	_, err = d.stdin.Write(line)
	if err != nil {
		err = fmt.Errorf("writing to the bridge's stdin: %w", err)
		d.pending.fail(err)
		_ = d.stdin.Close()
	}
	d.writeMu.Unlock()
	if err != nil {
		return err
	}
	a, err := wait(ctx)
	if err != nil {
		d.pending.forget(id)
		return err
	}
	return checkHooksAnswer(a, seq, d.expect)
}

func (d *stdioDriver) endPhase(context.Context, *Stats) {}

func (d *stdioDriver) close() error {
	d.writeMu.Lock()
	_ = d.stdin.Close()
	d.writeMu.Unlock()
	if err := stopProcess(d.cmd, d.exited, 10*time.Second); err != nil {
		return fmt.Errorf("ahp-jsonrpc-bridge, after its input ended: %v; stderr: %s", err, d.stderr.String())
	}
	return nil
}

// onceDriver starts one `ahp-jsonrpc-bridge --once` process per request (the Agent Hooks
// per_event lifecycle): the request goes to its stdin, the answer comes from its stdout, and the
// process must then exit with status 0 and nothing more on stdout. Latency runs to the answer
// line (start-and-answer); the time until the process has exited is reported as completion.
type onceDriver struct {
	setup  bridgeSetup
	wl     *Workload
	expect *Expectation
}

var _ answerTimer = (*onceDriver)(nil)

func (d *onceDriver) op(ctx context.Context, w int, seq uint64) error {
	_, err := d.timedOp(ctx, w, seq)
	return err
}

func (d *onceDriver) timedOp(ctx context.Context, w int, seq uint64) (time.Time, error) {
	line := append(d.wl.AppendHooksIntercept(nil, w, seq), '\n')
	cmd := exec.CommandContext(ctx, d.setup.bin, d.setup.args("--once")...)
	cmd.Stdin = bytes.NewReader(line)
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return time.Time{}, err
	}
	if err := cmd.Start(); err != nil {
		return time.Time{}, fmt.Errorf("%w: %v", ErrBridgeUnavailable, err)
	}
	r := bufio.NewReader(stdout)
	answer, readErr := r.ReadBytes('\n')
	answered := time.Now()
	rest, _ := io.ReadAll(r) // until the process closes stdout
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return time.Time{}, ctx.Err()
	case waitErr != nil:
		return time.Time{}, fmt.Errorf("ahp-jsonrpc-bridge --once: %v; stderr: %s", waitErr, stderr.String())
	case readErr != nil:
		return time.Time{}, fmt.Errorf("ahp-jsonrpc-bridge --once wrote no complete answer line (%v); stderr: %s", readErr, stderr.String())
	case len(bytes.TrimSpace(rest)) > 0:
		return time.Time{}, errors.New("ahp-jsonrpc-bridge --once wrote more than one answer")
	}
	a, id, err := parseHooksAnswer(answer)
	if err != nil {
		return time.Time{}, err
	}
	if id != d.wl.EventID(seq) {
		return time.Time{}, errors.New("ahp-jsonrpc-bridge --once answered another id")
	}
	return answered, checkHooksAnswer(a, seq, d.expect)
}

func (d *onceDriver) endPhase(context.Context, *Stats) {}
func (d *onceDriver) close() error                     { return nil }

// httpDriver runs one bridge process serving HTTP on 127.0.0.1 and POSTs every request to its
// Hooks path, keeping a connection per worker alive (HTTP/1.1, as Hooks harnesses post).
type httpDriver struct {
	wl     *Workload
	expect *Expectation
	url    string
	client *http.Client
	cmd    *exec.Cmd
	stderr *tailBuffer
	exited chan error
}

func newHTTPDriver(setup bridgeSetup, wl *Workload, expect *Expectation, concurrency int) (*httpDriver, error) {
	cmd := exec.Command(setup.bin, setup.args("--http", "127.0.0.1:0", "--log-format", "json", "--log-level", "info")...)
	logs, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	d := &httpDriver{wl: wl, expect: expect, cmd: cmd, stderr: &tailBuffer{}, exited: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBridgeUnavailable, err)
	}
	// The bridge logs the address it listens on; read it from the JSON log, then keep draining.
	addrc := make(chan string, 1)
	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		sc := bufio.NewScanner(logs)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			_, _ = d.stderr.Write(append(sc.Bytes(), '\n'))
			var rec struct{ Msg, Transport, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" && rec.Transport == "http" {
				select {
				case addrc <- rec.Addr:
				default:
				}
			}
		}
		_, _ = io.Copy(d.stderr, logs)
	}()
	go func() {
		<-logsDone
		d.exited <- cmd.Wait()
	}()
	select {
	case addr := <-addrc:
		d.url = "http://" + addr + "/hooks"
	case err := <-d.exited:
		return nil, fmt.Errorf("ahp-jsonrpc-bridge --http exited before listening (%v); stderr: %s", err, d.stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-d.exited
		return nil, fmt.Errorf("ahp-jsonrpc-bridge --http did not report a listening address within 30s; stderr: %s", d.stderr.String())
	}
	d.client = &http.Client{Transport: &http.Transport{
		MaxIdleConns: concurrency, MaxIdleConnsPerHost: concurrency, DisableCompression: true,
		IdleConnTimeout: time.Minute,
	}}
	return d, nil
}

func (d *httpDriver) op(ctx context.Context, w int, seq uint64) error {
	body := d.wl.AppendHooksIntercept(nil, w, seq)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// *url.Error repeats the URL, whose port differs per run; keep only the cause.
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return fmt.Errorf("POST to the bridge: %w", err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading the bridge's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bridge answered HTTP %d", resp.StatusCode)
	}
	a, id, err := parseHooksAnswer(data)
	if err != nil {
		return err
	}
	if id != d.wl.EventID(seq) {
		return errors.New("bridge answered another id")
	}
	return checkHooksAnswer(a, seq, d.expect)
}

func (d *httpDriver) endPhase(context.Context, *Stats) {}

func (d *httpDriver) close() error {
	d.client.CloseIdleConnections()
	_ = d.cmd.Process.Signal(os.Interrupt)
	if err := stopProcess(d.cmd, d.exited, 15*time.Second); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("ahp-jsonrpc-bridge --http exited with %v; stderr: %s", err, d.stderr.String())
		}
		return fmt.Errorf("ahp-jsonrpc-bridge --http, after an interrupt: %w", err)
	}
	return nil
}

// describeBridge says which bridge runs and against what.
func describeBridge(transport string, once bool, setup bridgeSetup, upstreamDesc string) string {
	var b strings.Builder
	b.WriteString("ahp-jsonrpc-bridge")
	switch {
	case once:
		b.WriteString(" --once, one process per request,")
	case transport == "bridge-http":
		b.WriteString(" --http on 127.0.0.1,")
	default:
		fmt.Fprintf(&b, " on stdio (persistent, --concurrency %d),", min(max(setup.concurrency, 1), 1024))
	}
	if setup.upstream == "" {
		b.WriteString(" embedded decision core, ")
		b.WriteString(upstreamDesc)
	} else {
		b.WriteString(" upstream ")
		b.WriteString(upstreamDesc)
	}
	return b.String()
}
