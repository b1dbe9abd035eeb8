package bridge_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
)

// hooks.testCase is one Agent Hooks message with what the bridge must do with it.
type hooksCase struct {
	name      string
	msg       []byte
	transport bridge.Transport
	// wantCode is the JSON-RPC error code a request must get; 0 means it is valid or that the
	// message is a notification or a response (then no reply is due).
	wantCode int
}

// checkHooksCase drives one message through the bridge. A request must get an answer: a result of
// the right shape when the message is valid, wantCode (and the codec's id) otherwise. A
// notification or a response must get no answer.
func checkHooksCase(t *testing.T, h bridge.Handler, c hooksCase) {
	t.Helper()
	reply := h.Handle(t.Context(), c.msg, c.transport)

	msg := bytes.TrimSuffix(c.msg, []byte("\n"))
	var decodeErr error
	if c.transport == bridge.TransportStdio {
		decodeErr = hooks.CheckStdioLine(msg)
	}
	var m *hooks.Message
	if decodeErr == nil {
		m, decodeErr = hooks.DecodeBytes(msg) // the bridge's decoder: v0.1 and draft
	}
	if decodeErr != nil {
		want, due := hooks.ErrorResponse(decodeErr)
		if !due {
			wantNoReply(t, reply, http.StatusBadRequest)
			return
		}
		if c.wantCode != 0 && int(want.Error.GetCode()) != c.wantCode {
			t.Fatalf("test data says %d, the codec says %d", c.wantCode, want.Error.GetCode())
		}
		wantBody, err := hooks.EncodeMessage(want)
		if err != nil {
			t.Fatal(err)
		}
		resp := decodeReply(t, reply)
		if resp.Error == nil || resp.Error.Code != int(want.Error.GetCode()) {
			t.Fatalf("reply %s\nwant error %d", reply.Body, want.Error.GetCode())
		}
		if !testkit.SameJSON(t, reply.Body, wantBody) {
			t.Errorf("reply %s\nwant      %s", reply.Body, wantBody)
		}
		return
	}
	if c.wantCode != 0 {
		t.Fatalf("test data expects error %d but the message is valid", c.wantCode)
	}
	switch {
	case m.Intercept != nil && m.Intercept.Offer != nil:
		checkDraftAnswer(t, m, reply)
	case m.Intercept != nil:
		id, _ := m.ID.StringValue()
		result := wantResult(t, reply, strconv.Quote(id))
		var v any
		dec := json.NewDecoder(bytes.NewReader(result))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		r, err := hooks.DecodeInterceptResult("result", v)
		if err != nil {
			t.Fatalf("result is not a valid v0.1 intercept result: %v\n%s", err, result)
		}
		if r.GetProtocolVersion() != m.Intercept.ProtocolVersion {
			t.Errorf("protocolVersion %q, want the request's %q", r.GetProtocolVersion(), m.Intercept.ProtocolVersion)
		}
		if len(r.GetEffects()) > 1 {
			t.Errorf("%d effects, v0.1 allows none or one deny", len(r.GetEffects()))
		}
	case m.Capabilities != nil:
		result := wantResult(t, reply, string(mustJSON(t, m.ID)))
		if !bytes.Contains(result, []byte(`"manifest"`)) {
			t.Errorf("capabilities result without a manifest: %s", result)
		}
	case m.Observe != nil:
		wantNoReply(t, reply, http.StatusNoContent)
	default: // a response
		wantNoReply(t, reply, http.StatusBadRequest)
	}
}

// mustJSON writes a Hooks id as JSON.
func mustJSON(t testing.TB, id hooks.ID) []byte {
	t.Helper()
	if s, ok := id.StringValue(); ok {
		return []byte(strconv.Quote(s))
	}
	if n, ok := id.IntValue(); ok {
		return []byte(strconv.FormatInt(n, 10))
	}
	return []byte("null")
}

// TestHooksConformanceFixturesGetTheRightAnswer runs every upstream v0.1 fixture through the
// bridge in the binding it was written for: requests get a valid result or the expected error,
// notifications and responses get nothing.
func TestHooksConformanceFixturesGetTheRightAnswer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedDir, "conformance", "hooks-v0.1")
	raw, err := os.ReadFile(filepath.Join(dir, "fixtures", "0.1.0-draft.1", "manifest.json"))
	if os.IsNotExist(err) {
		t.Skipf("Agent Hooks Protocol v0.1 fixtures not found under %s (set AHP_SHARED_DIR); the project's own cases in internal/codec/hooks/testdata still run", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Cases []struct {
			ID, Path, Binding string
			ExpectedValid     bool
		}
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	// The invalid fixtures that are requests, and their code (the others are responses).
	wantCodes := map[string]int{
		"stdio.intercept-request-multiline.invalid":  -32700,
		"http.intercept-request-id-mismatch.invalid": -32602,
	}
	var files []hooksFile
	bindings := map[string]bridge.Transport{"stdio-jsonl": bridge.TransportStdio, "http-json": bridge.TransportHTTP}
	for _, c := range manifest.Cases {
		tr, ok := bindings[c.Binding]
		if !ok {
			continue // registrations are not JSON-RPC messages
		}
		files = append(files, hooksFile{name: c.ID, path: c.Path, transport: tr, wantCode: wantCodes[c.ID]})
	}
	runHooksFiles(t, dir, files)
}

// TestHooksProjectCasesGetTheRightAnswer runs the project's own Agent Hooks messages
// (internal/codec/hooks/testdata): 124 cases covering every error code and shape.
func TestHooksProjectCasesGetTheRightAnswer(t *testing.T) {
	t.Parallel()
	dir := hooksTestdata
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Cases []struct {
			Path, Kind string
			Valid      bool
			ErrorCode  int
		}
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	var files []hooksFile
	kinds := map[string]bridge.Transport{"message": bridge.TransportHTTP, "stdio": bridge.TransportStdio}
	for _, c := range manifest.Cases {
		tr, ok := kinds[c.Kind]
		switch {
		case !ok:
			continue // registrations
		case c.Path == "stdio/no-newline.invalid.jsonl":
			continue // the terminator is the stdio transport's to check, not the Handler's
		case c.Path == "message/intercept-draft-version.invalid.json":
			continue // refused by the v0.1 codec, but the bridge serves "draft" (draft_test.go)
		}
		files = append(files, hooksFile{name: c.Path, path: c.Path, transport: tr, wantCode: c.ErrorCode})
	}
	if len(files) < 80 {
		t.Errorf("only %d message cases", len(files))
	}
	runHooksFiles(t, dir, files)
}

// hooksFile is a JSON-RPC message file under a fixture directory, the transport it is written
// for and the error code its answer must carry (0: a valid answer, or none for a notification).
type hooksFile struct {
	name, path string
	transport  bridge.Transport
	wantCode   int
}

// runHooksFiles sends every file through a bridge of each mode and checks the answer.
func runHooksFiles(t *testing.T, dir string, files []hooksFile) {
	t.Helper()
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {
		for _, f := range files {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.path)))
				if err != nil {
					t.Fatal(err)
				}
				checkHooksCase(t, b, hooksCase{name: f.name, msg: data, transport: f.transport, wantCode: f.wantCode})
			})
		}
	})
}

const hooksInterceptTemplate = `{"jsonrpc":"2.0","id":"evt-1","method":"hooks/intercept","params":{"protocolVersion":"0.1","event":{"id":"evt-1","source":"urn:test:harness","type":"tool.before","time":"2026-08-24T08:51:14Z","session":{"id":"s1"},"tool":{"callId":"c1","name":"Bash","kind":"shell","input":{"command":%q}}},"capabilities":{"effects":["deny"]}}}`

func hooksIntercept(command string) string {
	return strings.Replace(hooksInterceptTemplate, "%q", strconv.Quote(command), 1)
}

// TestHooksInterceptRendersThePolicyDecision checks both outcomes v0.1 can express, from the
// server's default policy: no effect, and exactly one deny with the server's decision id.
func TestHooksInterceptRendersThePolicyDecision(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {

		allowed := wantResult(t, handle(t, b, hooksIntercept("ls -la"), bridge.TransportStdio), `"evt-1"`)
		want := `{"effects":[],"extensions":{"dev.ahpgateway":{"policyDigest":"` + policy.Default().Digest() + `"}},"protocolVersion":"0.1"}`
		if got := withoutKey(t, allowed, "decisionId"); got != want {
			t.Errorf("ls: %s", got)
		}

		denied := wantResult(t, handle(t, b, hooksIntercept("rm -rf /"), bridge.TransportHTTP), `"evt-1"`)
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
			Effects         []struct {
				Type, Reason, Code string
			}
			Extensions map[string]map[string]any
		}
		if err := json.Unmarshal(denied, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Effects) != 1 || r.Effects[0].Type != "deny" || r.Effects[0].Code != "dev.ahpgateway.policy.destructive" {
			t.Errorf("rm -rf /: %s", denied)
		}
		ns := r.Extensions["dev.ahpgateway"]
		if ns["decisionId"] == nil || ns["synthetic"] != nil {
			t.Errorf("a policy denial carries its decision id and is not synthetic: %s", denied)
		}
	})
}

// TestHooksErrorsFollowTheSpecification checks the codes the Agent Hooks Protocol reserves.
func TestHooksErrorsFollowTheSpecification(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), nil)

	mismatch := strings.Replace(hooksIntercept("ls"), `"id":"evt-1","method"`, `"id":"other","method"`, 1)
	wantError(t, handle(t, b, mismatch, bridge.TransportHTTP), `"other"`, -32602, "Invalid params")

	unknown := strings.Replace(hooksIntercept("ls"), `"protocolVersion":"0.1"`, `"protocolVersion":"0.2"`, 1)
	resp := wantError(t, handle(t, b, unknown, bridge.TransportHTTP), `"evt-1"`, -32001, "")
	var data struct{ Supported []string }
	if err := json.Unmarshal(resp.Error.Data, &data); err != nil || strings.Join(data.Supported, ",") != "0.1,draft" {
		t.Errorf("-32001 data = %s, want supported [\"0.1\",\"draft\"]", resp.Error.Data)
	}

	notInterceptable := strings.Replace(hooksIntercept("ls"), `"type":"tool.before"`, `"type":"tool.after"`, 1)
	wantError(t, handle(t, b, notInterceptable, bridge.TransportHTTP), `"evt-1"`, -32002, "")

	wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":7,"method":"hooks/unknown","params":{}}`, bridge.TransportHTTP), `7`, -32601, "")
	wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":7,"method":"hooks/intercept"`, bridge.TransportHTTP), `null`, -32700, "")
	wantError(t, handle(t, b, `[{"jsonrpc":"2.0","id":7,"method":"hooks/intercept"}]`, bridge.TransportHTTP), `null`, -32600, "")

	// Notifications are never answered, even when invalid or unknown.
	wantNoReply(t, handle(t, b, `{"jsonrpc":"2.0","method":"hooks/intercept","params":{}}`, bridge.TransportStdio), 0)
	wantNoReply(t, handle(t, b, `{"jsonrpc":"2.0","method":"hooks/nothing"}`, bridge.TransportHTTP), http.StatusBadRequest)
	wantNoReply(t, handle(t, b, `{"jsonrpc":"1.0","method":"hooks/observe","params":{}}`, bridge.TransportUnix), 0)
}

// TestHooksObserveIsNeverAnswered checks the accepted notification on each transport.
func TestHooksObserveIsNeverAnswered(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), nil)
	observe := `{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"0.1","event":{"id":"evt-2","source":"urn:test:harness","type":"session.start","time":"2026-08-24T08:51:14Z","session":{"id":"s1"}}}}`
	for _, tr := range []bridge.Transport{bridge.TransportStdio, bridge.TransportHTTP, bridge.TransportWebSocket, bridge.TransportUnix} {
		wantNoReply(t, handle(t, b, observe, tr), http.StatusNoContent)
	}
}

// TestHooksStdioFramingIsChecked checks that a message on an NDJSON transport is one line, while
// HTTP and WebSocket take any JSON layout.
func TestHooksStdioFramingIsChecked(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), nil)
	pretty := strings.Replace(hooksIntercept("ls"), `,"method"`, ",\n  \"method\"", 1)
	wantError(t, handle(t, b, pretty, bridge.TransportStdio), `null`, -32700, "")
	wantError(t, handle(t, b, hooksIntercept("ls")+"\r", bridge.TransportUnix), `null`, -32700, "")
	wantResult(t, handle(t, b, pretty, bridge.TransportHTTP), `"evt-1"`)
	wantResult(t, handle(t, b, pretty, bridge.TransportWebSocket), `"evt-1"`)
	// The line terminator itself is tolerated.
	wantResult(t, handle(t, b, hooksIntercept("ls")+"\n", bridge.TransportStdio), `"evt-1"`)
}

// TestHooksCapabilitiesDescribesTheBridge checks the hooks/capabilities manifest.
func TestHooksCapabilitiesDescribesTheBridge(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), func(c *bridge.Config) { c.Version = "1.2.3"; c.Timeout = bridge.DefaultTimeout })
	result := wantResult(t, handle(t, b, `{"jsonrpc":"2.0","id":"discovery","method":"hooks/capabilities","params":{"protocolVersion":"0.1"}}`, bridge.TransportHTTP), `"discovery"`)
	want := `{"protocolVersion":"0.1","manifest":{
		"events":[
			{"event":"tool.before","modes":["intercept","observe"],"capabilities":{"effects":["deny"]}},
			{"event":"tool.after","modes":["observe"],"capabilities":{"effects":[]}},
			{"event":"tool.error","modes":["observe"],"capabilities":{"effects":[]}},
			{"event":"session.start","modes":["observe"],"capabilities":{"effects":[]}},
			{"event":"session.end","modes":["observe"],"capabilities":{"effects":[]}}],
		"transports":["stdio","http"],
		"extensions":{"dev.ahpgateway":{"bridgeVersion":"1.2.3","serverVersion":"2.4.0","hooksProtocolVersions":["0.1","draft"],
			"harnessProtocolVersion":"2.4","failurePolicy":"fail-closed","timeoutMs":2000}}}}`
	if !testkit.SameJSON(t, result, []byte(want)) {
		t.Errorf("manifest:\n%s\nwant\n%s", result, want)
	}
	// Exact matching: a version neither "0.1" nor "draft" is refused.
	wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":"discovery","method":"hooks/capabilities","params":{"protocolVersion":"0.1.0"}}`, bridge.TransportHTTP), `"discovery"`, -32001, "")
}
