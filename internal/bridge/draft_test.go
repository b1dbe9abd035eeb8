package bridge_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/server"
)

// checkDraftAnswer checks the bridge's answer to a valid draft hooks/intercept request: a result
// in the draft (protocolVersion "draft", valid by the draft decoder) whose effects stay inside
// what the request advertised.
func checkDraftAnswer(t *testing.T, req *hooks.Message, reply bridge.Reply) {
	t.Helper()
	id, _ := req.ID.StringValue()
	wantResult(t, reply, jsonString(id))
	m, err := hooks.DecodeBytes(reply.Body)
	if err != nil {
		t.Fatalf("answer is not a valid draft response: %v\n%s", err, reply.Body)
	}
	if hooks.VersionOf(m) != hooks.Draft || m.Result == nil {
		t.Fatalf("answer is not a draft intercept result: %s", reply.Body)
	}
	for _, e := range m.Result.GetEffects() {
		if !req.Intercept.Offer.Has(e.GetType()) {
			t.Errorf("effect %q was not advertised: %s", e.GetType(), reply.Body)
		}
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// compactLine makes one stdio line of a JSON document (the HTTP fixtures are pretty-printed).
func compactLine(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return data // unparsable: send as is, the codec answers -32700
	}
	return append(buf.Bytes(), '\n')
}

// wrapDraft wraps the bare params or result documents some draft fixtures hold in their
// JSON-RPC envelope (hooks/intercept when they carry capabilities, hooks/observe when they carry
// an event, a response otherwise).
func wrapDraft(t testing.TB, data []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil || doc["jsonrpc"] != nil {
		return data
	}
	ev, _ := doc["event"].(map[string]any)
	var env map[string]any
	switch {
	case doc["capabilities"] != nil:
		env = map[string]any{"jsonrpc": "2.0", "id": ev["id"], "method": "hooks/intercept", "params": doc}
	case doc["event"] != nil:
		env = map[string]any{"jsonrpc": "2.0", "method": "hooks/observe", "params": doc}
	default:
		env = map[string]any{"jsonrpc": "2.0", "id": "fixture", "result": doc}
	}
	out, _ := json.Marshal(env)
	return out
}

// TestDraftFixturesThroughTheBridge sends every JSON-RPC fixture of the shared draft manifest
// through the bridge, on stdio and on HTTP, in both modes: valid requests get a draft result
// inside their offer (or a manifest), invalid ones exactly the codec's error, notifications and
// responses nothing.
func TestDraftFixturesThroughTheBridge(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedDir, "conformance", "hooks-draft")
	raw, err := os.ReadFile(filepath.Join(dir, "fixtures", "draft", "manifest.json"))
	if os.IsNotExist(err) {
		t.Skipf("Agent Hooks Protocol draft fixtures not found under %s (set AHP_SHARED_DIR); internal/codec/hooks/testdata/draft still runs (TestDraftProjectCasesThroughTheBridge)", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Cases []struct{ ID, Path, Binding string }
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	var cases []hooksCase
	for _, c := range manifest.Cases {
		if c.ID == "http.intercept-request.valid" {
			continue // a stale pre-catalogue copy (see internal/codec/hooks draftStale)
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.Path)))
		if err != nil {
			t.Fatal(err)
		}
		switch c.Binding {
		case "stdio-jsonl":
			cases = append(cases, hooksCase{name: c.ID + "/stdio", msg: data, transport: bridge.TransportStdio})
		case "http-json":
			msg := wrapDraft(t, data)
			cases = append(cases,
				hooksCase{name: c.ID + "/http", msg: msg, transport: bridge.TransportHTTP},
				hooksCase{name: c.ID + "/stdio", msg: compactLine(t, msg), transport: bridge.TransportStdio})
		}
	}
	if len(cases) < 270 {
		t.Fatalf("only %d draft cases", len(cases))
	}
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				checkHooksCase(t, b, c)
			})
		}
	})
}

// TestDraftProjectCasesThroughTheBridge runs the project's own draft messages through the bridge
// on every transport.
func TestDraftProjectCasesThroughTheBridge(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(filepath.Join(hooksTestdata, "draft"))
	if err != nil {
		t.Fatal(err)
	}
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "registration-") {
				continue // registration documents, not messages
			}
			data, err := os.ReadFile(filepath.Join(hooksTestdata, "draft", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for tn, tr := range map[string]bridge.Transport{"stdio": bridge.TransportStdio, "http": bridge.TransportHTTP, "ws": bridge.TransportWebSocket, "unix": bridge.TransportUnix} {
				t.Run(e.Name()+"/"+tn, func(t *testing.T) {
					t.Parallel()
					checkHooksCase(t, b, hooksCase{name: e.Name(), msg: compactLine(t, data), transport: tr})
				})
			}
		}
	})
}

// draftPolicy asks for approval of shell commands and sends a message with every decision.
const draftPolicy = `version: 1
name: draft-test
rules:
  - id: ask-shell
    on: [tool.before]
    match: {tool_kinds: [shell]}
    effect:
      ask: {reason: shell commands need approval}
`

func policyBridge(t *testing.T, policy string) *bridge.Bridge {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	clients, closer, err := bridge.NewEmbedded(server.Config{Logger: quietLogger(), Version: "2.4.0", PolicyFile: path, PolicyPollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return newBridge(t, clients, nil)
}

// TestDraftAndV01AnswerInTheirOwnTerms sends the same decision to both versions: the draft caller
// that advertises ask gets ask itself; the v0.1 caller gets the labelled deny fallback, and
// neither answer carries the other's version.
func TestDraftAndV01AnswerInTheirOwnTerms(t *testing.T) {
	t.Parallel()
	b := policyBridge(t, draftPolicy)
	draft := `{"jsonrpc":"2.0","id":"d1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"d1","source":"urn:test:h","type":"tool.before","time":"2026-09-15T12:00:00Z","call":{"id":"c1"},"tool":{"name":"Bash","input":{"command":"ls"},"origin":"native","kind":"shell"},"path":"native"},"capabilities":{"effects":["deny","ask"]}}}`
	for _, tr := range []bridge.Transport{bridge.TransportStdio, bridge.TransportHTTP, bridge.TransportWebSocket, bridge.TransportUnix} {
		result := wantResult(t, handle(t, b, draft, tr), `"d1"`)
		if !bytes.Contains(result, []byte(`"protocolVersion":"draft"`)) || !bytes.Contains(result, []byte(`{"type":"ask"}`)) {
			t.Errorf("%v: draft answer %s, want ask in the draft", tr, result)
		}
		v01 := wantResult(t, handle(t, b, hooksIntercept("ls"), tr), `"evt-1"`)
		if !bytes.Contains(v01, []byte(`"protocolVersion":"0.1"`)) || !bytes.Contains(v01, []byte(`"type":"deny"`)) ||
			bytes.Contains(v01, []byte(`"ask"`)) || bytes.Contains(v01, []byte("draft")) {
			t.Errorf("%v: v0.1 answer %s, want the deny fallback in v0.1 terms", tr, v01)
		}
	}
	// Without ask advertised, the draft caller also gets the labelled fallback, recorded.
	before := b.Counters().DraftFallbacks
	noAsk := strings.Replace(draft, `["deny","ask"]`, `["deny"]`, 1)
	result := wantResult(t, handle(t, b, noAsk, bridge.TransportHTTP), `"d1"`)
	if !bytes.Contains(result, []byte(`"code":"dev.ahpgateway.policy.fallback"`)) {
		t.Errorf("answer %s, want the labelled fallback deny", result)
	}
	if b.Counters().DraftFallbacks != before+1 {
		t.Errorf("DraftFallbacks = %d, want %d", b.Counters().DraftFallbacks, before+1)
	}
}

// TestDraftCapabilitiesManifest checks the draft discovery answer against the configuration.
func TestDraftCapabilitiesManifest(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), func(c *bridge.Config) {
		c.Timeout = bridge.DefaultTimeout
		c.HooksTransports = []string{"stdio", "http", "ws"}
		c.HooksAuthentication = true
	})
	reply := handle(t, b, `{"jsonrpc":"2.0","id":"discovery","method":"hooks/capabilities","params":{"protocolVersion":"draft"}}`, bridge.TransportHTTP)
	wantResult(t, reply, `"discovery"`)
	m, err := hooks.DecodeBytes(reply.Body)
	if err != nil || m.Discovery == nil {
		t.Fatalf("not a valid draft discovery result (%v): %s", err, reply.Body)
	}
	var doc struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			Manifest        struct {
				Events []struct {
					Event        string   `json:"event"`
					Modes        []string `json:"modes"`
					Capabilities struct{ Effects []string }
				} `json:"events"`
				Transports     []string `json:"transports"`
				Authentication []string `json:"authentication"`
				Limits         map[string]int64
			} `json:"manifest"`
		} `json:"result"`
	}
	if err := json.Unmarshal(reply.Body, &doc); err != nil {
		t.Fatal(err)
	}
	mf := doc.Result.Manifest
	if doc.Result.ProtocolVersion != "draft" || len(mf.Events) != 32 {
		t.Fatalf("version %q, %d events", doc.Result.ProtocolVersion, len(mf.Events))
	}
	intercept := 0
	for _, e := range mf.Events {
		if slices.Contains(e.Modes, "intercept") {
			intercept++
			if !slices.Equal(e.Capabilities.Effects, hooks.AllowedEffects(e.Event)) {
				t.Errorf("%s effects %v", e.Event, e.Capabilities.Effects)
			}
		}
	}
	if intercept != 19 {
		t.Errorf("%d interceptable events, want 19", intercept)
	}
	if !slices.Equal(mf.Transports, []string{"stdio", "http"}) || !slices.Equal(mf.Authentication, []string{"bearer"}) {
		t.Errorf("transports %v, authentication %v", mf.Transports, mf.Authentication)
	}
	if mf.Limits["minTimeoutMs"] != bridge.DefaultTimeout.Milliseconds() || mf.Limits["maxTimeoutMs"] != bridge.MaxTimeout.Milliseconds() {
		t.Errorf("limits %v", mf.Limits)
	}
}

// TestDraftPolicyEffectsReachTheCaller: draft-only effect forms of a policy travel through the
// server and the bridge to a draft caller that advertised them.
func TestDraftPolicyEffectsReachTheCaller(t *testing.T) {
	t.Parallel()
	b := policyBridge(t, `version: 1
rules:
  - id: remind
    on: [turn.start]
    effect:
      inject: {deliver_at: next_turn, text: Remember the style guide.}
  - id: stop-compaction
    on: [context.compact.before]
    when: 'event.catalogue.trigger == "auto"'
    effect:
      return: {value: [{id: s1, kind: text, mediaType: text/plain, selection: body, text: summary}]}
`)
	turn := `{"jsonrpc":"2.0","id":"t1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"t1","source":"urn:test:h","type":"turn.start","time":"2026-09-15T12:00:00Z","turn":{"id":"x"},"trigger":"user","items":[]},"capabilities":{"effects":["inject"],"inject":{"context":{"append":true,"deliverAt":["next_turn"]}}}}}`
	result := wantResult(t, handle(t, b, turn, bridge.TransportStdio), `"t1"`)
	if !bytes.Contains(result, []byte(`"type":"inject"`)) || !bytes.Contains(result, []byte(`"deliverAt":"next_turn"`)) {
		t.Errorf("turn.start answer %s, want the inject", result)
	}
	compact := `{"jsonrpc":"2.0","id":"c1","method":"hooks/intercept","params":{"protocolVersion":"draft","event":{"id":"c1","source":"urn:test:h","type":"context.compact.before","time":"2026-09-15T12:00:00Z","trigger":"auto","items":[]},"capabilities":{"effects":["return","deny"]}}}`
	result = wantResult(t, handle(t, b, compact, bridge.TransportHTTP), `"c1"`)
	if !bytes.Contains(result, []byte(`"type":"return"`)) {
		t.Errorf("context.compact.before answer %s, want the return", result)
	}
}
