package harness_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

const testdataDir = "testdata"

// defaultConfig is the stock AhpServer's config (§1.2).
func defaultConfig() *ahpv1.HarnessConfig {
	return &ahpv1.HarnessConfig{TimeoutMs: new(uint64(10000)), BatchSize: new(uint64(100)), MaxDepth: new(uint32(10))}
}

// parseJSON decodes JSON keeping numbers as json.Number, as a bridge does.
func parseJSON(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("parse %s: %v", data, err)
	}
	return v
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// readLines reads a JSONL file into raw lines.
func readLines(t testing.TB, name string) [][]byte {
	t.Helper()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, slices.Clone(line))
		}
	}
	return out
}

// jSONEqual compares JSON values: same keys, same values; integers exactly, other numbers
// by value.
func jSONEqual(a, b any) bool {
	return jsonTreeEqual(a, b, func(x, y json.Number) bool {
		xi, xok := new(big.Int).SetString(string(x), 10)
		yi, yok := new(big.Int).SetString(string(y), 10)
		if xok && yok {
			return xi.Cmp(yi) == 0
		}
		xf, _ := new(big.Float).SetString(string(x))
		yf, _ := new(big.Float).SetString(string(y))
		return xf != nil && yf != nil && xf.Cmp(yf) == 0
	})
}

// jsonTreeEqual compares two decoded JSON trees (numbers as json.Number), comparing numbers
// with numEqual and everything else exactly.
func jsonTreeEqual(a, b any, numEqual func(x, y json.Number) bool) bool {
	eq := func(x, y any) bool { return jsonTreeEqual(x, y, numEqual) }
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numEqual(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && maps.EqualFunc(x, y, eq)
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, eq)
	default:
		return a == b
	}
}

// rPC is one JSON-RPC message of the test data.
type rPC struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func readRPC(t testing.TB, name string) rPC {
	t.Helper()
	var m rPC
	if err := json.Unmarshal(readFile(t, name), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// serveAnswer is what the reference server answers: an error code and message, or nothing.
type serveAnswer struct {
	Code    int
	Message string
	Path    string
}

// serve answers one message as the bridge does, through the codec's real error mapping
// (CheckEvent, CheckNotification, CheckBatch, ...). It returns nil when the message would reach
// the handler.
func serve(method string, params any, notification bool) *serveAnswer {
	cfg := defaultConfig()
	var e *harness.Error
	switch method {
	case harness.MethodHandshake:
		_, e = harness.CheckHandshake(params)
	case harness.MethodQuery:
		_, e = harness.CheckQuery(params)
	case harness.MethodEvent:
		if notification {
			_, e = harness.CheckNotification(params, cfg)
		} else {
			_, e = harness.CheckEvent(params, "r1", cfg)
		}
	case harness.MethodBatch:
		_, e = harness.CheckBatch(params, cfg)
	default:
		return &serveAnswer{Code: harness.CodeMethodNotFound, Message: harness.MessageMethodNotFound}
	}
	if e == nil {
		return nil
	}
	a := &serveAnswer{Code: e.Code, Message: e.Message}
	if fe, ok := jsonwire.AsFieldError(e); ok {
		a.Path = fe.Path
	}
	return a
}

func TestErrorVectors(t *testing.T) {
	t.Parallel()
	for _, line := range readLines(t, "errors.jsonl") {
		var vec struct {
			Name         string          `json:"name"`
			Method       string          `json:"method"`
			Notification bool            `json:"notification"`
			Params       json.RawMessage `json:"params"`
			Code         int             `json:"code"`
			Message      string          `json:"message"`
			Path         string          `json:"path"`
		}
		if err := json.Unmarshal(line, &vec); err != nil {
			t.Fatal(err)
		}
		t.Run(vec.Name, func(t *testing.T) {
			t.Parallel()
			got := serve(vec.Method, parseJSON(t, vec.Params), vec.Notification)
			want := serveAnswer{Code: vec.Code, Message: vec.Message, Path: vec.Path}
			if got == nil || *got != want {
				t.Errorf("answer\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestBatchSizeLimit(t *testing.T) {
	t.Parallel()
	event := `{"event_type":"post_action","session_id":"s1","agent_id":"a1","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"status":"ok"}}`
	batch := func(n int) any {
		return parseJSON(t, []byte(`{"events":[`+strings.TrimSuffix(strings.Repeat(event+",", n), ",")+`]}`))
	}
	if got := serve("ahp/batch", batch(100), false); got != nil {
		t.Errorf("100 post_action events: got %+v, want them handled", got)
	}
	want := serveAnswer{Code: -32602, Message: "Batch size 101 exceeds configured limit 100", Path: "events"}
	if got := serve("ahp/batch", batch(101), false); got == nil || *got != want {
		t.Errorf("101 events: got %+v, want %+v", got, want)
	}
	if err := harness.CheckBatchSize(1000, &ahpv1.HarnessConfig{}); err != nil {
		t.Errorf("no batch_size: %v", err)
	}
	empty, err := harness.DecodeBatch("params", parseJSON(t, []byte(`{"events":[]}`)))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty batch: %v, %v", empty, err)
	}
}

// TestTypedExchanges replays the typed requests and responses of §3.3: each request's
// event round-trips, its payload parses into the body, and the response's typed decision is
// written back byte for byte.
func TestTypedExchanges(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir(filepath.Join(testdataDir, "exchanges"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		req := readRPC(t, filepath.Join("exchanges", d.Name(), "request.json"))
		if req.Method != "ahp/event" {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			params := parseJSON(t, req.Params)
			if a := serve(req.Method, params, false); a != nil {
				t.Fatalf("request rejected: %+v", a)
			}
			p, err := harness.ReadEvent("params", params, req.ID)
			if err != nil {
				t.Fatal(err)
			}
			ev := p.Event
			if ev.GetId() != req.ID || ev.GetOrigin().GetSynthesizedId() {
				t.Errorf("id = %q (synthesized %v), want the request id %q", ev.GetId(), ev.GetOrigin().GetSynthesizedId(), req.ID)
			}
			if ev.GetBody() == nil {
				t.Errorf("payload not parsed into the body")
			}
			if ev.GetPayload() != nil {
				t.Errorf("payload leftovers = %v, want none", ev.GetPayload())
			}
			checkRoundTrip(t, ev, params)

			resp := readRPC(t, filepath.Join("exchanges", d.Name(), "response.json"))
			decision, err := harness.DecodeTypedDecision(p.EventType(), "result", parseJSON(t, resp.Result))
			if err != nil {
				t.Fatal(err)
			}
			got, err := harness.EncodeTypedDecision(decision)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(resp.Result) {
				t.Errorf("typed decision bytes\n got %s\nwant %s", got, resp.Result)
			}
		})
	}
}

// checkRoundTrip encodes ev and checks it gives params back, and that reading that again
// gives the same event.
func checkRoundTrip(t *testing.T, ev *ahpv1.Event, params any) {
	t.Helper()
	again := roundTrip(t, ev, params)
	if !proto.Equal(ev, again) {
		t.Errorf("decode(encode(event)) differs\nfirst  %s\nsecond %s", protoText(ev), protoText(again))
	}
}

// roundTrip encodes ev, checks the JSON equals params, and decodes it again.
func roundTrip(t *testing.T, ev *ahpv1.Event, params any) *ahpv1.Event {
	t.Helper()
	out, err := harness.EncodeEvent(ev)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !jSONEqual(params, parseJSON(t, out)) {
		in, _ := json.Marshal(params)
		t.Errorf("round trip changed the event\n got %s\nwant %s", out, in)
	}
	again, err := harness.DecodeEvent("params", parseJSON(t, out), eventRequestID(ev))
	if err != nil {
		t.Fatalf("decode encoded event: %v", err)
	}
	return again
}

// protoText formats a message for failure output.
func protoText(m proto.Message) string {
	return prototext.MarshalOptions{}.Format(m)
}

// eventRequestID is the request id to decode ev again with: none when its id was synthesized.
func eventRequestID(ev *ahpv1.Event) string {
	if ev.GetOrigin().GetSynthesizedId() {
		return ""
	}
	return ev.GetId()
}

// normalizing lists events whose meaning depends on number text that
// google.protobuf.Value does not keep: 30000.0 in a payload that therefore fails to parse comes
// back as 30000, which parses.
var normalizing = map[string]bool{"idle_invalid_payload.json": true}

func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(testdataDir, "events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("only %d event files", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			params := parseJSON(t, readFile(t, filepath.Join("events", filepath.Base(f))))
			for _, id := range []string{"", "req-1"} {
				ev, err := harness.DecodeEvent("params", params, id)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if ev.GetOrigin().GetSynthesizedId() != (id == "") {
					t.Errorf("synthesized_id = %v with request id %q", ev.GetOrigin().GetSynthesizedId(), id)
				}
				if !normalizing[filepath.Base(f)] {
					checkRoundTrip(t, ev, params)
					continue
				}
				// The JSON survives, and one round trip reaches a fixpoint.
				again := roundTrip(t, ev, params)
				checkRoundTrip(t, again, params)
			}
		})
	}
}

// TestClientBytes checks that events the Rust client sent (keys sorted by to_value) are
// written back byte for byte.
func TestClientBytes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"transcript_pre_action", "transcript_post_action", "client_context"} {
		raw := readFile(t, "events/"+name+".json")
		ev, err := harness.DecodeEvent("params", parseJSON(t, raw), "55cd")
		if err != nil {
			t.Fatal(err)
		}
		got, err := harness.EncodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(raw) {
			t.Errorf("%s\n got %s\nwant %s", name, got, raw)
		}
	}
}

func TestDecisionWire(t *testing.T) {
	t.Parallel()
	for _, line := range readLines(t, "decisions.jsonl") {
		var vec struct {
			Name string          `json:"name"`
			Type string          `json:"type"`
			Wire json.RawMessage `json:"wire"`
		}
		if err := json.Unmarshal(line, &vec); err != nil {
			t.Fatal(err)
		}
		t.Run(vec.Name, func(t *testing.T) {
			t.Parallel()
			var (
				got []byte
				err error
			)
			if vec.Type == "generic" {
				var d *ahpv1.HarnessDecision
				if d, err = harness.DecodeDecision("result", parseJSON(t, vec.Wire)); err == nil {
					got, err = harness.EncodeDecision(d)
				}
			} else {
				var m proto.Message
				if m, err = harness.DecodeTypedDecision(vec.Type, "result", parseJSON(t, vec.Wire)); err == nil {
					got, err = harness.EncodeTypedDecision(m)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(vec.Wire) {
				t.Errorf("\n got %s\nwant %s", got, vec.Wire)
			}
		})
	}
}

// TestTypedResponsesFromProto builds the typed decisions of §3.3 by hand and checks the
// encoder writes the reference's exact result bytes.
func TestTypedResponsesFromProto(t *testing.T) {
	t.Parallel()
	metadata := func(k string, v *structpb.Value) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{k: v}}
	}
	template, err := structpb.NewValue(map[string]any{"steps": []any{"inspect", "fix", "verify"}})
	if err != nil {
		t.Fatal(err)
	}
	responses := map[string]proto.Message{
		"idle": &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Allow_{Allow: &ahpv1.IdleDecision_Allow{}}},
		"idle_defer": &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Defer_{Defer: &ahpv1.IdleDecision_Defer{
			Reason: new(`too short; task=Some("refactor")`),
		}}},
		"intent_detection": &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Allow_{Allow: &ahpv1.IntentDetectionDecision_Allow{
			DetectedIntent: "locate",
			Confidence:     0.95,
			TargetHints:    &ahpv1.TargetHints{TargetType: new("function"), TargetName: new("authenticate"), Domain: new("coding")},
		}}},
		"context_perception": &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Allow_{Allow: &ahpv1.ContextPerceptionDecision_Allow{
			InjectedContext: &ahpv1.InjectedContext{
				Facts:        []*ahpv1.Fact{{Content: "/repo is a Rust workspace", Source: "harness", Confidence: 0.9}},
				FileContents: &ahpv1.FileContentSnippetList{Values: []*ahpv1.FileContentSnippet{{Path: "src/server.rs", Snippet: "pub struct AhpServer", RelevanceScore: 0.8}}},
				ProjectSummary: &ahpv1.ProjectSummary{
					ProjectName: "a3s-ahp", Language: new("rust"), KeyFiles: &ahpv1.StringList{Values: []string{"Cargo.toml"}},
					StructureDescription: "lib + transports",
				},
				Suggestions: &ahpv1.StringList{Values: []string{"read src/protocol"}},
			},
		}}},
		"memory_recall": &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Allow_{Allow: &ahpv1.MemoryRecallDecision_Allow{
			InjectedFacts: []*ahpv1.Fact{{Content: "recall for previous auth bug", Source: "memory", Confidence: 0.5}},
			Metadata:      metadata("hits", structpb.NewNumberValue(1)),
		}}},
		"planning": &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Allow_{Allow: &ahpv1.PlanningDecision_Allow{
			SelectedStrategy: &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_STEP_BY_STEP}},
			PlanningTemplate: template,
		}}},
		"reasoning": &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Allow_{Allow: &ahpv1.ReasoningDecision_Allow{
			Hints: &ahpv1.StringList{Values: []string{"check the lockfile first"}},
		}}},
		"rate_limit": &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Retry_{Retry: &ahpv1.RateLimitDecision_Retry{RetryAfterMs: 3000}}},
		"confirmation": &ahpv1.ConfirmationDecision{Decision: &ahpv1.ConfirmationDecision_Reject_{Reject: &ahpv1.ConfirmationDecision_Reject{
			Reason: "cost above budget",
		}}},
	}
	for name, m := range responses {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := readRPC(t, filepath.Join("exchanges", name, "response.json")).Result
			got, err := harness.EncodeTypedDecision(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			// As the typed answer of a canonical decision, it renders the same.
			d := &ahpv1.Decision{DecisionId: "d1"}
			proto.Merge(d, typedDecision(t, strings.TrimSuffix(name, "_defer"), m))
			rendered, err := harness.RenderTyped(d, strings.TrimSuffix(name, "_defer"))
			if err != nil || string(rendered) != string(want) {
				t.Errorf("rendered %s, %v", rendered, err)
			}
		})
	}
}

// typedDecision wraps a typed decision in a canonical Decision.
func typedDecision(t *testing.T, eventType string, m proto.Message) *ahpv1.Decision {
	t.Helper()
	d := &ahpv1.Decision{}
	r := d.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(protoreflect.Name(eventType))
	if fd == nil {
		t.Fatalf("no typed field %s", eventType)
	}
	r.Set(fd, protoreflect.ValueOfMessage(m.ProtoReflect()))
	return d
}

// TestDecisionFromProto writes decisions built by hand, so the expected bytes do not depend
// on the decoder.
func TestDecisionFromProto(t *testing.T) {
	t.Parallel()
	intent := &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Allow_{Allow: &ahpv1.IntentDetectionDecision_Allow{
		DetectedIntent: "locate",
		Confidence:     0.95,
		TargetHints:    &ahpv1.TargetHints{TargetType: new("function"), TargetName: new("authenticate"), Domain: new("coding")},
	}}}
	refine := &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Refine_{Refine: &ahpv1.ContextPerceptionDecision_Refine{
		RefinedIntent: ahpv1.PerceptionIntent_PERCEPTION_INTENT_LOCATE,
		RefinedTarget: &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Entity{Entity: &ahpv1.EntityTarget{Name: "auth", EntityType: "function"}}},
		ScopeHints:    []string{"src/"},
	}}}
	emptyRefine := &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Refine_{Refine: &ahpv1.ContextPerceptionDecision_Refine{}}}
	facts := &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Allow_{Allow: &ahpv1.MemoryRecallDecision_Allow{
		InjectedFacts: []*ahpv1.Fact{{Content: "c", Source: "s", Confidence: 1}},
	}}}
	mcts := &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Allow_{Allow: &ahpv1.PlanningDecision_Allow{
		SelectedStrategy: &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Custom{Custom: "mcts"}},
	}}}
	tests := []struct {
		name string
		m    proto.Message
		want string
	}{
		{"intent", intent, `{"confidence":0.949999988079071,"decision":"allow","detected_intent":"locate","target_hints":{"domain":"coding","target_name":"authenticate","target_type":"function"}}`},
		{"refine", refine, `{"decision":"refine","refined_intent":"locate","refined_target":{"entity":{"entity_type":"function","identifier":null,"name":"auth"}},"scope_hints":["src/"]}`},
		{"refine_empty", emptyRefine, `{"decision":"refine","refined_intent":null,"refined_target":null,"scope_hints":[]}`},
		{"facts", facts, `{"decision":"allow","injected_facts":[{"confidence":1.0,"content":"c","source":"s"}]}`},
		{"custom_strategy", mcts, `{"decision":"allow","selected_strategy":{"custom":"mcts"}}`},
		{"idle_defer", &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Defer_{Defer: &ahpv1.IdleDecision_Defer{}}}, `{"decision":"defer"}`},
		{"queue", &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Queue_{Queue: &ahpv1.RateLimitDecision_Queue{}}}, `{"decision":"queue"}`},
		{"intent_block_drops_metadata", &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Block{Block: &ahpv1.TypedBlock{
			Reason: "r", Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewBoolValue(true)}},
		}}}, `{"decision":"block","reason":"r"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := harness.EncodeTypedDecision(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := harness.EncodeTypedDecision(&ahpv1.IdleDecision{}); err == nil {
		t.Error("a typed decision with no variant encoded without error")
	}
	if _, err := harness.EncodeTypedDecision(&ahpv1.Event{}); err == nil {
		t.Error("a non-decision message encoded without error")
	}
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	// The stock AhpServer's answer (§1.2), built from proto and compared byte for byte.
	resp := &ahpv1.HandshakeResponse{
		ProtocolVersion: "2.4",
		HarnessInfo: &ahpv1.HarnessInfo{
			Name:         "ahp-server",
			Version:      "2.4.0",
			Capabilities: []string{"pre_action", "post_action", "pre_prompt", "query", "batch", "run_lifecycle", "task_list", "verification"},
		},
		Config: defaultConfig(),
	}
	want := readRPC(t, "exchanges/handshake/response.json").Result
	got, err := harness.EncodeHandshakeResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("handshake result\n got %s\nwant %s", got, want)
	}
	decoded, err := harness.DecodeHandshakeResponse("result", parseJSON(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(decoded, resp) {
		t.Errorf("decoded result = %v, want %v", decoded, resp)
	}
	token := proto.CloneOf(resp)
	token.SessionToken, token.Config = new("tok"), &ahpv1.HarnessConfig{MaxDepth: new(uint32(1))}
	if got, _ := harness.EncodeHandshakeResponse(token); !strings.Contains(string(got), `"config":{"max_depth":1},`) || !strings.Contains(string(got), `"session_token":"tok"`) {
		t.Errorf("session token and partial config: %s", got)
	}

	for _, name := range []string{"handshake", "handshake_client"} {
		req := readRPC(t, "exchanges/"+name+"/request.json")
		params := parseJSON(t, req.Params)
		r, err := harness.DecodeHandshakeRequest("params", params)
		if err != nil {
			t.Fatal(err)
		}
		if r.GetProtocolVersion() != "2.4" || r.GetAgentInfo().GetFramework() != "a3s-ahp" || len(r.GetAgentInfo().GetCapabilities()) != 2 {
			t.Errorf("%s: decoded %v", name, r)
		}
		out, err := harness.EncodeHandshakeRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		if !jSONEqual(params, parseJSON(t, out)) {
			t.Errorf("%s: round trip gave %s", name, out)
		}
		if name == "handshake_client" && string(out) != string(req.Params) {
			t.Errorf("client params bytes\n got %s\nwant %s", out, req.Params)
		}
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	req := readRPC(t, "exchanges/query/request.json")
	q, err := harness.DecodeQueryRequest("params", parseJSON(t, req.Params))
	if err != nil {
		t.Fatal(err)
	}
	if q.GetQueryType() != "should_i_proceed" || q.GetPayload().GetStructValue().GetFields()["question"].GetStringValue() != "Should I delete this file?" {
		t.Errorf("decoded %v", q)
	}
	if out, _ := harness.EncodeQueryRequest(q); string(out) != string(req.Params) {
		t.Errorf("query params\n got %s\nwant %s", out, req.Params)
	}
	resp := readRPC(t, "exchanges/query/response.json")
	r, err := harness.DecodeQueryResponse("result", parseJSON(t, resp.Result))
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := harness.EncodeQueryResponse(r); string(out) != string(resp.Result) {
		t.Errorf("query result\n got %s\nwant %s", out, resp.Result)
	}
	tests := []struct {
		name string
		r    *ahpv1.QueryResponse
		want string
	}{
		{"null answer", &ahpv1.QueryResponse{Answer: structpb.NewNullValue()}, `{"answer":null}`},
		{"unset answer", &ahpv1.QueryResponse{Reason: new("r")}, `{"answer":null,"reason":"r"}`},
		{"empty alternatives", &ahpv1.QueryResponse{Answer: structpb.NewBoolValue(true), Alternatives: &ahpv1.StringList{}}, `{"alternatives":[],"answer":true}`},
	}
	for _, tt := range tests {
		if out, _ := harness.EncodeQueryResponse(tt.r); string(out) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, out, tt.want)
		}
	}
	// answer is required, null is an answer.
	if _, err := harness.DecodeQueryResponse("result", parseJSON(t, []byte(`{"reason":"r"}`))); err == nil || err.Error() != "result.answer: missing field `answer`" {
		t.Errorf("missing answer: %v", err)
	}
	nullAnswer, err := harness.DecodeQueryResponse("result", parseJSON(t, []byte(`{"answer":null}`)))
	if err != nil || nullAnswer.GetAnswer().GetNullValue() != structpb.NullValue_NULL_VALUE || nullAnswer.GetAnswer() == nil {
		t.Errorf("null answer: %v, %v", nullAnswer, err)
	}
}

// TestBatchVector replays the batch of §5.2: events are read, validated and answered in
// order; the handler's answers become canonical decisions rendered for the Harness caller.
func TestBatchVector(t *testing.T) {
	t.Parallel()
	req := readRPC(t, "exchanges/batch/request.json")
	params := parseJSON(t, req.Params)
	if a := serve(req.Method, params, false); a != nil {
		t.Fatalf("batch rejected: %+v", a)
	}
	entries, err := harness.ReadBatch("params", params)
	if err != nil {
		t.Fatal(err)
	}
	var decisions []*ahpv1.HarnessDecision
	ids := map[string]bool{}
	for i, p := range entries {
		ev := p.Event
		if !strings.HasSuffix(ev.GetId(), "-"+string(rune('0'+i))) || !ev.GetOrigin().GetSynthesizedId() || ids[ev.GetId()] {
			t.Errorf("entry %d id %q: want a distinct synthesized id ending in its index", i, ev.GetId())
		}
		ids[ev.GetId()] = true
		// The §8.3 test handler: Block for tool rm, Err for payload.fail, else Allow.
		var d *ahpv1.Decision
		switch {
		case ev.GetTool().GetName() == "rm":
			d = &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "destructive"}}}}}
		case ev.GetPayload().GetStructValue().GetFields()["fail"] != nil:
			d = &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "Handler error: Protocol error: policy engine unavailable"}}}}}
		default:
			d = &ahpv1.Decision{}
		}
		decisions = append(decisions, harness.RenderDecision(d, ev))
	}
	if entries[4].Event.GetRunLifecycle().GetStatus() != ahpv1.RunStatus_RUN_STATUS_COMPLETED {
		t.Errorf("run_lifecycle body = %v", entries[4].Event.GetRunLifecycle())
	}
	got, err := harness.EncodeBatchResult(decisions)
	if err != nil {
		t.Fatal(err)
	}
	want := readRPC(t, "exchanges/batch/response.json").Result
	if string(got) != string(want) {
		t.Errorf("batch result\n got %s\nwant %s", got, want)
	}
	back, err := harness.DecodeBatchResult("result", parseJSON(t, want))
	if err != nil || len(back) != 5 {
		t.Fatalf("decode batch result: %v, %v", back, err)
	}

	// Encoding the events gives the batch params back.
	events := make([]*ahpv1.Event, len(entries))
	for i, p := range entries {
		events[i] = p.Event
	}
	out, err := harness.EncodeBatch(events)
	if err != nil {
		t.Fatal(err)
	}
	if !jSONEqual(params, parseJSON(t, out)) {
		t.Errorf("batch params round trip\n got %s\nwant %s", out, req.Params)
	}
	again, err := harness.DecodeBatch("params", parseJSON(t, out))
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		if !proto.Equal(events[i], again[i]) {
			t.Errorf("entry %d differs after a round trip", i)
		}
	}
}

func TestEventTypes(t *testing.T) {
	t.Parallel()
	// §2.2: blocking, typed decision, batchable.
	want := map[string][3]bool{
		"handshake": {true, false, false}, "pre_action": {true, false, true}, "post_action": {false, false, true},
		"pre_prompt": {true, false, true}, "post_response": {false, false, true}, "session_start": {false, false, true},
		"session_end": {false, false, true}, "error": {false, false, true}, "query": {true, false, false},
		"heartbeat": {false, false, true}, "idle": {true, true, false}, "context_perception": {true, true, false},
		"success": {false, false, true}, "memory_recall": {true, true, false}, "planning": {true, true, false},
		"reasoning": {true, true, false}, "rate_limit": {true, true, false}, "confirmation": {true, true, false},
		"intent_detection": {true, true, false}, "run_lifecycle": {false, false, true}, "task_list": {false, false, true},
		"verification": {false, false, true},
	}
	names := harness.EventTypes()
	if len(names) != 22 || names[0] != "handshake" || names[21] != "verification" {
		t.Errorf("EventTypes() = %v", names)
	}
	for _, name := range names {
		got := [3]bool{harness.IsBlocking(name), harness.UsesTypedDecision(name), harness.IsBatchable(name)}
		if got != want[name] {
			t.Errorf("%s: blocking/typed/batchable = %v, want %v", name, got, want[name])
		}
	}
	if harness.IsBlocking("PreAction") || harness.IsBatchable("") {
		t.Error("unknown names are classified")
	}
}

// TestCanonicalTypes checks the type mapping of DESIGN.md's table.
func TestCanonicalTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		eventType, payload string
		want               ahpv1.EventType
	}{
		{"pre_action", `{"tool_name":"bash"}`, ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE},
		{"pre_action", `null`, ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE},
		{"post_action", `{"status":"ok"}`, ahpv1.EventType_EVENT_TYPE_TOOL_AFTER},
		{"error", `{"tool_name":"bash","error":"x"}`, ahpv1.EventType_EVENT_TYPE_TOOL_ERROR},
		{"error", `{"message":"x"}`, ahpv1.EventType_EVENT_TYPE_ERROR},
		{"error", `{"tool_name":""}`, ahpv1.EventType_EVENT_TYPE_ERROR},
		{"session_start", `{}`, ahpv1.EventType_EVENT_TYPE_SESSION_START},
		{"session_end", `{}`, ahpv1.EventType_EVENT_TYPE_SESSION_END},
		{"pre_prompt", `{}`, ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE},
		{"post_response", `{}`, ahpv1.EventType_EVENT_TYPE_MODEL_RESPONSE_AFTER},
		{"handshake", `{}`, ahpv1.EventType_EVENT_TYPE_HANDSHAKE},
		{"query", `{}`, ahpv1.EventType_EVENT_TYPE_QUERY},
		{"heartbeat", `{}`, ahpv1.EventType_EVENT_TYPE_HEARTBEAT},
		{"success", `{}`, ahpv1.EventType_EVENT_TYPE_SUCCESS},
		{"run_lifecycle", `{}`, ahpv1.EventType_EVENT_TYPE_RUN_LIFECYCLE},
		{"task_list", `{}`, ahpv1.EventType_EVENT_TYPE_TASK_LIST},
		{"verification", `{}`, ahpv1.EventType_EVENT_TYPE_VERIFICATION},
		{"idle", `{}`, ahpv1.EventType_EVENT_TYPE_IDLE},
		{"intent_detection", `{}`, ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION},
		{"context_perception", `{}`, ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION},
		{"memory_recall", `{}`, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL},
		{"planning", `{}`, ahpv1.EventType_EVENT_TYPE_PLANNING},
		{"reasoning", `{}`, ahpv1.EventType_EVENT_TYPE_REASONING},
		{"rate_limit", `{}`, ahpv1.EventType_EVENT_TYPE_RATE_LIMIT},
		{"confirmation", `{}`, ahpv1.EventType_EVENT_TYPE_CONFIRMATION},
	}
	for _, tt := range tests {
		params := parseJSON(t, []byte(`{"event_type":"`+tt.eventType+`","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":`+tt.payload+`}`))
		ev, err := harness.DecodeEvent("params", params, "")
		if err != nil {
			t.Fatalf("%s %s: %v", tt.eventType, tt.payload, err)
		}
		if ev.GetType() != tt.want || ev.GetOrigin().GetEventType() != tt.eventType {
			t.Errorf("%s %s: type %v (origin %q), want %v", tt.eventType, tt.payload, ev.GetType(), ev.GetOrigin().GetEventType(), tt.want)
		}
		checkRoundTrip(t, ev, params)
	}
}

// TestCrossDialect builds by hand the canonical event a Hooks tool.before for the same call
// would give, and compares after clearing what only the Harness dialect carries.
func TestCrossDialect(t *testing.T) {
	t.Parallel()
	params := parseJSON(t, readFile(t, "events/pre_action_bash_ls.json"))
	ev, err := harness.DecodeEvent("params", params, "req-42")
	if err != nil {
		t.Fatal(err)
	}
	want := &ahpv1.Event{
		Id:      "req-42",
		Type:    ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
		Time:    "2026-05-01T00:00:00Z",
		Session: &ahpv1.Session{Id: "s1", Agent: &ahpv1.Agent{Id: "a1"}},
		Tool: &ahpv1.Tool{
			CallId: "call-req-42",
			Name:   "Bash",
			Kind:   ahpv1.ToolKind_TOOL_KIND_SHELL,
			Input:  &structpb.Struct{Fields: map[string]*structpb.Value{"command": structpb.NewStringValue("ls")}},
		},
	}
	got := proto.CloneOf(ev)
	got.Origin, got.Harness = nil, nil
	if !proto.Equal(want, got) {
		t.Errorf("canonical event\n got %s\nwant %s", protoText(got), protoText(want))
	}
	wantOrigin := &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HARNESS, ProtocolVersion: "2.4", EventType: "pre_action", SynthesizedCallId: true}
	if !proto.Equal(wantOrigin, ev.GetOrigin()) {
		t.Errorf("origin\n got %s\nwant %s", protoText(ev.GetOrigin()), protoText(wantOrigin))
	}
	if ev.GetHarness().GetAgentId() != "a1" || ev.GetHarness().GetDepth() != 0 {
		t.Errorf("harness envelope = %v", ev.GetHarness())
	}
}

func TestToolExtraction(t *testing.T) {
	t.Parallel()
	read := func(name, id string) *ahpv1.Event {
		t.Helper()
		ev, err := harness.DecodeEvent("params", parseJSON(t, readFile(t, "events/"+name+".json")), id)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	ev := read("transcript_pre_action", "55cd")
	if ev.GetTool().GetName() != "bash" || ev.GetTool().GetKind() != ahpv1.ToolKind_TOOL_KIND_SHELL ||
		ev.GetTool().GetInput().GetFields()["command"].GetStringValue() != "ls -la" {
		t.Errorf("tool = %v", ev.GetTool())
	}
	if left := ev.GetPayload().GetStructValue().GetFields(); len(left) != 1 || left["action_type"].GetStringValue() != "tool_call" {
		t.Errorf("payload leftovers = %v, want only action_type", left)
	}

	ev = read("pre_action_call_id", "")
	if ev.GetTool().GetCallId() != "call-7" || ev.GetOrigin().GetSynthesizedCallId() || ev.GetTool().GetKind() != ahpv1.ToolKind_TOOL_KIND_FILE_READ {
		t.Errorf("call id %q (synthesized %v), kind %v", ev.GetTool().GetCallId(), ev.GetOrigin().GetSynthesizedCallId(), ev.GetTool().GetKind())
	}
	if read("pre_action_tool_call_id", "").GetTool().GetCallId() != "toolu_01" {
		t.Error("tool_call_id not used as the call id")
	}
	ev = read("pre_action_mcp", "")
	if ev.GetTool().GetKind() != ahpv1.ToolKind_TOOL_KIND_MCP || ev.GetTool().GetMcp().GetServer() != "github" || ev.GetTool().GetMcp().GetTool() != "create_issue" {
		t.Errorf("mcp tool = %v", ev.GetTool())
	}
	ev = read("pre_action_string_arguments", "")
	if ev.GetTool().GetInput() != nil || ev.GetPayload().GetStructValue().GetFields()["arguments"].GetStringValue() != "ls -la" {
		t.Errorf("non-object arguments: tool %v, payload %v", ev.GetTool(), ev.GetPayload())
	}
	for _, name := range []string{"pre_action_payload_null", "pre_action_payload_string", "pre_action_payload_array", "pre_action_no_tool_name"} {
		if ev := read(name, ""); ev.GetTool() != nil || ev.GetPayload() == nil {
			t.Errorf("%s: tool %v, payload %v; want no tool and the payload verbatim", name, ev.GetTool(), ev.GetPayload())
		}
	}
	ev = read("post_action_output", "")
	if ev.GetTool().GetOutput().GetStringValue() != "a\nb\n" || ev.GetTool().GetCallId() != "c1" {
		t.Errorf("post_action tool = %v", ev.GetTool())
	}
	if read("post_action_result", "").GetTool().GetOutput().GetStructValue() == nil {
		t.Error("post_action result not copied to tool.output")
	}
	ev = read("error_tool", "")
	if ev.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_ERROR || ev.GetTool().GetError().GetMessage() != "exit status 1" {
		t.Errorf("error with a tool: %v %v", ev.GetType(), ev.GetTool())
	}

	// An event built by another dialect is written with the Harness tool payload shape.
	hooks := &ahpv1.Event{
		Id: "e1", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Time: "t",
		Session: &ahpv1.Session{Id: "s1", Agent: &ahpv1.Agent{Id: "a1"}},
		Tool:    &ahpv1.Tool{CallId: "c9", Name: "Bash", Input: &structpb.Struct{Fields: map[string]*structpb.Value{"command": structpb.NewStringValue("ls")}}},
		Origin:  &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HOOKS, EventType: "tool.before"},
	}
	out, err := harness.EncodeEvent(hooks)
	if err != nil {
		t.Fatal(err)
	}
	const wantHooks = `{"agent_id":"a1","depth":0,"event_type":"pre_action","payload":{"arguments":{"command":"ls"},"call_id":"c9","tool_name":"Bash"},"session_id":"s1","timestamp":"t"}`
	if string(out) != wantHooks {
		t.Errorf("hooks event as harness\n got %s\nwant %s", out, wantHooks)
	}
	if _, err := harness.EncodeEvent(&ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_TURN_START}); !errors.Is(err, harness.ErrUnsupportedEvent) {
		t.Errorf("turn.start as a Harness event: %v, want ErrUnsupportedEvent", err)
	}
}

func TestSynthesizedIDs(t *testing.T) {
	t.Parallel()
	a := parseJSON(t, []byte(`{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"tool_name":"bash","n":1.50}}`))
	b := parseJSON(t, []byte(`{"payload":{"n":1.5,"tool_name":"bash"},"depth":0,"timestamp":"t","agent_id":"a1","session_id":"s1","event_type":"pre_action"}`))
	c := parseJSON(t, []byte(`{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t2","depth":0,"payload":{"tool_name":"bash","n":1.5}}`))
	id := func(v any) string {
		ev, err := harness.DecodeEvent("params", v, "")
		if err != nil {
			t.Fatal(err)
		}
		return ev.GetId()
	}
	if id(a) != id(b) {
		t.Errorf("same event, different ids: %s %s", id(a), id(b))
	}
	if id(a) == id(c) {
		t.Error("different events share an id")
	}
	if !strings.HasPrefix(id(a), "ahp-") || len(id(a)) != 36 {
		t.Errorf("id %q: want ahp- and 32 hex digits", id(a))
	}
	ev, _ := harness.DecodeEvent("params", a, "")
	if ev.GetTool().GetCallId() != "call-"+ev.GetId() {
		t.Errorf("synthesized call id %q for event %q", ev.GetTool().GetCallId(), ev.GetId())
	}
}

// TestPayloadBodies checks what typed and contract payloads become, and that absence is
// kept rather than filled with serde defaults.
func TestPayloadBodies(t *testing.T) {
	t.Parallel()
	read := func(name string) *ahpv1.Event {
		t.Helper()
		p, err := harness.ReadEvent("params", parseJSON(t, readFile(t, "events/"+name+".json")), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.ValidateShape(defaultConfig()); err != nil {
			t.Fatal(err)
		}
		if err := p.ParseTypedPayload(); err != nil {
			t.Fatal(err)
		}
		return p.Event
	}

	cp := read("context_perception_minimal").GetContextPerception()
	if cp.GetDomain() != ahpv1.PerceptionDomain_PERCEPTION_DOMAIN_UNSPECIFIED || cp.GetConstraints() != nil ||
		cp.GetTarget().GetLocation().GetPath() != "." || cp.GetIntent() != ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNDERSTAND {
		t.Errorf("minimal context_perception = %v", cp)
	}
	// The reference re-serializes it with the defaults filled in (§3.3).
	got, err := harness.EncodePayload(cp)
	if err != nil {
		t.Fatal(err)
	}
	const wantMinimal = `{"constraints":{"include_sources":true,"max_context_length":null,"max_results":null},"context":{"workspace":"/repo"},"domain":"general","freshness":"static","intent":"understand","preferred_modality":"any","session_id":"s1","target":{"location":{"location_type":"workspace","path":"."}},"urgency":"normal"}`
	if string(got) != wantMinimal {
		t.Errorf("serde form\n got %s\nwant %s", got, wantMinimal)
	}

	cp = read("context_perception_event_target").GetContextPerception()
	tr := cp.GetTarget().GetEvent().GetTimeRange()
	if tr.GetFrom() != 1714521600 || tr.To != nil || tr.GetRelative() != "last week" || cp.GetConstraints().GetMaxContextLength() != 4096 || cp.GetConstraints().IncludeSources != nil {
		t.Errorf("event target = %v, constraints %v", cp.GetTarget(), cp.GetConstraints())
	}
	got, _ = harness.EncodePayload(cp)
	if !strings.Contains(string(got), `"time_range":{"from":1714521600,"relative":"last week","to":null}`) ||
		!strings.Contains(string(got), `"constraints":{"include_sources":true,"max_context_length":4096,"max_results":null}`) {
		t.Errorf("serde form of the event target: %s", got)
	}

	if r := read("reasoning_re_act").GetReasoning(); r.GetReasoningType().GetKnown() != ahpv1.ReasoningKind_REASONING_KIND_RE_ACT || r.GetHints() != nil {
		t.Errorf("re_act = %v", r)
	}
	if r := read("reasoning_other").GetReasoning(); r.GetReasoningType().GetOther() != "socratic" || r.GetHints() == nil {
		t.Errorf("other = %v (explicit empty hints must stay set)", r)
	}
	if r := read("rate_limit_custom").GetRateLimit(); r.GetLimitType().GetCustom() != "gpu_minutes" || r.GetRetryAfterMs() != 18446744073709551615 {
		t.Errorf("rate_limit = %v", r)
	}
	if c := read("confirmation_custom").GetConfirmation(); c.GetConfirmationType().GetCustom() != "legal_review" || c.GetOptions() != nil {
		t.Errorf("confirmation = %v", c)
	}
	p := read("planning_unit_map_form").GetPlanning()
	if len(p.GetAvailableStrategies()) != 2 || p.GetAvailableStrategies()[0].GetKnown() != ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_GRAPH_PLANNING || p.GetConstraints() != nil {
		t.Errorf("planning = %v", p)
	}
	tl := read("task_list").GetTaskList()
	if len(tl.GetTasks()) != 3 || tl.GetTasks()[0].GetEvidence()[0].GetArtifact().GetSizeBytes() != 18446744073709551615 ||
		tl.GetTasks()[1].GetStatus() != ahpv1.TaskStatus_TASK_STATUS_IN_PROGRESS || tl.GetTasks()[1].GetDependsOn()[0] != "t1" {
		t.Errorf("task_list = %v", tl)
	}
	v := read("verification").GetVerification()
	if v.GetStatus() != ahpv1.VerificationStatus_VERIFICATION_STATUS_NEEDS_REVIEW || len(v.GetChecks()) != 2 || v.GetResidualRisks()[0] != "flaky network test" {
		t.Errorf("verification = %v", v)
	}
	ev := read("idle_unknown_and_null")
	if ev.GetIdle().GetIdleDurationMs() != 1 || ev.GetIdle().LastEventType != nil {
		t.Errorf("idle = %v", ev.GetIdle())
	}
	left := ev.GetPayload().GetStructValue().GetFields()
	if len(left) != 2 || left["extra"].GetBoolValue() != true || left["last_event_type"].GetNullValue() != structpb.NullValue_NULL_VALUE || left["last_event_type"] == nil {
		t.Errorf("idle leftovers = %v, want extra and the explicit null", left)
	}
	if read("intent_detection_sequence_form").GetIntentDetection().GetWorkspace() != "/repo" {
		t.Error("sequence form not read")
	}

	// A payload that does not parse stays verbatim, and ParseTypedPayload reports it.
	pp, err := harness.ReadEvent("params", parseJSON(t, readFile(t, "events/idle_invalid_payload.json")), "")
	if err != nil {
		t.Fatal(err)
	}
	if pp.Event.GetBody() != nil || pp.Event.GetPayload().GetStructValue() == nil {
		t.Errorf("invalid payload: body %v, payload %v", pp.Event.GetBody(), pp.Event.GetPayload())
	}
	if err := pp.ParseTypedPayload(); err == nil || !strings.Contains(err.Error(), "floating point `30000.0`, expected u64") {
		t.Errorf("ParseTypedPayload: %v", err)
	}
}

// TestEventLevelChecks covers the checks on an already canonical event.
func TestEventLevelChecks(t *testing.T) {
	t.Parallel()
	ev, err := harness.DecodeEvent("params", parseJSON(t, []byte(`{"event_type":"task_list","session_id":"s1","agent_id":"a1","timestamp":"t","depth":3,"payload":{"run_id":"r","session_id":"s1","tasks":[],"updated_at":"t"}}`)), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.ValidateEventShape(ev, defaultConfig()); err != nil {
		t.Errorf("valid task_list: %v", err)
	}
	err = harness.ValidateEventShape(ev, &ahpv1.HarnessConfig{MaxDepth: new(uint32(2))})
	if err == nil || err.Error() != "depth: Protocol error: Event depth 3 exceeds configured max depth 2" {
		t.Errorf("depth: %v", err)
	}
	if err := harness.ValidateEventShape(ev, nil); err != nil {
		t.Errorf("no config: %v", err)
	}

	// An event whose payload is not in the body yet (e.g. built by hand) is parsed on demand.
	manual := &ahpv1.Event{
		Type:    ahpv1.EventType_EVENT_TYPE_IDLE,
		Payload: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"idle_reason": structpb.NewStringValue("x")}}),
	}
	if err := harness.ParseTypedPayload(manual); err == nil || err.Error() != "payload.idle_duration_ms: Serialization error: missing field `idle_duration_ms`" {
		t.Errorf("missing field: %v", err)
	}
	manual.Payload.GetStructValue().Fields["idle_duration_ms"] = structpb.NewNumberValue(5)
	manual.Payload.GetStructValue().Fields["extra"] = structpb.NewBoolValue(true)
	if err := harness.ParseTypedPayload(manual); err != nil {
		t.Fatal(err)
	}
	if manual.GetIdle().GetIdleDurationMs() != 5 || len(manual.GetPayload().GetStructValue().GetFields()) != 1 {
		t.Errorf("parsed idle = %v, leftovers %v", manual.GetIdle(), manual.GetPayload())
	}
	bad := &ahpv1.Event{Type: ahpv1.EventType_EVENT_TYPE_VERIFICATION, Payload: structpb.NewNullValue()}
	if err := harness.ValidateEventShape(bad, nil); err == nil || !strings.Contains(err.Error(), "Serialization error: invalid type: null, expected struct VerificationEvent") {
		t.Errorf("null verification payload: %v", err)
	}
}

func TestEventContext(t *testing.T) {
	t.Parallel()
	params := parseJSON(t, readFile(t, "events/full_context.json")).(map[string]any)
	c, err := harness.DecodeEventContext("params.context", params["context"])
	if err != nil {
		t.Fatal(err)
	}
	if c.GetSessionStats().GetTotalTokens() != 42 || c.GetRecentFacts().GetValues()[0].GetConfidence() != 0.9 || c.GetCurrentTask() != "refactor" {
		t.Errorf("context = %v", c)
	}
	got, err := harness.EncodeEventContext(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"capabilities":{"memory_search":{"methods":["GET"],"type":"http","url":"http://localhost:9000/search"},"session_info":{"handler":"get_session_info","type":"query"}},"current_task":"refactor","memory_summary":{"memory_type":"episodic","recent_topics":["auth","ci"],"total_items":12},"recent_facts":[{"confidence":0.8999999761581421,"content":"tests are flaky","source":"memory"}],"session_stats":{"duration_ms":9000,"error_count":0,"total_actions":4,"total_tokens":42}}`
	if string(got) != want {
		t.Errorf("serde form\n got %s\nwant %s", got, want)
	}
	// Inside an event the context round-trips with the confidence as sent.
	ev, err := harness.DecodeEvent("params", params, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.GetUnknownFields() != nil {
		t.Errorf("unknown_fields = %v, want none", ev.GetUnknownFields())
	}
	out, _ := harness.EncodeEvent(ev)
	if !strings.Contains(string(out), `"confidence":0.9,`) {
		t.Errorf("event context: %s", out)
	}
}

func TestUnknownFields(t *testing.T) {
	t.Parallel()
	ev, err := harness.DecodeEvent("params", parseJSON(t, readFile(t, "events/envelope_nulls_unknown.json")), "")
	if err != nil {
		t.Fatal(err)
	}
	got := ev.GetUnknownFields().GetFields()
	if len(got) != 4 || got["v"].GetStringValue() != "1" || got["trace"].GetStructValue() == nil ||
		got["context"].GetNullValue() != structpb.NullValue_NULL_VALUE || got["metadata"] == nil {
		t.Errorf("unknown_fields = %v", got)
	}
	if ev.GetHarness().GetContext() != nil || ev.GetHarness().GetMetadata() != nil {
		t.Errorf("null context/metadata decoded as %v", ev.GetHarness())
	}
}

func TestPayloadCodec(t *testing.T) {
	t.Parallel()
	m, err := harness.DecodePayload("run_lifecycle", "payload", parseJSON(t, []byte(`{"run_id":"r","session_id":"s","status":"completed","updated_at":"t","result_summary":"ok","error":null}`)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := harness.EncodePayload(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"result_summary":"ok","run_id":"r","session_id":"s","status":"completed","updated_at":"t"}`; string(got) != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if _, err := harness.DecodePayload("pre_action", "payload", map[string]any{}); err == nil {
		t.Error("pre_action has no payload schema")
	}
	if _, err := harness.EncodePayload(&ahpv1.RunLifecycle{}); err == nil {
		t.Error("a run_lifecycle without status encoded")
	}
	if _, err := harness.EncodePayload(&ahpv1.Event{}); err == nil {
		t.Error("an Event encoded as a payload")
	}
}

func TestRenderDecision(t *testing.T) {
	t.Parallel()
	pre, err := harness.DecodeEvent("params", parseJSON(t, readFile(t, "events/transcript_pre_action.json")), "r1")
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := harness.DecodeEvent("params", parseJSON(t, readFile(t, "events/pre_prompt.json")), "r2")
	if err != nil {
		t.Fatal(err)
	}
	deny := func(r string) *ahpv1.Effect {
		return &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: r}}}
	}
	ask := &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "approve rm"}}}
	escalate := &ahpv1.Effect{Effect: &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Reason: "r", Target: "oncall"}}}
	deferE := &ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: 1000, Reason: "busy"}}}
	modify := func(v string, op ahpv1.ModifyOperation) *ahpv1.Effect {
		value, err := structpb.NewValue(plainEncoder(parseJSON(t, []byte(v))))
		if err != nil {
			t.Fatal(err)
		}
		return &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: value, Operation: op}}}
	}
	message := &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "careful"}}}
	allow := &ahpv1.Effect{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{}}}
	tests := []struct {
		name string
		d    *ahpv1.Decision
		ev   *ahpv1.Event
		want string
	}{
		{"no effect", &ahpv1.Decision{}, pre, `{"decision":"allow"}`},
		{"allow with id", &ahpv1.Decision{DecisionId: "d1", MatchedRuleIds: []string{"r1", "r2"}, Effects: []*ahpv1.Effect{allow}}, pre,
			`{"decision":"allow","metadata":{"dev.ahpgateway/decision_id":"d1","dev.ahpgateway/rule_ids":["r1","r2"]}}`},
		{"deny", &ahpv1.Decision{Effects: []*ahpv1.Effect{deny("destructive")}}, pre, `{"decision":"block","reason":"destructive"}`},
		{"policy digest and revision", &ahpv1.Decision{DecisionId: "d4", PolicyDigest: "sha256:4f2a", PolicyRevision: 12, Effects: []*ahpv1.Effect{deny("no")}}, pre,
			`{"decision":"block","metadata":{"dev.ahpgateway/decision_id":"d4","dev.ahpgateway/policy_digest":"sha256:4f2a","dev.ahpgateway/policy_revision":12},"reason":"no"}`},
		{"policy from a file: digest only", &ahpv1.Decision{PolicyDigest: "sha256:4f2a"}, pre,
			`{"decision":"allow","metadata":{"dev.ahpgateway/policy_digest":"sha256:4f2a"}}`},
		{"synthetic deny", &ahpv1.Decision{DecisionId: "d2", Synthetic: true, Effects: []*ahpv1.Effect{deny("approval required: rm")}}, pre,
			`{"decision":"block","metadata":{"dev.ahpgateway/decision_id":"d2","dev.ahpgateway/synthetic":true},"reason":"approval required: rm"}`},
		{"ask", &ahpv1.Decision{Effects: []*ahpv1.Effect{ask}}, pre, `{"decision":"escalate","reason":"approve rm"}`},
		{"escalate", &ahpv1.Decision{DecisionId: "d3", Effects: []*ahpv1.Effect{escalate}}, pre, `{"decision":"escalate","escalation_target":"oncall","reason":"r"}`},
		{"defer", &ahpv1.Decision{Effects: []*ahpv1.Effect{deferE}}, pre, `{"decision":"defer","reason":"busy","retry_after_ms":1000}`},
		{"modify input", &ahpv1.Decision{Effects: []*ahpv1.Effect{modify(`{"command":"ls"}`, 0)}}, pre,
			`{"decision":"modify","modified_payload":{"action_type":"tool_call","arguments":{"command":"ls"},"tool_name":"bash"}}`},
		{"modify merge", &ahpv1.Decision{Effects: []*ahpv1.Effect{modify(`{"timeout":5}`, ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE)}}, pre,
			`{"decision":"modify","modified_payload":{"action_type":"tool_call","arguments":{"command":"ls -la","timeout":5},"tool_name":"bash"}}`},
		{"modify prompt", &ahpv1.Decision{Effects: []*ahpv1.Effect{modify(`{"prompt":"hi"}`, ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE)}}, prompt,
			`{"decision":"modify","modified_payload":{"prompt":"hi"}}`},
		{"message", &ahpv1.Decision{Effects: []*ahpv1.Effect{message}}, pre, `{"decision":"allow","metadata":{"dev.ahpgateway/messages":["careful"]}}`},
		{"deny beats everything", &ahpv1.Decision{Effects: []*ahpv1.Effect{modify(`{}`, 0), deferE, ask, deny("no"), deny("later")}}, pre, `{"decision":"block","reason":"no"}`},
		{"ask beats defer", &ahpv1.Decision{Effects: []*ahpv1.Effect{deferE, modify(`{}`, 0), escalate, ask}}, pre, `{"decision":"escalate","escalation_target":"oncall","reason":"r"}`},
		{"defer beats modify", &ahpv1.Decision{Effects: []*ahpv1.Effect{modify(`{}`, 0), deferE}}, pre, `{"decision":"defer","reason":"busy","retry_after_ms":1000}`},
		{"verdict without effects", &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY}, pre, `{"decision":"block","reason":"denied by policy"}`},
		{"nil decision fails closed", nil, pre, `{"decision":"block","metadata":{"dev.ahpgateway/synthetic":true},"reason":"no decision"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := harness.EncodeDecision(harness.RenderDecision(tt.d, tt.ev))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// plainEncoder turns json.Number into float64 for structpb.NewValue.
func plainEncoder(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainEncoder(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainEncoder(e)
		}
	}
	return v
}

func TestRenderTyped(t *testing.T) {
	t.Parallel()
	deny := &ahpv1.Decision{DecisionId: "d1", Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}}}}}
	ask := &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "check"}}}}}
	deferD := &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: 3000}}}}}
	typed := &ahpv1.Decision{Typed: &ahpv1.Decision_RateLimit{RateLimit: &ahpv1.RateLimitDecision{
		Decision: &ahpv1.RateLimitDecision_Retry_{Retry: &ahpv1.RateLimitDecision_Retry{RetryAfterMs: 3000}},
	}}}
	tests := []struct {
		name, eventType string
		d               *ahpv1.Decision
		want, wantErr   string
	}{
		{"typed answer", "rate_limit", typed, `{"decision":"retry","retry_after_ms":3000}`, ""},
		{"typed answer for another type", "planning", typed, "", "convert: typed decision rate_limit cannot answer a planning event"},
		{"idle allowed by default", "idle", &ahpv1.Decision{}, `{"decision":"allow"}`, ""},
		{"idle denied", "idle", deny, `{"decision":"defer","reason":"no"}`, ""},
		{"memory denied", "memory_recall", deny, `{"decision":"block","metadata":{"dev.ahpgateway/decision_id":"d1"},"reason":"no"}`, ""},
		{"intent denied", "intent_detection", deny, `{"decision":"block","reason":"no"}`, ""},
		{"rate limit denied", "rate_limit", deny, `{"decision":"skip","reason":"no"}`, ""},
		{"rate limit deferred", "rate_limit", deferD, `{"decision":"retry","retry_after_ms":3000}`, ""},
		{"confirmation denied", "confirmation", deny, `{"decision":"reject","reason":"no"}`, ""},
		{"confirmation asked", "confirmation", ask, `{"decision":"escalate"}`, ""},
		{"planning deferred", "planning", deferD, `{"decision":"block","reason":"deferred"}`, ""},
		{"no typed answer", "planning", &ahpv1.Decision{}, "", "Capability not supported: Planning not supported"},
		{"not typed", "pre_action", &ahpv1.Decision{}, "", `convert: harness event type "pre_action" has no typed decision`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := harness.RenderTyped(tt.d, tt.eventType)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v, want %q", err, tt.wantErr)
				}
				if strings.HasPrefix(tt.wantErr, "Capability") != errors.Is(err, harness.ErrNoTypedAnswer) {
					t.Errorf("errors.Is(%v, ErrNoTypedAnswer) is wrong", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDecodeDecisionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		eventType, wire, want string
	}{
		{"", `{"reason":"r"}`, "result.decision: missing field `decision`"},
		{"", `{"decision":"Allow"}`, "result.decision: unknown variant `Allow`, expected one of `allow`, `block`, `modify`, `defer`, `escalate`"},
		{"", `{"decision":"block"}`, "result.reason: missing field `reason`"},
		{"", `{"decision":"modify"}`, "result.modified_payload: missing field `modified_payload`"},
		{"", `{"decision":"defer","retry_after_ms":-1}`, "result.retry_after_ms: invalid value: integer `-1`, expected u64"},
		{"", `{"decision":1}`, "result.decision: invalid type: integer `1`, expected variant identifier"},
		{"", `"allow"`, `result: invalid type: string "allow", expected internally tagged enum Decision`},
		{"idle", `{"decision":"wait"}`, "result.decision: unknown variant `wait`, expected `allow` or `defer`"},
		{"context_perception", `{"decision":"refine"}`, "result.scope_hints: missing field `scope_hints`"},
		{"context_perception", `{"decision":"refine","scope_hints":[],"refined_target":"entity"}`, "result.refined_target: invalid type: unit variant, expected struct variant"},
		{"intent_detection", `{"decision":"allow","detected_intent":"x","confidence":"high"}`, `result.confidence: invalid type: string "high", expected f32`},
	}
	for _, tt := range tests {
		var err error
		if tt.eventType == "" {
			_, err = harness.DecodeDecision("result", parseJSON(t, []byte(tt.wire)))
		} else {
			_, err = harness.DecodeTypedDecision(tt.eventType, "result", parseJSON(t, []byte(tt.wire)))
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s %s: error %v, want %q", tt.eventType, tt.wire, err, tt.want)
		}
		var fe *jsonwire.FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("%s: %T is not a *FieldError", tt.wire, err)
		}
	}
}

func TestNumberOutOfRange(t *testing.T) {
	t.Parallel()
	params := parseJSON(t, []byte(`{"event_type":"pre_action","session_id":"s1","agent_id":"a1","timestamp":"t","depth":0,"payload":{"n":1e400}}`))
	_, err := harness.DecodeEvent("params", params, "")
	if err == nil || err.Error() != "params.payload.n: number out of range" {
		t.Errorf("error = %v", err)
	}
}

// Identifiers longer than the schema allows are refused while reading, naming the field, with
// the limit (package limits) the server's validation applies too.
func TestOverlongIdentifiersAreRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 257)
	event := func(sessionID, agentID, toolName string) any {
		return parseJSON(t, []byte(`{"event_type":"pre_action","session_id":"`+sessionID+`","agent_id":"`+agentID+
			`","timestamp":"2026-05-01T00:00:00Z","depth":0,"payload":{"tool_name":"`+toolName+`"}}`))
	}
	cases := []struct {
		name, method string
		params       any
		path, field  string
	}{
		{"session id", harness.MethodEvent, event(long, "a1", "Bash"), "params.session_id", "session_id"},
		{"agent id", harness.MethodEvent, event("s1", long, "Bash"), "params.agent_id", "agent_id"},
		{"tool name", harness.MethodEvent, event("s1", "a1", long), "params.payload.tool_name", "tool_name"},
		{"query session id", harness.MethodQuery, parseJSON(t, []byte(`{"session_id":"`+long+`","agent_id":"a1","query_type":"q","payload":null}`)), "params.session_id", "session_id"},
	}
	for _, c := range cases {
		got := serve(c.method, c.params, false)
		want := serveAnswer{Code: harness.CodeInvalidParams, Message: "Invalid params: field `" + c.field + "` must be at most 256 characters", Path: c.path}
		if got == nil || *got != want {
			t.Errorf("%s: answer %+v, want %+v", c.name, got, want)
		}
	}
	if got := serve(harness.MethodEvent, event(long[:256], long[:256], long[:256]), false); got != nil {
		t.Errorf("identifiers of exactly 256 characters: %+v, want them accepted", got)
	}
}
