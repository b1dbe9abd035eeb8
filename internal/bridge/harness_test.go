package bridge_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/types/known/structpb"
)

// harnessVector is one line of internal/codec/harness/testdata/errors.jsonl.
type harnessVector struct {
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	Method       string          `json:"method"`
	Notification bool            `json:"notification"`
	Params       json.RawMessage `json:"params"`
	Code         int             `json:"code"`
	Message      string          `json:"message"`
}

// TestHarnessErrorVectorsMatchTheReference sends every recorded and derived error vector and
// requires the reference's code and message byte for byte: requests on stdio, notifications on
// HTTP (where the reference answers them with id "") and on stdio (where nothing is answered).
func TestHarnessErrorVectorsMatchTheReference(t *testing.T) {
	t.Parallel()
	lines := readLines(t, filepath.Join(harnessTestdata, "errors.jsonl"))
	if len(lines) < 50 {
		t.Fatalf("only %d vectors", len(lines))
	}
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {
		for _, line := range lines {
			var v harnessVector
			dec := json.NewDecoder(strings.NewReader(line))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			t.Run(v.Name, func(t *testing.T) {
				t.Parallel()
				if v.Notification {
					msg := `{"jsonrpc":"2.0","method":` + strconv.Quote(v.Method) + `,"params":` + string(v.Params) + `}`
					wantError(t, handle(t, b, msg, bridge.TransportHTTP), `""`, v.Code, v.Message)
					wantNoReply(t, handle(t, b, msg, bridge.TransportStdio), 0)
					return
				}
				msg := `{"jsonrpc":"2.0","id":"r1","method":` + strconv.Quote(v.Method) + `,"params":` + string(v.Params) + `}`
				reply := handle(t, b, msg, bridge.TransportStdio)
				wantError(t, reply, `"r1"`, v.Code, v.Message)
				// The envelope keeps the reference's member order.
				prefix := `{"jsonrpc":"2.0","id":"r1","error":{"code":` + strconv.Itoa(v.Code) + `,"message":`
				if !bytes.HasPrefix(reply.Body, []byte(prefix)) {
					t.Errorf("reply %s\ndoes not start %s", reply.Body, prefix)
				}
			})
		}
	})
}

// readExchange reads exchanges/<name>/request.json and response.json (absent: nil).
func readExchange(t *testing.T, name string) (request, response []byte) {
	t.Helper()
	dir := filepath.Join(harnessTestdata, "exchanges", name)
	request, err := os.ReadFile(filepath.Join(dir, "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	response, err = os.ReadFile(filepath.Join(dir, "response.json"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.TrimSpace(request), bytes.TrimSpace(response)
}

// forEachMode runs test, in parallel, against a bridge of each mode (upstream and embedded).
func forEachMode(t *testing.T, test func(t *testing.T, b *bridge.Bridge)) {
	t.Helper()
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			test(t, newBridge(t, mode.clients(t), nil))
		})
	}
}

// exchangeResult sends the request of the named reference exchange over tr and returns the
// result of the answer, which must answer the request's id, and the reference's response.
func exchangeResult(t *testing.T, b *bridge.Bridge, name string, tr bridge.Transport) (got json.RawMessage, want []byte) {
	t.Helper()
	req, want := readExchange(t, name)
	var r struct{ ID string }
	if err := json.Unmarshal(req, &r); err != nil {
		t.Fatal(err)
	}
	return envelopeOf(t, handle(t, b, string(req), tr), strconv.Quote(r.ID)), want
}

// envelopeOf returns a reply's id and result, checking the reference's member order.
func envelopeOf(t *testing.T, reply bridge.Reply, id string) json.RawMessage {
	t.Helper()
	prefix := `{"jsonrpc":"2.0","id":` + id + `,"result":`
	if !bytes.HasPrefix(reply.Body, []byte(prefix)) {
		t.Fatalf("reply %s\ndoes not start %s", reply.Body, prefix)
	}
	return wantResult(t, reply, id)
}

// decodeNumber decodes JSON keeping numbers exact.
func decodeNumber(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestHarnessExchangesHaveTheReferenceShape replays the digest's request/response vectors. The
// answers come from this project's policy and typed deciders, so decision contents differ from
// the digest's hand-written handler; what must match is everything an a3s-ahp client checks: the
// envelope, the id, and a result that parses as the reference's type for that method.
func TestHarnessExchangesHaveTheReferenceShape(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {

		t.Run("handshake", func(t *testing.T) {
			t.Parallel()
			got, want := exchangeResult(t, b, "handshake", bridge.TransportStdio)
			// Our server advertises the typed events too; everything else is the reference's bytes.
			var g, w map[string]any
			json.Unmarshal(got, &g)
			json.Unmarshal(want, &w)
			wantCaps := w["result"].(map[string]any)["harness_info"].(map[string]any)["capabilities"].([]any)
			gotCaps := g["harness_info"].(map[string]any)["capabilities"].([]any)
			for _, c := range wantCaps {
				if !slices.Contains(gotCaps, c) {
					t.Errorf("capability %v missing from %v", c, gotCaps)
				}
			}
			g["harness_info"].(map[string]any)["capabilities"] = wantCaps
			if !testkit.SameJSON(t, mustMarshal(t, g), mustMarshal(t, w["result"])) {
				t.Errorf("handshake result %s\nwant %s", got, want)
			}
			if !bytes.HasPrefix(got, []byte(`{"config":{"batch_size":100,"max_depth":10,"timeout_ms":10000},"harness_info":{"capabilities":[`)) {
				t.Errorf("keys are not sorted as serde sorts them: %s", got)
			}
		})
		t.Run("handshake_client", func(t *testing.T) {
			t.Parallel()
			got, _ := exchangeResult(t, b, "handshake_client", bridge.TransportStdio)
			if _, err := harness.DecodeHandshakeResponse("result", decodeNumber(t, got)); err != nil {
				t.Error(err)
			}
		})
		t.Run("batch", func(t *testing.T) {
			t.Parallel()
			got, _ := exchangeResult(t, b, "batch", bridge.TransportHTTP)
			ds, err := harness.DecodeBatchResult("result", decodeNumber(t, got))
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 5 {
				t.Fatalf("%d decisions for 5 events: %s", len(ds), got)
			}
		})
		t.Run("query", func(t *testing.T) {
			t.Parallel()
			got, _ := exchangeResult(t, b, "query", bridge.TransportStdio)
			q, err := harness.DecodeQueryResponse("result", decodeNumber(t, got))
			if err != nil {
				t.Fatal(err)
			}
			if _, isBool := q.GetAnswer().GetKind().(*structpb.Value_BoolValue); !isBool {
				t.Errorf("should_i_proceed answer: %s", got)
			}
		})
		for _, typed := range []struct{ exchange, eventType string }{
			{"idle", "idle"}, {"idle_defer", "idle"}, {"intent_detection", "intent_detection"},
			{"context_perception", "context_perception"}, {"memory_recall", "memory_recall"},
			{"planning", "planning"}, {"reasoning", "reasoning"}, {"rate_limit", "rate_limit"},
			{"confirmation", "confirmation"},
		} {
			t.Run(typed.exchange, func(t *testing.T) {
				t.Parallel()
				got, _ := exchangeResult(t, b, typed.exchange, bridge.TransportStdio)
				if _, err := harness.DecodeTypedDecision(typed.eventType, "result", decodeNumber(t, got)); err != nil {
					t.Errorf("result does not parse as the reference's %s decision: %v\n%s", typed.eventType, err, got)
				}
				// Typed answers are written by the codec, so they are in the reference's exact form:
				// re-encoding what was parsed gives the same bytes.
				m, _ := harness.DecodeTypedDecision(typed.eventType, "result", decodeNumber(t, got))
				again, err := harness.EncodeTypedDecision(m)
				if err != nil || !bytes.Equal(again, got) {
					t.Errorf("result is not in the reference's canonical form:\n%s\n%s", got, again)
				}
			})
		}
	})
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const harnessPreAction = `{"jsonrpc":"2.0","id":%s,"method":"ahp/event","params":{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","arguments":{"command":%s}}}}`

func harnessEvent(id, command string) string {
	s := strings.Replace(harnessPreAction, "%s", id, 1)
	return strings.Replace(s, "%s", strconv.Quote(command), 1)
}

// TestHarnessEventRendersThePolicyDecision checks allow and block from the default policy.
func TestHarnessEventRendersThePolicyDecision(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, b *bridge.Bridge) {
		allow := envelopeOf(t, handle(t, b, harnessEvent(`"e1"`, "ls"), bridge.TransportStdio), `"e1"`)
		want := `{"decision":"allow","metadata":{"dev.ahpgateway/policy_digest":"` + policy.Default().Digest() + `"}}`
		if got := withoutKey(t, allow, "dev.ahpgateway/decision_id"); got != want {
			t.Errorf("ls: %s", allow)
		}
		block := envelopeOf(t, handle(t, b, harnessEvent(`"e2"`, "rm -rf /"), bridge.TransportStdio), `"e2"`)
		var d struct {
			Decision, Reason string
			Metadata         map[string]any
		}
		json.Unmarshal(block, &d)
		if d.Decision != "block" || d.Reason == "" || d.Metadata["dev.ahpgateway/synthetic"] != nil {
			t.Errorf("rm -rf /: %s", block)
		}
	})
}

// TestHarnessFollowsJSONRPC2WhereTheReferenceDoesNot pins each deliberate difference.
func TestHarnessFollowsJSONRPC2WhereTheReferenceDoesNot(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), func(c *bridge.Config) { c.Dialect = bridge.DialectHarness })
	for _, tr := range []bridge.Transport{bridge.TransportStdio, bridge.TransportHTTP, bridge.TransportWebSocket, bridge.TransportUnix} {
		// A numeric id is a request id, answered with the same number.
		envelopeOf(t, handle(t, b, harnessEvent("42", "ls"), tr), `42`)
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":-7,"method":"ahp/handshake","params":{}}`, tr), `-7`, -32602, "Invalid params: missing field `protocol_version`")
		// ... and so a fire-and-forget type sent with one is refused like any request.
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":1,"method":"ahp/event","params":{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":null}}`, tr),
			`1`, -32602, "Fire-and-forget event post_action must be sent as a notification")
		// Null, fractional and unsafe ids are not ids.
		for _, id := range []string{"null", "1.5", "1e3", "9007199254740992", "true", "{}"} {
			wantError(t, handle(t, b, harnessEvent(id, "ls"), tr), `null`, -32600, "Invalid JSON-RPC message")
		}
		// Unparsable input: -32700 with id null.
		for _, junk := range []string{`{"jsonrpc":"2.0","id":"x"`, "garbage", "", `{} {}`, "{\"id\":\"\xff\"}"} {
			wantError(t, handle(t, b, junk, tr), `null`, -32700, "Parse error")
		}
		// A batch array, a scalar, no method, a repeated member, another jsonrpc: -32600.
		wantError(t, handle(t, b, `[`+harnessEvent(`"e1"`, "ls")+`]`, tr), `null`, -32600, "Invalid JSON-RPC message")
		wantError(t, handle(t, b, `"ahp/event"`, tr), `null`, -32600, "Invalid JSON-RPC message")
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":"e1","params":{}}`, tr), `"e1"`, -32600, "Invalid JSON-RPC message")
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":"e1","id":"e2","method":"ahp/handshake","params":{}}`, tr), `null`, -32600, "Invalid JSON-RPC message")
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":"e1","method":"ahp/handshake","method":"ahp/event","params":{}}`, tr), `"e1"`, -32600, "Invalid JSON-RPC message")
		wantError(t, handle(t, b, strings.Replace(harnessEvent(`"e1"`, "ls"), `"2.0"`, `"1.0"`, 1), tr), `"e1"`, -32600, "Invalid JSON-RPC message")
		// params may be omitted in JSON-RPC 2.0; the method then reads null.
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":"e1","method":"ahp/event"}`, tr), `"e1"`, -32602, "Invalid params: invalid type: null, expected struct AhpEvent")
		// Unknown methods, including the other dialect's.
		wantError(t, handle(t, b, `{"jsonrpc":"2.0","id":"e1","method":"harness/event","params":{}}`, tr), `"e1"`, -32601, "Method not found")
		wantError(t, handle(t, b, hooksIntercept("ls"), tr), `"evt-1"`, -32601, "Method not found")
	}
	// Something that looks like a response is not answered on a stream (no ping-pong), and is an
	// invalid body on HTTP.
	resp := `{"jsonrpc":"2.0","id":"e1","result":{"decision":"allow"}}`
	wantNoReply(t, handle(t, b, resp, bridge.TransportStdio), 0)
	wantNoReply(t, handle(t, b, resp, bridge.TransportWebSocket), 0)
	wantError(t, handle(t, b, resp, bridge.TransportHTTP), `null`, -32600, "Invalid JSON-RPC message")
}

// TestHarnessNotificationsAreNeverAnsweredOnStreams checks notifications on every transport:
// silence on stdio, WebSocket and Unix sockets; on HTTP 204 when accepted and the reference's
// id "" error when refused.
func TestHarnessNotificationsAreNeverAnsweredOnStreams(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), nil)
	ok := `{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash","status":"ok"}}}`
	blocking := strings.Replace(ok, "post_action", "pre_action", 1)
	brokenEnvelope := strings.Replace(ok, `"2.0"`, `"1.0"`, 1)
	otherMethod := `{"jsonrpc":"2.0","method":"ahp/handshake","params":{}}`
	for _, tr := range []bridge.Transport{bridge.TransportStdio, bridge.TransportWebSocket, bridge.TransportUnix} {
		for _, msg := range []string{ok, blocking, brokenEnvelope, otherMethod, `{"method":"x"}`} {
			wantNoReply(t, handle(t, b, msg, tr), 0)
		}
	}
	wantNoReply(t, handle(t, b, ok, bridge.TransportHTTP), http.StatusNoContent)
	wantNoReply(t, handle(t, b, otherMethod, bridge.TransportHTTP), http.StatusNoContent)
	wantError(t, handle(t, b, blocking, bridge.TransportHTTP), `""`, -32603, "Handler error: Protocol error: Blocking event pre_action must be sent as a request")
	wantError(t, handle(t, b, brokenEnvelope, bridge.TransportHTTP), `""`, -32600, "Invalid JSON-RPC message")
}

// TestHarnessBatchIsValidatedBeforeAnythingIsDecided checks the limits and that a rejected batch
// has no side effects upstream.
func TestHarnessBatchIsValidatedBeforeAnythingIsDecided(t *testing.T) {
	t.Parallel()
	b := newBridge(t, embeddedClients(t), func(c *bridge.Config) {
		c.HarnessConfig = bridge.DefaultHarnessConfig()
		two := uint64(2)
		c.HarnessConfig.BatchSize = &two
	})
	entry := `{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"bash"}}`
	batch := func(entries ...string) string {
		return `{"jsonrpc":"2.0","id":"b1","method":"ahp/batch","params":{"events":[` + strings.Join(entries, ",") + `]}}`
	}
	wantError(t, handle(t, b, batch(entry, entry, entry), bridge.TransportStdio), `"b1"`, -32602, "Batch size 3 exceeds configured limit 2")
	if got := envelopeOf(t, handle(t, b, batch(entry, entry), bridge.TransportStdio), `"b1"`); !bytes.HasPrefix(got, []byte(`{"decisions":[{"decision":"allow"`)) {
		t.Errorf("two entries: %s", got)
	}
	if got := envelopeOf(t, handle(t, b, batch(), bridge.TransportStdio), `"b1"`); string(got) != `{"decisions":[]}` {
		t.Errorf("empty batch: %s", got)
	}
	deep := strings.Replace(entry, `"depth":0`, `"depth":11`, 1)
	wantError(t, handle(t, b, batch(entry, deep), bridge.TransportStdio), `"b1"`, -32602, "Invalid event: Protocol error: Event depth 11 exceeds configured max depth 10")
}
