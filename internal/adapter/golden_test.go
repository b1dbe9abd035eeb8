package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/server"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// The golden cases: testdata/golden/<provider>/<name>.json, one native hook input each, with what
// the adapter must make of it. Each case runs three ways — through the pure mapping (Map, Render),
// through the runner (Adapter.Run, the command hook) against a real embedded ahp-server running
// testdata/policy.yaml, and through the HTTP form (Adapter.ServeHTTP over httptest) — and all three
// must agree with the file.
//
// A case file has an authored part:
//
//	description     what the case shows
//	input           the hook input (or inputText, for input that is not a JSON object)
//	includeNative   run with -include-native
//	failurePolicy   fail-closed (default) or fail-open
//	failure         make the backend fail: unavailable (connection refused), deadline_exceeded
//	                (it never answers), not_started (the clients could not be made)
//	eventOption     the --event option (for inputs that name no event)
//	mcpServers      the runtime's configured MCP server names (Copilot's "<server>-<tool>")
//	mcpEndpoints    the runtime's MCP servers by url or command line (Cursor)
//
// and an expected part, which `go test ./internal/adapter -run Golden -update` rewrites from what
// the code does (review the diff before committing it):
//
//	event           the canonical event (protojson; id "evt-<name>", time goldenTime), absent
//	                when the hook event is not adapted or the input cannot be mapped
//	mapError        Map's error, when it has one
//	decision        the decision the server gives for the event (without decision_id and
//	                latency_us); the pure mapping renders it
//	stdout          the hook output JSON, or null for none
//	stdoutText      the hook output when it is not JSON (Windsurf's messages)
//	stderr          the command hook's diagnostic line, if any
//	exit            the command hook's exit status
//	status          the HTTP form's status
var update = flag.Bool("update", false, "rewrite the expected part of the golden cases from what the code does now")

// goldenTime is the event time of the pure mapping and of the runner in these tests.
var goldenTime = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

type goldenCase struct {
	Description   string            `json:"description"`
	Input         json.RawMessage   `json:"input,omitempty"`
	InputText     string            `json:"inputText,omitempty"`
	IncludeNative bool              `json:"includeNative,omitempty"`
	FailurePolicy string            `json:"failurePolicy,omitempty"`
	Failure       string            `json:"failure,omitempty"`
	EventOption   string            `json:"eventOption,omitempty"`
	MCPServers    []string          `json:"mcpServers,omitempty"`
	MCPEndpoints  map[string]string `json:"mcpEndpoints,omitempty"`

	Event      json.RawMessage `json:"event,omitempty"`
	MapError   string          `json:"mapError,omitempty"`
	Decision   json.RawMessage `json:"decision,omitempty"`
	Stdout     json.RawMessage `json:"stdout"`
	StdoutText string          `json:"stdoutText,omitempty"`
	Stderr     string          `json:"stderr,omitempty"`
	Exit       int             `json:"exit"`
	Status     int             `json:"status"`

	provider Provider
	name     string
	path     string
}

func (c *goldenCase) body() []byte {
	if c.InputText != "" {
		return []byte(c.InputText)
	}
	return c.Input
}

func (c *goldenCase) mcp() MCPConfig {
	return MCPConfig{Servers: c.MCPServers, Endpoints: c.MCPEndpoints}
}

func (c *goldenCase) failurePolicy(t testing.TB) bridge.FailurePolicy {
	if c.FailurePolicy == "" {
		return bridge.FailClosed
	}
	p, err := bridge.ParseFailurePolicy(c.FailurePolicy)
	if err != nil {
		t.Fatalf("%s: %v", c.path, err)
	}
	return p
}

func (c *goldenCase) options() Options {
	return Options{ID: "evt-" + c.name, Now: goldenTime, IncludeNative: c.IncludeNative, Event: c.EventOption, MCP: c.mcp()}
}

// stdout is the expected hook output, compact, or nil for none.
func (c *goldenCase) stdout(t testing.TB) []byte {
	if c.StdoutText != "" {
		return []byte(c.StdoutText)
	}
	if len(c.Stdout) == 0 || string(c.Stdout) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, c.Stdout); err != nil {
		t.Fatalf("%s: stdout: %v", c.path, err)
	}
	return buf.Bytes()
}

// loadGolden reads every case, sorted by provider and name.
func loadGolden(t testing.TB) []*goldenCase {
	t.Helper()
	var out []*goldenCase
	for _, p := range Providers() {
		files := testkit.ReadFiles(t, filepath.Join("testdata", "golden", p.String(), "*.json"))
		if len(files) == 0 {
			t.Fatalf("no golden cases for %s", p)
		}
		for _, f := range files {
			c := &goldenCase{provider: p, name: strings.TrimSuffix(filepath.Base(f.Path), ".json"), path: f.Path}
			dec := json.NewDecoder(bytes.NewReader(f.Data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if (len(c.Input) == 0) == (c.InputText == "") {
				t.Fatalf("%s: give exactly one of input and inputText", f)
			}
			out = append(out, c)
		}
	}
	return out
}

// writeGolden rewrites a case file when -update is set.
func writeGolden(t testing.TB, c *goldenCase) {
	t.Helper()
	if c.Stdout == nil {
		c.Stdout = json.RawMessage("null")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// protoJSON writes m as indented-ready protojson with a stable form.
func protoJSON(t testing.TB, m proto.Message) json.RawMessage {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// stableDecision is d without what changes from run to run, or with the test policy (its
// digest).
func stableDecision(d *ahpv1.Decision) *ahpv1.Decision {
	d = proto.CloneOf(d)
	d.DecisionId, d.LatencyUs, d.Replayed = "", 0, false
	d.PolicyDigest, d.PolicyRevision = "", 0
	return d
}

// syntheticFor is the decision and notice the runner substitutes for a case's failure.
func syntheticFor(c *goldenCase, fp bridge.FailurePolicy) (*ahpv1.Decision, string) {
	a := &Adapter{cfg: Config{FailurePolicy: fp}}
	return a.synthetic(SyntheticReason(c.Failure)), Notice(c.Failure, fp)
}

// TestGoldenMapping runs every case through the pure mapping: Map gives the expected event (or
// error), and Render of the expected decision — or of the failure policy's — gives the expected
// output.
func TestGoldenMapping(t *testing.T) {
	skipOnUpdate(t)
	for _, c := range loadGolden(t) {
		t.Run(c.provider.String()+"/"+c.name, func(t *testing.T) {
			req, err := Map(c.provider, c.body(), c.options())
			if err != nil {
				if err.Error() != c.MapError {
					t.Errorf("Map error %q, want %q", err, c.MapError)
				}
				if len(c.Event) != 0 {
					t.Error("Map failed but the case expects an event")
				}
				return
			}
			if c.MapError != "" {
				t.Errorf("Map succeeded, want error %q", c.MapError)
			}
			checkEvent(t, req.Event, c.Event)
			if !req.Intercepted() {
				if len(c.Decision) != 0 {
					t.Error("the case has a decision but the event is not intercepted")
				}
				return
			}
			var d *ahpv1.Decision
			notice := ""
			if c.Failure != "" {
				d, notice = syntheticFor(c, c.failurePolicy(t))
			} else {
				d = &ahpv1.Decision{}
				if err := protojson.Unmarshal(c.Decision, d); err != nil {
					t.Fatalf("decision: %v", err)
				}
			}
			out, err := RenderOutput(req, d, notice)
			if err != nil {
				t.Fatalf("RenderOutput: %v", err)
			}
			if want := c.stdout(t); !bytes.Equal(out.Stdout, want) {
				t.Errorf("RenderOutput:\n got %s\nwant %s", out.Stdout, want)
			}
			if out.Exit != c.Exit || out.Stderr != c.Stderr {
				t.Errorf("RenderOutput: exit %d, stderr %q; want %d, %q", out.Exit, out.Stderr, c.Exit, c.Stderr)
			}
		})
	}
}

func checkEvent(t *testing.T, got *ahpv1.Event, want json.RawMessage) {
	t.Helper()
	if len(want) == 0 {
		if got != nil {
			t.Errorf("Map gave event %s, want none", protoJSON(t, got))
		}
		return
	}
	w := &ahpv1.Event{}
	if err := protojson.Unmarshal(want, w); err != nil {
		t.Fatalf("expected event: %v", err)
	}
	if !proto.Equal(got, w) {
		t.Errorf("Map event:\n got %s\nwant %s", protoJSON(t, got), protoJSON(t, w))
	}
}

// backend is what the runner and HTTP tests talk to: a real embedded ahp-server running
// testdata/policy.yaml, and failing clients for each failure kind.
type backend struct {
	embedded bridge.Clients
	failing  map[string]bridge.Clients
	ids      atomic.Uint64
}

var (
	backendOnce sync.Once
	sharedBE    *backend
	backendErr  error
)

// testBackend starts the shared backend once for the package's tests.
func testBackend(t testing.TB) *backend {
	t.Helper()
	backendOnce.Do(func() { sharedBE, backendErr = startBackend() })
	if backendErr != nil {
		t.Fatal(backendErr)
	}
	return sharedBE
}

func startBackend() (*backend, error) {
	be := &backend{failing: map[string]bridge.Clients{}}
	var err error
	// The closers are left to the end of the test binary: the embedded server is shared by every
	// test of the package.
	be.embedded, _, err = bridge.NewEmbedded(server.Config{
		PolicyFile:         filepath.Join("testdata", "policy.yaml"),
		PolicyPollInterval: -1,
		Logger:             testkit.Discard(),
	})
	if err != nil {
		return nil, err
	}
	// unavailable: a port nothing listens on any more.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	if be.failing["unavailable"], _, err = bridge.NewUpstream(dead, bridge.UpstreamOptions{}); err != nil {
		return nil, err
	}
	// deadline_exceeded: a server that never answers (until the caller gives up).
	silent := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	silent.Config.Protocols = testkit.H2CProtocols()
	silent.Start()
	if be.failing["deadline_exceeded"], _, err = bridge.NewUpstream(silent.URL, bridge.UpstreamOptions{}); err != nil {
		return nil, err
	}
	return be, nil
}

// adapterFor builds the Adapter a case runs with.
func (be *backend) adapterFor(t testing.TB, c *goldenCase) *Adapter {
	t.Helper()
	cfg := Config{
		Provider:      c.provider,
		Clients:       be.embedded,
		Timeout:       10 * time.Second,
		FailurePolicy: c.failurePolicy(t),
		IncludeNative: c.IncludeNative,
		Event:         c.EventOption,
		MCP:           c.mcp(),
		Now:           func() time.Time { return goldenTime },
		// Unique ids: cases with equal content must not be answered as replays of each other.
		NewID: func() string { return fmt.Sprintf("evt-%s-%d", c.name, be.ids.Add(1)) },
	}
	switch c.Failure {
	case "":
	case "not_started":
		cfg.Clients, cfg.StartErr = bridge.Clients{}, errors.New(`policy.yaml: line 3: rule "x": when: undeclared reference to 'foo'`)
	case "deadline_exceeded":
		cfg.Clients, cfg.Timeout = be.failing[c.Failure], bridge.MinTimeout
	default:
		cl, ok := be.failing[c.Failure]
		if !ok {
			t.Fatalf("%s: unknown failure %q", c.path, c.Failure)
		}
		cfg.Clients = cl
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestGoldenRunner runs every case through the command hook (Adapter.Run) against the real
// server, and checks that the server's decision is the one the pure mapping renders.
func TestGoldenRunner(t *testing.T) {
	skipOnUpdate(t)
	be := testBackend(t)
	for _, c := range loadGolden(t) {
		t.Run(c.provider.String()+"/"+c.name, func(t *testing.T) {
			if decision := be.decision(t, c); !jsonEqual(decision, c.Decision) {
				t.Errorf("server decision:\n got %s\nwant %s", decision, c.Decision)
			}
			stdout, stderr, exit := be.run(t, c)
			if want := c.stdout(t); !bytes.Equal(bytes.TrimSuffix(stdout, []byte("\n")), want) {
				t.Errorf("stdout:\n got %s\nwant %s", stdout, want)
			}
			if len(stdout) > 0 && c.StdoutText == "" && (!bytes.HasSuffix(stdout, []byte("}\n")) || bytes.Count(stdout, []byte("\n")) != 1) {
				t.Errorf("stdout is not one line of JSON: %q", stdout)
			}
			if exit != c.Exit {
				t.Errorf("exit %d, want %d", exit, c.Exit)
			}
			if want := c.Stderr; stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
		})
	}
}

// TestGoldenHTTP runs every case through the HTTP form over httptest: the status, and the body
// (the hook output for 200, nothing for 204, the diagnostic otherwise).
func TestGoldenHTTP(t *testing.T) {
	skipOnUpdate(t)
	be := testBackend(t)
	for _, c := range loadGolden(t) {
		if !HasHTTPForm(c.provider) {
			continue
		}
		t.Run(c.provider.String()+"/"+c.name, func(t *testing.T) {
			status, body, contentType := be.post(t, c)
			if status != c.Status {
				t.Errorf("status %d, want %d (body %q)", status, c.Status, body)
			}
			switch status {
			case http.StatusOK:
				if want := c.stdout(t); !bytes.Equal(body, want) {
					t.Errorf("body:\n got %s\nwant %s", body, want)
				}
				if contentType != "application/json" {
					t.Errorf("Content-Type %q", contentType)
				}
			case http.StatusNoContent:
				if c.stdout(t) != nil {
					t.Errorf("204; want output %s", c.Stdout)
				}
				if len(body) != 0 {
					t.Errorf("204 with body %q", body)
				}
			default:
				if c.stdout(t) != nil {
					t.Errorf("status %d; want output %s", status, c.Stdout)
				}
				if got := strings.TrimSpace(string(body)); got != c.Stderr {
					t.Errorf("status %d body %q; want the diagnostic %q", status, got, c.Stderr)
				}
			}
		})
	}
}

// TestGoldenUpdate rewrites the expected part of every case from what the code does now (with
// -update only). Review the diff: this is how a changed mapping becomes the new truth.
func TestGoldenUpdate(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite the golden cases")
	}
	be := testBackend(t)
	for _, c := range loadGolden(t) {
		c.Event, c.MapError = nil, ""
		if req, err := Map(c.provider, c.body(), c.options()); err != nil {
			c.MapError = err.Error()
		} else if req.Event != nil {
			c.Event = protoJSON(t, req.Event)
		}
		c.Decision = be.decision(t, c)
		stdout, stderr, exit := be.run(t, c)
		c.Stdout, c.StdoutText, c.Stderr, c.Exit = nil, "", stderr, exit
		if out := bytes.TrimSuffix(stdout, []byte("\n")); len(out) > 0 {
			if json.Valid(out) {
				c.Stdout = json.RawMessage(out)
			} else {
				c.StdoutText = string(out)
			}
		}
		c.Status = 0
		if HasHTTPForm(c.provider) {
			c.Status, _, _ = be.post(t, c)
		}
		writeGolden(t, c)
	}
}

func skipOnUpdate(t *testing.T) {
	if *update {
		t.Skip("-update: TestGoldenUpdate rewrites the cases")
	}
}

// decision asks the server directly for its decision about the case's event (none for failure
// cases, inputs that do not map and events that are only recorded).
func (be *backend) decision(t testing.TB, c *goldenCase) json.RawMessage {
	t.Helper()
	req, err := Map(c.provider, c.body(), c.options())
	if err != nil || !req.Intercepted() || c.Failure != "" {
		return nil
	}
	resp, err := be.embedded.Intercept.Intercept(context.Background(), connect.NewRequest(&ahpv1.InterceptRequest{Event: req.Event, Capabilities: req.Capabilities}))
	if err != nil {
		t.Fatalf("Intercept: %v", err)
	}
	return protoJSON(t, stableDecision(resp.Msg.GetDecision()))
}

// run is the command hook: stdout as written, stderr without its final newline, the exit status.
func (be *backend) run(t testing.TB, c *goldenCase) ([]byte, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	exit := be.adapterFor(t, c).Run(context.Background(), bytes.NewReader(c.body()), &stdout, &stderr)
	return stdout.Bytes(), strings.TrimSuffix(stderr.String(), "\n"), exit
}

// post is the HTTP form: status, body and Content-Type of one POST.
func (be *backend) post(t testing.TB, c *goldenCase) (int, []byte, string) {
	t.Helper()
	srv := httptest.NewServer(be.adapterFor(t, c))
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/hooks/"+c.provider.String(), "application/json", bytes.NewReader(c.body()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header.Get("Content-Type")
}

// mainEvent is each runtime's before-tool event, whose cases must show every effect and both
// failure policies.
var mainEvent = map[Provider]string{
	ClaudeCode: PreToolUse, Codex: PreToolUse, Cursor: cursorPreToolUse, Gemini: geminiBeforeTool,
	Copilot: PreToolUse, Factory: PreToolUse, Windsurf: windsurfPreRunCommand, Cline: clinePreToolUse,
}

// TestGoldenCoverage checks that the corpus has what it promises: every adapted event of every
// provider, every effect and both failure policies on its before-tool event, and every effect on
// Claude Code's and Codex's PermissionRequest.
func TestGoldenCoverage(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadGolden(t) {
		ev := c.EventOption
		var obj map[string]any
		if json.Unmarshal(c.Input, &obj) == nil {
			if name, _ := formats[c.provider].eventName(obj); name != "" {
				ev = name
			}
		}
		seen[c.provider.String()+" "+ev] = true
		for _, suffix := range []string{"deny", "ask", "modify", "allow", "none", "fail-open", "fail-closed"} {
			if strings.HasSuffix(c.name, "-"+suffix) {
				seen[c.provider.String()+" "+ev+" "+suffix] = true
			}
		}
	}
	var missing []string
	for _, p := range Providers() {
		for _, ev := range AdaptedEvents(p) {
			if !seen[p.String()+" "+ev] {
				missing = append(missing, p.String()+" "+ev)
			}
		}
		for _, eff := range []string{"deny", "ask", "modify", "allow", "none", "fail-open", "fail-closed"} {
			if !seen[p.String()+" "+mainEvent[p]+" "+eff] {
				missing = append(missing, p.String()+" "+mainEvent[p]+" "+eff)
			}
		}
		if p != ClaudeCode && p != Codex {
			continue
		}
		for _, eff := range []string{"deny", "ask", "modify", "allow", "none"} {
			if !seen[p.String()+" PermissionRequest "+eff] {
				missing = append(missing, p.String()+" PermissionRequest "+eff)
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("golden cases missing: %v", missing)
	}
}

// jsonEqual compares two JSON texts by value; two empty ones are equal.
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
