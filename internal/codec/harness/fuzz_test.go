package harness_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"path/filepath"
	"slices"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/testkit"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// typedNames are the typed event types, indexed by the fuzzers' selector byte.
var typedNames = []string{"idle", "intent_detection", "context_perception", "memory_recall", "planning", "reasoning", "rate_limit", "confirmation"}

// payloadNames are the event types with a payload schema.
var payloadNames = append(slices.Clone(typedNames), "run_lifecycle", "task_list", "verification")

// fuzzParse decodes fuzz input as a bridge would; false for input that is not one JSON value.
func fuzzParse(data []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// looseEqual compares JSON values with numbers by float64 value, the precision
// google.protobuf.Value keeps for free-form fields.
func looseEqual(a, b any) bool {
	return jsonTreeEqual(a, b, func(x, y json.Number) bool {
		xf, _, xerr := big.ParseFloat(string(x), 10, 53, big.ToNearestEven)
		yf, _, yerr := big.ParseFloat(string(y), 10, 53, big.ToNearestEven)
		return xerr == nil && yerr == nil && xf.Cmp(yf) == 0
	})
}

// reencode encodes m, decodes the encoding and encodes that again; it fails unless both
// encodings are equal, and returns the first encoding and the value decoded from it.
func reencode[T any](t *testing.T, m T, encode func(T) ([]byte, error), decode func(any) (T, error)) ([]byte, T) {
	t.Helper()
	out, err := encode(m)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	m2, err := decode(mustParse(t, out))
	if err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	out2, err := encode(m2)
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("unstable:\n%s\n%s\n%v", out, out2, err)
	}
	return out, m2
}

// seedFiles adds every file matching pattern under testdata/harness as a seed.
func seedFiles(f *testing.F, pattern string, add func([]byte)) {
	for _, file := range testkit.ReadFiles(f, filepath.Join(testdataDir, pattern)) {
		add(bytes.TrimSpace(file.Data))
	}
}

// seedLines adds one field of every line of a JSONL file under testdata/harness.
func seedLines(f *testing.F, name, field string, add func(json.RawMessage, map[string]json.RawMessage)) {
	for _, line := range readLines(f, name) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			f.Fatal(err)
		}
		add(m[field], m)
	}
}

// FuzzHarnessEvent reads arbitrary ahp/event params. Reading never panics; whatever is read runs
// the later checks, encodes, gives the same JSON back, and reads back to the same event. The
// allowed changes are number text google.protobuf.Value cannot keep (30000.0 vs 30000 in a payload
// that fails to parse, integers beyond 2^53 in JSON kept verbatim): then a second round trip must
// be a fixpoint.
func FuzzHarnessEvent(f *testing.F) {
	seedFiles(f, "events/*.json", func(b []byte) { f.Add(b) })
	seedFiles(f, "exchanges/*/request.json", func(b []byte) {
		var rpc rPC
		if json.Unmarshal(b, &rpc) == nil && rpc.Method == "ahp/event" {
			f.Add([]byte(rpc.Params))
		}
	})
	seedLines(f, "errors.jsonl", "params", func(p json.RawMessage, m map[string]json.RawMessage) {
		if string(m["method"]) == `"ahp/event"` {
			f.Add([]byte(p))
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		params, ok := fuzzParse(data)
		if !ok {
			return
		}
		p, err := harness.ReadEvent("params", params, "")
		if err != nil {
			if _, ok := jsonwire.AsFieldError(err); !ok {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			return
		}
		_ = p.ValidateShape(&ahpv1.HarnessConfig{MaxDepth: new(uint32(3))})
		_ = p.CheckDelivery(false)
		_ = p.CheckBatchable()
		payloadErr := p.ParseTypedPayload()
		ev := p.Event

		out, err := harness.EncodeEvent(ev)
		if err != nil {
			t.Fatalf("encode %s: %v", data, err)
		}
		if _, isObj := params.(map[string]any); isObj {
			back, _ := fuzzParse(out)
			if !looseEqual(params, back) {
				t.Fatalf("round trip changed the event\n got %s\nwant %s", out, data)
			}
		}
		again, err := harness.DecodeEvent("params", mustParse(t, out), "")
		if err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
		_, isObj := params.(map[string]any)
		strict := isObj && payloadErr == nil && harness.ValidateEventShape(ev, nil) == nil && !hasWideInt(params)
		if strict && !proto.Equal(ev, again) {
			t.Fatalf("decode(encode(event)) differs\nfirst  %s\nsecond %s", protoText(ev), protoText(again))
		}
		out2, err := harness.EncodeEvent(again)
		if err != nil {
			t.Fatal(err)
		}
		third, err := harness.DecodeEvent("params", mustParse(t, out2), "")
		if err != nil || !proto.Equal(again, third) || !bytes.Equal(out, out2) {
			t.Fatalf("no fixpoint after one round trip:\n%s\n%s\n%v", out, out2, err)
		}

		// Rendering any decision for the event works.
		mod, _ := structpb.NewValue(map[string]any{"x": 1.0})
		d := &ahpv1.Decision{DecisionId: "d", Effects: []*ahpv1.Effect{
			{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: mod, Operation: ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE}}},
		}}
		if _, err := harness.EncodeDecision(harness.RenderDecision(d, ev)); err != nil {
			t.Fatalf("render: %v", err)
		}
	})
}

// hasWideInt reports whether v holds an integer a float64 cannot hold exactly. Typed fields
// keep such integers, but JSON kept verbatim (free-form values, serde's sequence form) holds them
// as google.protobuf.Value doubles.
func hasWideInt(v any) bool {
	switch x := v.(type) {
	case json.Number:
		i, ok := new(big.Int).SetString(string(x), 10)
		return ok && i.CmpAbs(big.NewInt(1<<53)) > 0
	case map[string]any:
		for _, e := range x {
			if hasWideInt(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, hasWideInt)
	}
	return false
}

func mustParse(t *testing.T, data []byte) any {
	t.Helper()
	v, ok := fuzzParse(data)
	if !ok {
		t.Fatalf("codec wrote invalid JSON: %s", data)
	}
	return v
}

// FuzzHarnessDecision reads arbitrary decisions, generic (selector 0) or typed (1..8). Whatever
// is read writes back and reads back to the same message, and writing is stable.
func FuzzHarnessDecision(f *testing.F) {
	seedLines(f, "decisions.jsonl", "wire", func(w json.RawMessage, m map[string]json.RawMessage) {
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		f.Add([]byte(w), byte(slices.Index(typedNames, typ)+1))
	})
	seedFiles(f, "exchanges/*/response.json", func(b []byte) {
		var rpc rPC
		if json.Unmarshal(b, &rpc) == nil {
			for i := range typedNames {
				f.Add([]byte(rpc.Result), byte(i+1))
			}
		}
	})
	f.Fuzz(func(t *testing.T, data []byte, selector byte) {
		v, ok := fuzzParse(data)
		if !ok {
			return
		}
		kind := int(selector) % (len(typedNames) + 1)
		decode := func(v any) (proto.Message, error) {
			if kind == 0 {
				return harness.DecodeDecision("result", v)
			}
			return harness.DecodeTypedDecision(typedNames[kind-1], "result", v)
		}
		encode := func(m proto.Message) ([]byte, error) {
			if d, ok := m.(*ahpv1.HarnessDecision); ok {
				return harness.EncodeDecision(d)
			}
			return harness.EncodeTypedDecision(m)
		}
		m, err := decode(v)
		if err != nil {
			return
		}
		_, m2 := reencode(t, m, encode, decode)
		if !proto.Equal(m, m2) {
			t.Fatalf("decode(encode(decision)) differs\nfirst  %s\nsecond %s", protoText(m), protoText(m2))
		}
	})
}

// FuzzHarnessTypedPayload reads arbitrary typed and contract payloads. Whatever is read writes
// in the reference's serde form, which reads back and writes the same bytes again.
func FuzzHarnessTypedPayload(f *testing.F) {
	seedFiles(f, "events/*.json", func(b []byte) {
		var ev struct {
			EventType string          `json:"event_type"`
			Payload   json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(b, &ev) == nil {
			if i := slices.Index(payloadNames, ev.EventType); i >= 0 {
				f.Add([]byte(ev.Payload), byte(i))
			}
		}
	})
	seedFiles(f, "exchanges/*/request.json", func(b []byte) {
		var rpc struct {
			Params struct {
				EventType string          `json:"event_type"`
				Payload   json.RawMessage `json:"payload"`
			} `json:"params"`
		}
		if json.Unmarshal(b, &rpc) == nil {
			if i := slices.Index(payloadNames, rpc.Params.EventType); i >= 0 {
				f.Add([]byte(rpc.Params.Payload), byte(i))
			}
		}
	})
	f.Fuzz(func(t *testing.T, data []byte, selector byte) {
		v, ok := fuzzParse(data)
		if !ok {
			return
		}
		name := payloadNames[int(selector)%len(payloadNames)]
		m, err := harness.DecodePayload(name, "payload", v)
		if err != nil {
			return
		}
		reencode(t, m, harness.EncodePayload, func(v any) (proto.Message, error) {
			return harness.DecodePayload(name, "payload", v)
		})
	})
}

// FuzzHarnessBatch reads arbitrary ahp/batch params. Whatever is read passes through the batch
// checks, encodes, and reads back to the same events; decisions rendered for the entries write a
// batch result that reads back.
func FuzzHarnessBatch(f *testing.F) {
	seedFiles(f, "exchanges/batch/request.json", func(b []byte) {
		var rpc rPC
		if json.Unmarshal(b, &rpc) == nil {
			f.Add([]byte(rpc.Params))
		}
	})
	seedLines(f, "errors.jsonl", "params", func(p json.RawMessage, m map[string]json.RawMessage) {
		if string(m["method"]) == `"ahp/batch"` {
			f.Add([]byte(p))
		}
	})
	f.Add([]byte(`{"events":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := fuzzParse(data)
		if !ok {
			return
		}
		entries, err := harness.ReadBatch("params", v)
		if err != nil {
			return
		}
		cfg := &ahpv1.HarnessConfig{BatchSize: new(uint64(4)), MaxDepth: new(uint32(2))}
		_ = harness.CheckBatchSize(len(entries), cfg)
		events := make([]*ahpv1.Event, len(entries))
		decisions := make([]*ahpv1.HarnessDecision, len(entries))
		for i, p := range entries {
			_ = p.ValidateShape(cfg)
			_ = p.CheckBatchable()
			events[i] = p.Event
			decisions[i] = harness.RenderDecision(&ahpv1.Decision{Verdict: ahpv1.Verdict(i % 7)}, p.Event)
		}
		out, again := reencode(t, events, harness.EncodeBatch, func(v any) ([]*ahpv1.Event, error) {
			return harness.DecodeBatch("params", v)
		})
		if len(again) != len(events) {
			t.Fatalf("%d events decoded from %s, want %d", len(again), out, len(events))
		}
		result, err := harness.EncodeBatchResult(decisions)
		if err != nil {
			t.Fatalf("encode result: %v", err)
		}
		back, err := harness.DecodeBatchResult("result", mustParse(t, result))
		if err != nil || len(back) != len(decisions) {
			t.Fatalf("decode result %s: %v", result, err)
		}
		for i := range back {
			if !proto.Equal(back[i], decisions[i]) {
				t.Fatalf("decision %d differs after a round trip", i)
			}
		}
	})
}
