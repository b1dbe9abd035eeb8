package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// failingUpstream is an upstream that cannot give an answer, and the failure kind the bridge must
// report for it ("" when more than one is right, e.g. a reset seen as unavailable or unreadable).
type failingUpstream struct {
	name string
	url  func(t *testing.T) string
	kind string
}

var failingUpstreams = []failingUpstream{
	{"down", func(t *testing.T) string { return deadURL(t) }, "unavailable"},
	{"slow", func(t *testing.T) string {
		return startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			drain(r)
			select { // far past any deadline, unless the client gives up
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}))
	}, "deadline_exceeded"},
	{"garbage html", func(t *testing.T) string {
		return startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			drain(r)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>502 upstream says hello</body></html>")
		}))
	}, "bad_response"},
	{"garbage proto", func(t *testing.T) string {
		return startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			drain(r)
			w.Header().Set("Content-Type", "application/proto")
			w.Write([]byte{0xff, 0xff, 0xff, 0x07, 0x12})
		}))
	}, "bad_response"},
	{"stream closed mid-call", func(t *testing.T) string {
		return startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			drain(r)
			w.Header().Set("Content-Type", "application/proto")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // resets the stream after the headers
		}))
	}, ""},
	{"connection reset", func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 64)
				c.Read(buf) // part of the HTTP/2 preface, then hang up
				c.Close()
			}
		}()
		return "http://" + ln.Addr().String()
	}, ""},
}

// decisionIDs matches the per-run decision ids, which tests blank out.
var decisionIDs = regexp.MustCompile(`"(dev\.ahpgateway/decision_id|decisionId)":"[^"]*",?`)

func blankIDs(b []byte) string { return decisionIDs.ReplaceAllString(string(b), "") }

// failureCase is one message under the failure policy and its exact answer per policy. In the
// wanted texts, FAILURE stands for the failure kind and POLICY for the policy.
type failureCase struct {
	name      string
	msg       string
	transport bridge.Transport
	// closed and open are the wanted result (or, for notifications, reply body; "" for none).
	closed, open string
	status       int // wanted HTTP status when there is no body
	isError      bool
}

const syntheticMeta = `"metadata":{"dev.ahpgateway/failure":"FAILURE","dev.ahpgateway/failure_policy":"POLICY","dev.ahpgateway/synthetic":true}`

func typedRequest(t *testing.T, name string) string {
	req, _ := readExchange(t, name)
	return string(req)
}

func failureCases(t *testing.T) []failureCase {
	reason := `"reason":"Required policy backend unavailable."`
	return []failureCase{
		{
			name: "hooks intercept", msg: hooksIntercept("ls"), transport: bridge.TransportStdio,
			closed: `{"effects":[{"code":"dev.ahpgateway.bridge.backend_unavailable",` + reason + `,"type":"deny"}],"extensions":{"dev.ahpgateway":{"failure":"FAILURE","failurePolicy":"POLICY","synthetic":true}},"protocolVersion":"0.1"}`,
			open:   `{"effects":[],"extensions":{"dev.ahpgateway":{"failure":"FAILURE","failurePolicy":"POLICY","synthetic":true}},"protocolVersion":"0.1"}`,
		},
		{
			name: "harness pre_action", msg: harnessEvent(`"e1"`, "ls"), transport: bridge.TransportStdio,
			closed: `{"decision":"block",` + syntheticMeta + `,` + reason + `}`,
			open:   `{"decision":"allow",` + syntheticMeta + `}`,
		},
		{
			name: "harness batch", msg: `{"jsonrpc":"2.0","id":"b1","method":"ahp/batch","params":{"events":[{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"tool_name":"bash"}},{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":null}]}}`,
			transport: bridge.TransportHTTP,
			closed:    `{"decisions":[{"decision":"block",` + syntheticMeta + `,` + reason + `},{"decision":"block",` + syntheticMeta + `,` + reason + `}]}`,
			open:      `{"decisions":[{"decision":"allow",` + syntheticMeta + `},{"decision":"allow",` + syntheticMeta + `}]}`,
		},
		{
			name: "harness query", msg: typedRequest(t, "query"), transport: bridge.TransportStdio,
			closed: `{"answer":false,` + reason + `}`,
			open:   `{"answer":true,"reason":"Policy backend unavailable; proceeding (fail-open)."}`,
		},
		{name: "idle", msg: typedRequest(t, "idle"), transport: bridge.TransportStdio,
			closed: `{"decision":"defer",` + reason + `}`, open: `{"decision":"allow"}`},
		{name: "intent_detection", msg: typedRequest(t, "intent_detection"), transport: bridge.TransportStdio,
			closed: `{"decision":"block",` + reason + `}`, open: `{"confidence":0.0,"decision":"allow","detected_intent":"understand"}`},
		{name: "context_perception", msg: typedRequest(t, "context_perception"), transport: bridge.TransportStdio,
			closed: `{"decision":"block",` + syntheticMeta + `,` + reason + `}`, open: `{"decision":"allow","injected_context":{"facts":[]},` + syntheticMeta + `}`},
		{name: "memory_recall", msg: typedRequest(t, "memory_recall"), transport: bridge.TransportStdio,
			closed: `{"decision":"block",` + syntheticMeta + `,` + reason + `}`, open: `{"decision":"allow","injected_facts":[],` + syntheticMeta + `}`},
		{name: "planning", msg: typedRequest(t, "planning"), transport: bridge.TransportStdio,
			closed: `{"decision":"block",` + syntheticMeta + `,` + reason + `}`, open: `{"decision":"allow",` + syntheticMeta + `,"selected_strategy":"none"}`},
		{name: "reasoning", msg: typedRequest(t, "reasoning"), transport: bridge.TransportStdio,
			closed: `{"decision":"block",` + syntheticMeta + `,` + reason + `}`, open: `{"decision":"allow",` + syntheticMeta + `}`},
		{name: "rate_limit", msg: typedRequest(t, "rate_limit"), transport: bridge.TransportStdio,
			closed: `{"decision":"skip",` + reason + `}`, open: `{"decision":"retry",` + syntheticMeta + `,"retry_after_ms":1500}`},
		{name: "confirmation", msg: typedRequest(t, "confirmation"), transport: bridge.TransportStdio,
			closed: `{"decision":"reject",` + reason + `}`, open: `{"decision":"escalate"}`},
		{
			name: "hooks observe over HTTP", transport: bridge.TransportHTTP, status: http.StatusInternalServerError,
			msg: `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":"evt-2","source":"urn:test:harness","type":"session.end","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`,
		},
		{
			name: "hooks observe over stdio", transport: bridge.TransportStdio,
			msg: `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":"evt-3","source":"urn:test:harness","type":"session.end","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`,
		},
		{
			name: "harness notification over HTTP", transport: bridge.TransportHTTP, isError: true,
			msg:    `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"session_end","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{}}}`,
			closed: `{"jsonrpc":"2.0","id":"","error":{"code":-32603,"message":"Handler error: Transport error: policy backend unavailable (FAILURE)"}}`,
		},
		{
			name: "harness notification over stdio", transport: bridge.TransportStdio,
			msg: `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"session_end","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{}}}`,
		},
	}
}

// TestFailurePolicyAnswersWhenTheUpstreamFails drives every kind of message against every kind
// of broken upstream under both policies, and checks the exact answer and that it comes within
// the deadline (plus a generous slack: a loaded machine may be slow, a hang is what it catches).
func TestFailurePolicyAnswersWhenTheUpstreamFails(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	const slack = testkit.WaitTimeout // a bound that says "it did not hang", not a speed claim
	for _, up := range failingUpstreams {
		t.Run(up.name, func(t *testing.T) {
			t.Parallel()
			clients := upstreamClients(t, up.url(t))
			for _, policy := range []bridge.FailurePolicy{bridge.FailClosed, bridge.FailOpen} {
				t.Run(policy.String(), func(t *testing.T) {
					t.Parallel()
					b := newBridge(t, clients, func(c *bridge.Config) { c.Timeout = timeout; c.FailurePolicy = policy })
					for _, fc := range failureCases(t) {
						t.Run(fc.name, func(t *testing.T) {
							t.Parallel()
							start := time.Now()
							reply := b.Handle(context.Background(), []byte(fc.msg), fc.transport)
							if elapsed := time.Since(start); elapsed > timeout+slack {
								t.Errorf("answered after %v, deadline %v", elapsed, timeout)
							}
							want := fc.closed
							if policy == bridge.FailOpen && !fc.isError {
								want = fc.open
							}
							if want == "" {
								wantNoReply(t, reply, fc.status)
								return
							}
							var got string
							if fc.isError {
								got = string(reply.Body)
							} else {
								r := decodeReply(t, reply)
								if r.Error != nil {
									t.Fatalf("error reply %s", reply.Body)
								}
								got = blankIDs(r.Result)
							}
							kind := up.kind
							if kind == "" {
								kind = kindIn(got)
							}
							want = strings.NewReplacer("FAILURE", kind, "POLICY", policy.String()).Replace(want)
							if got != want {
								t.Errorf("answer\n%s\nwant\n%s", got, want)
							}
						})
					}
				})
			}
		})
	}
}

// kindIn finds the failure kind an answer names, for upstreams that may fail in two ways.
func kindIn(answer string) string {
	for _, k := range []string{"unavailable", "bad_response", "backend_error"} {
		if strings.Contains(answer, `"`+k+`"`) || strings.Contains(answer, "("+k+")") {
			return k
		}
	}
	return "?"
}

// TestFailuresAreCountedAndLogged checks the counters, and that the log says what failed
// without carrying the event's values.
func TestFailuresAreCountedAndLogged(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	clients := upstreamClients(t, deadURL(t))
	b := newBridge(t, clients, func(c *bridge.Config) {
		c.Logger = slogTo(&logs)
		c.FailurePolicy = bridge.FailOpen
	})
	handle(t, b, hooksIntercept("cat /home/me/.secret-plan"), bridge.TransportStdio)
	handle(t, b, harnessEvent(`"e1"`, "cat /home/me/.secret-plan"), bridge.TransportStdio)
	handle(t, b, `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":"evt-2","source":"urn:test:harness","type":"session.end","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`, bridge.TransportStdio)
	handle(t, b, `{"jsonrpc":"2.0","id":"h","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"f","version":"1","capabilities":[]},"session_id":"s","agent_id":"a"}}`, bridge.TransportStdio)

	c := b.Counters()
	if c.FailOpen != 2 || c.FailClosed != 0 || c.ObserveFailures != 1 || c.HandshakeFallbacks != 1 || c.ByFailure["unavailable"] != 4 {
		t.Errorf("counters %+v", c)
	}
	if strings.Contains(logs.String(), "secret-plan") {
		t.Errorf("the log carries a payload value:\n%s", logs.String())
	}
	for _, want := range []string{"failure=unavailable", "failure_policy=fail-open", "event_type=tool.before", "event_type=pre_action"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestHandshakeIsAnsweredLocallyWhenTheUpstreamFails checks the fallback handshake.
func TestHandshakeIsAnsweredLocallyWhenTheUpstreamFails(t *testing.T) {
	t.Parallel()
	b := newBridge(t, upstreamClients(t, deadURL(t)), func(c *bridge.Config) { c.Version = "9.9.9" })
	req := `{"jsonrpc":"2.0","id":"h","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"f","version":"1","capabilities":[]},"session_id":"s","agent_id":"a"}}`
	got := envelopeOf(t, handle(t, b, req, bridge.TransportStdio), `"h"`)
	want := `{"config":{"batch_size":100,"max_depth":10,"timeout_ms":10000},"harness_info":{"capabilities":["pre_action","post_action","pre_prompt","query","batch","run_lifecycle","task_list","verification","idle","intent_detection","context_perception","memory_recall","planning","reasoning","rate_limit","confirmation"],"name":"ahp-jsonrpc-bridge","version":"9.9.9"},"protocol_version":"2.4"}`
	if string(got) != want {
		t.Errorf("handshake\n%s\nwant\n%s", got, want)
	}
	// The version rule still applies, exactly as the reference words it.
	wantError(t, handle(t, b, strings.Replace(req, `"2.4"`, `"3.0"`, 1), bridge.TransportStdio), `"h"`, -32000, "Unsupported protocol version: 3.0")
	wantError(t, handle(t, b, strings.Replace(req, `"2.4"`, `""`, 1), bridge.TransportStdio), `"h"`, -32000, "Unsupported protocol version: ")
}

// TestHooksCapabilitiesReportsBackendTrouble checks the two reserved codes.
func TestHooksCapabilitiesReportsBackendTrouble(t *testing.T) {
	t.Parallel()
	req := `{"jsonrpc":"2.0","id":1,"method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`
	down := newBridge(t, upstreamClients(t, deadURL(t)), nil)
	wantError(t, handle(t, down, req, bridge.TransportHTTP), `1`, -32003, "Backend unavailable")
	garbage := newBridge(t, upstreamClients(t, failingUpstreams[2].url(t)), nil)
	wantError(t, handle(t, garbage, req, bridge.TransportHTTP), `1`, -32004, "Backend internal error")
}

// TestLateAnswersAreIgnored checks that the deadline covers the whole call: an upstream that
// answers after it does not change the answer already given.
func TestLateAnswersAreIgnored(t *testing.T) {
	t.Parallel()
	real := startServer(t, nil)
	answered := make(chan struct{}) // closed once the bridge has answered
	proxy := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-answered // then answer properly, too late
		req, _ := http.NewRequestWithContext(context.Background(), r.Method, real+r.URL.Path, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 1<<16)
		n, _ := resp.Body.Read(buf)
		w.Write(buf[:n])
	}))
	release := sync.OnceFunc(func() { close(answered) })
	t.Cleanup(release) // before the proxy's own cleanup waits for its handler
	b := newBridge(t, upstreamClients(t, proxy), func(c *bridge.Config) { c.Timeout = 100 * time.Millisecond })
	reply := handle(t, b, harnessEvent(`"late"`, "ls"), bridge.TransportStdio)
	release()
	got := blankIDs(envelopeOf(t, reply, `"late"`))
	if !strings.Contains(got, `"decision":"block"`) {
		t.Errorf("answer %s, want the fail-closed block", got)
	}
	if !strings.Contains(got, "deadline_exceeded") {
		t.Errorf("answer %s, want failure deadline_exceeded", got)
	}
}

// TestTheCallersContextIsRespected checks that a cancelled caller gets its answer at once.
func TestTheCallersContextIsRespected(t *testing.T) {
	t.Parallel()
	b := newBridge(t, upstreamClients(t, failingUpstreams[1].url(t)), func(c *bridge.Config) { c.Timeout = 20 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	reply := b.Handle(ctx, []byte(harnessEvent(`"c"`, "ls")), bridge.TransportStdio)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v after the caller's context ended", elapsed)
	}
	if got := blankIDs(envelopeOf(t, reply, `"c"`)); !slices.ContainsFunc([]string{"deadline_exceeded", "canceled"}, func(k string) bool { return strings.Contains(got, k) }) {
		t.Errorf("answer %s", got)
	}
}

// Classify is the one classification of upstream failures (the hook adapters use it too); a
// broken connection is unavailable whatever code the client wraps it in.
func TestClassify(t *testing.T) {
	t.Parallel()
	live := context.Background()
	expired, cancel := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancel2 := context.WithCancel(live)
	cancel2()
	wire := func(code connect.Code) error { return connect.NewWireError(code, errors.New("x")) }
	cases := []struct {
		name     string
		ctx      context.Context
		err      error
		want     bridge.Failure
		rejected bool
	}{
		{"deadline passed", expired, errors.New("anything"), bridge.FailureDeadlineExceeded, false},
		{"caller gave up", canceled, errors.New("anything"), bridge.FailureCanceled, false},
		{"deadline code", live, connect.NewError(connect.CodeDeadlineExceeded, nil), bridge.FailureDeadlineExceeded, false},
		{"connection reset", live, connect.NewError(connect.CodeUnknown, syscall.ECONNRESET), bridge.FailureUnavailable, false},
		{"connection refused", live, connect.NewError(connect.CodeUnavailable, syscall.ECONNREFUSED), bridge.FailureUnavailable, false},
		{"transport canceled", live, connect.NewError(connect.CodeCanceled, nil), bridge.FailureUnavailable, false},
		{"aborted", live, wire(connect.CodeAborted), bridge.FailureUnavailable, false},
		{"credentials", live, wire(connect.CodePermissionDenied), bridge.FailureUnauthenticated, false},
		{"refused event", live, wire(connect.CodeFailedPrecondition), 0, true},
		{"unreadable refusal", live, connect.NewError(connect.CodeInvalidArgument, nil), bridge.FailureBadResponse, false},
		{"unreadable answer", live, connect.NewError(connect.CodeInternal, nil), bridge.FailureBadResponse, false},
		{"server error", live, wire(connect.CodeInternal), bridge.FailureBackendError, false},
		{"server limit", live, wire(connect.CodeResourceExhausted), bridge.FailureBackendError, false},
	}
	for _, c := range cases {
		f, rejected := bridge.Classify(c.ctx, c.err)
		if rejected != c.rejected {
			t.Errorf("%s: rejected = %v, want %v", c.name, rejected, c.rejected)
			continue
		}
		if !rejected && f != c.want {
			t.Errorf("%s: failure = %v, want %v", c.name, f, c.want)
		}
	}
}
