package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrOPAUnavailable is wrapped by the error of a run that needs OPA and has no binary of it: the
// one given (--opa-bin, AHP_OPA_BIN) does not exist, or none was given and building it from
// tools/opa.mod failed.
var ErrOPAUnavailable = errors.New("opa is not available")

// OPABinary returns given once it is known to exist or, when given is "", builds OPA through the
// module's own modfile for it (tools/opa.mod, as scripts/opa does: `go tool -modfile -n opa`
// builds into the go build cache and prints the binary's path). It works from inside the ahp
// module; elsewhere pass the binary.
func OPABinary(ctx context.Context, given string) (string, error) {
	if given != "" {
		if _, err := os.Stat(given); err != nil {
			return "", fmt.Errorf("%w: --opa-bin: %v", ErrOPAUnavailable, err)
		}
		return given, nil
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: no go command to build it (%v); pass --opa-bin", ErrOPAUnavailable, err)
	}
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("%w: not inside the ahp module, so tools/opa.mod is not at hand; pass --opa-bin", ErrOPAUnavailable)
	}
	root := filepath.Dir(gomod)
	modfile := filepath.Join(root, "tools", "opa.mod")
	if _, err := os.Stat(modfile); err != nil {
		return "", fmt.Errorf("%w: %v; pass --opa-bin", ErrOPAUnavailable, err)
	}
	cmd := exec.CommandContext(ctx, goCmd, "-C", root, "tool", "-modfile="+modfile, "-n", "opa")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	path, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: go tool -modfile=tools/opa.mod -n opa: %v\n%s", ErrOPAUnavailable, err, tail(stderr.Bytes(), 2048))
	}
	bin := strings.TrimSpace(string(path))
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%w: go tool printed %q, which does not exist", ErrOPAUnavailable, bin)
	}
	return bin, nil
}

// opaStartTimeout bounds how long `opa run --server` may take to answer its health check.
const opaStartTimeout = 30 * time.Second

// freeLoopbackAddr returns a 127.0.0.1 address with a port that was free a moment ago, for a
// child process that cannot report the port it was given with :0. Another process could take it
// in between; the child then fails to listen and says so.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// startOPA runs `opa run --server` on a loopback port with the Rego file, and waits until its
// health check answers. Its REST API and its Prometheus /metrics are on the same port. Stopping
// it sends SIGTERM, then kills it after 10 s.
func startOPA(ctx context.Context, bin, regoFile string) (*running, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--server", "--addr", addr, "--log-level", "error",
		"--disable-telemetry", "--shutdown-grace-period", "5", regoFile)
	cmd.Env = withoutAHPEnv(os.Environ())
	stderr := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting %s: %v", ErrOPAUnavailable, bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	url := "http://" + addr
	r := &running{url: url, pid: cmd.Process.Pid, stop: func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := stopProcess(cmd, exited, 10*time.Second); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
				return nil // ended by the SIGTERM itself
			}
			return fmt.Errorf("opa process, after SIGTERM: %v; output: %s", err, stderr.String())
		}
		return nil
	}}
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(opaStartTimeout)
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("opa run --server exited before it was healthy (%v); output: %s", err, stderr.String())
		default:
		}
		if resp, err := hc.Get(url + "/health"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = cmd.Process.Kill()
			<-exited
			return nil, fmt.Errorf("opa run --server did not become healthy within %v; output: %s", opaStartTimeout, stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // a child's readiness has no signal but polling
	}
}

// jsonTarget is the HTTP JSON target: one POST per request to a URL, with a JSON body built for
// the request, over HTTP/1.1 keep-alive connections (one per worker), as a REST client of a
// policy engine does. It drives OPA's REST API (POST /v1/data/<path> with {"input": …}) and
// ahp-server's Connect JSON protocol (POST /ahp.v1.InterceptService/Intercept with the request
// message as JSON) with the same event bodies.
type jsonTarget struct {
	url    string
	client *http.Client
	body   func(dst []byte, w int, seq uint64) []byte
	// verdict reads the verdict out of a 200 answer's body.
	verdict func(body []byte) (Verdict, error)
	expect  *Expectation
	what    string // names the peer in errors
}

// maxAnswerBytes bounds an answer the HTTP JSON target reads.
const maxAnswerBytes = 1 << 20

func newJSONTarget(url, what string, concurrency int, expect *Expectation,
	body func([]byte, int, uint64) []byte, verdict func([]byte) (Verdict, error)) *jsonTarget {
	return &jsonTarget{
		url: url, what: what, expect: expect, body: body, verdict: verdict,
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConns: concurrency, MaxIdleConnsPerHost: concurrency, DisableCompression: true,
			IdleConnTimeout: time.Minute,
		}},
	}
}

func (d *jsonTarget) op(ctx context.Context, w int, seq uint64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.body(nil, w, seq)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if cause := errors.Unwrap(err); cause != nil { // *url.Error repeats the URL (a per-run port)
			err = cause
		}
		return fmt.Errorf("POST to %s: %w", d.what, err)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("reading the answer of %s: %w", d.what, err)
	case len(data) > maxAnswerBytes:
		return fmt.Errorf("answer of %s larger than %d bytes", d.what, maxAnswerBytes)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s answered HTTP %d", d.what, resp.StatusCode)
	}
	v, err := d.verdict(data)
	if err != nil {
		return fmt.Errorf("answer of %s: %w", d.what, err)
	}
	return d.expect.Check(seq, v)
}

func (d *jsonTarget) endPhase(context.Context, *Stats) {}
func (d *jsonTarget) close() error                     { d.client.CloseIdleConnections(); return nil }

// opaVerdict reads {"result": {"allow": bool, "reasons": […]}}, the decision of RegoPolicy.
func opaVerdict(body []byte) (Verdict, error) {
	var a struct {
		Result *struct {
			Allow   *bool    `json:"allow"`
			Reasons []string `json:"reasons"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return VerdictUnknown, fmt.Errorf("not JSON: %v", err)
	}
	switch {
	case a.Result == nil:
		return VerdictUnknown, errors.New("no result (the decision path is undefined: wrong policy loaded?)")
	case a.Result.Allow == nil:
		return VerdictUnknown, errors.New("result without a boolean allow")
	case *a.Result.Allow:
		return VerdictAllow, nil
	}
	return VerdictDeny, nil
}

// connectJSONVerdict reads a Connect JSON InterceptResponse, {"decision": {"verdict": …}}, and
// applies the checks of checkDecision (no synthetic or replayed decision).
func connectJSONVerdict(body []byte) (Verdict, error) {
	var a struct {
		Decision *struct {
			Verdict   string `json:"verdict"`
			Synthetic bool   `json:"synthetic"`
			Replayed  bool   `json:"replayed"`
		} `json:"decision"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return VerdictUnknown, fmt.Errorf("not JSON: %v", err)
	}
	switch {
	case a.Decision == nil:
		return VerdictUnknown, errors.New("answer without a decision")
	case a.Decision.Synthetic:
		return VerdictUnknown, errors.New("synthetic decision (the server failed over instead of deciding)")
	case a.Decision.Replayed:
		return VerdictUnknown, errors.New("replayed decision for a fresh event id")
	}
	switch a.Decision.Verdict {
	case "VERDICT_ALLOW":
		return VerdictAllow, nil
	case "VERDICT_DENY":
		return VerdictDeny, nil
	case "VERDICT_ASK":
		return VerdictAsk, nil
	}
	return VerdictOther, nil
}

// AppendInterceptJSON appends the Connect JSON body of request seq's Intercept to dst: the
// protojson form of InterceptRequest{Event: ToolBefore(worker, seq)}, built without reflection so
// that the load generator spends little on it.
func (w *Workload) AppendInterceptJSON(dst []byte, worker int, seq uint64) []byte {
	id := w.EventID(seq)
	dst = append(dst, `{"event":{"id":"`...)
	dst = append(dst, id...)
	dst = append(dst, `","source":"`+source+`","type":"EVENT_TYPE_TOOL_BEFORE","time":"`...)
	dst = append(dst, w.time...)
	dst = append(dst, `","session":{"id":"`...)
	dst = append(dst, w.SessionID(worker)...)
	dst = append(dst, `"},"tool":{"callId":"call-`...)
	dst = append(dst, id...)
	dst = append(dst, `","name":"Bash","kind":"TOOL_KIND_SHELL","input":`...)
	dst = append(dst, w.inputJSON[variant(seq)]...)
	return append(dst, `}}}`...)
}

// AppendOPAInput appends OPA's request body for request seq: {"input": the Intercept body}.
func (w *Workload) AppendOPAInput(dst []byte, worker int, seq uint64) []byte {
	dst = append(dst, `{"input":`...)
	dst = w.AppendInterceptJSON(dst, worker, seq)
	return append(dst, '}')
}

// opaDataURL is the REST URL of a data path on an OPA server.
func opaDataURL(base, path string) string { return strings.TrimRight(base, "/") + "/v1/data/" + path }

// pidDesc names a process.
func pidDesc(name string, pid int) string { return name + " (pid " + strconv.Itoa(pid) + ")" }
