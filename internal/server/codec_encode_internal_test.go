package server

import (
	"encoding/json"
	"reflect"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestEncodeDecisionFieldsKnown: every field of the messages the fast encoder writes is either
// written by it or sends the message to protojson. A new field fails here until codec_encode.go
// knows it.
func TestEncodeDecisionFieldsKnown(t *testing.T) {
	known := map[protoreflect.Message][]string{
		(&ahpv1.InterceptResponse{}).ProtoReflect():       {"decision"},
		(&ahpv1.InterceptStreamResponse{}).ProtoReflect(): {"event_id", "decision", "error", "request_id"},
		(&ahpv1.StreamError{}).ProtoReflect():             {"code", "message"},
		(&ahpv1.InterceptBatchResponse{}).ProtoReflect():  {"decisions"},
		(&ahpv1.Decision{}).ProtoReflect(): {
			"decision_id", "verdict", "effects", "matched_rule_ids", "synthetic", "replayed", "latency_us",
			"policy_digest", "policy_revision", "approval_id",
			// protojson's:
			"fallbacks", "dry_runs", "idle", "intent_detection", "context_perception", "memory_recall",
			"planning", "reasoning", "rate_limit", "confirmation",
		},
		(&ahpv1.Effect{}).ProtoReflect(): {
			"deny", "allow", "ask", "rule_id",
			// protojson's:
			"modify", "defer", "escalate", "message", "return", "flow", "inject",
		},
		(&ahpv1.DenyEffect{}).ProtoReflect():  {"reason", "code", "extensions" /* protojson's */},
		(&ahpv1.AllowEffect{}).ProtoReflect(): {"reason"},
		(&ahpv1.AskEffect{}).ProtoReflect():   {"reason"},
	}
	for m, names := range known {
		set := map[string]bool{}
		for _, n := range names {
			set[n] = true
		}
		fields := m.Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if !set[string(fd.Name())] {
				t.Errorf("%s.%s is new: teach codec_encode.go to write it, or to leave a message that has it to protojson", m.Descriptor().FullName(), fd.Name())
			}
			if fd.JSONName() != jsonCamel(string(fd.Name())) {
				t.Errorf("%s.%s has JSON name %q, which codec_encode.go does not write", m.Descriptor().FullName(), fd.Name(), fd.JSONName())
			}
		}
	}
}

func jsonCamel(name string) string {
	out := []byte{}
	up := false
	for i := 0; i < len(name); i++ {
		if name[i] == '_' {
			up = true
			continue
		}
		c := name[i]
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}

func fullDecision() *ahpv1.Decision {
	return &ahpv1.Decision{
		DecisionId: "01JDEC", Verdict: ahpv1.Verdict_VERDICT_DENY,
		Effects: []*ahpv1.Effect{
			{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no \"rm\"\n\t\\ <b>&</b> \u2028 é 😀 \x01\x1f", Code: "E1"}}, RuleId: "r1"},
			{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{}}},
			{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "why"}}, RuleId: "r3"},
			{RuleId: "no effect"},
			{},
		},
		MatchedRuleIds: []string{"r1", "r3", ""}, Synthetic: true, Replayed: true, LatencyUs: 18446744073709551615,
		PolicyDigest: "sha256:abc", PolicyRevision: 7, ApprovalId: "ap-1",
	}
}

// encodeCases are answers the fast path writes.
var encodeCases = []proto.Message{
	&ahpv1.InterceptResponse{},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW, DecisionId: "d", LatencyUs: 12, PolicyDigest: "sha256:x"}},
	&ahpv1.InterceptResponse{Decision: fullDecision()},
	&ahpv1.InterceptStreamResponse{},
	&ahpv1.InterceptStreamResponse{EventId: "e", RequestId: "r", Decision: fullDecision()},
	&ahpv1.InterceptStreamResponse{EventId: "e", Error: &ahpv1.StreamError{Code: "invalid_argument", Message: "event.id: \"x\""}},
	&ahpv1.InterceptStreamResponse{Error: &ahpv1.StreamError{}},
	&ahpv1.InterceptBatchResponse{},
	&ahpv1.InterceptBatchResponse{Decisions: []*ahpv1.Decision{fullDecision(), {}, {Verdict: ahpv1.Verdict_VERDICT_ASK}}},
}

// protojsonCases are answers the fast path leaves to protojson.
var protojsonCases = []proto.Message{
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Verdict: 99}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{DecisionId: "\xff"}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{MatchedRuleIds: []string{"ok", "bad\xc3"}}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Fallbacks: []*ahpv1.Fallback{{RuleId: "r"}}}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{DryRuns: []*ahpv1.DryRun{{RuleId: "r"}}}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Typed: &ahpv1.Decision_Idle{Idle: &ahpv1.IdleDecision{}}}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{}}}}}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{
		Reason: "r", Extensions: &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(1)}}}}}}}},
	&ahpv1.InterceptResponse{Decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "\xff"}}}}}},
	&ahpv1.InterceptStreamResponse{Error: &ahpv1.StreamError{Message: "\xff"}},
	&ahpv1.InterceptBatchResponse{Decisions: []*ahpv1.Decision{{}, {Verdict: -1}}},
}

// sameAsProtojson checks that the fast path writes m (or leaves it) as protojson would: the same
// JSON value, which protojson reads back to m.
func sameAsProtojson(t *testing.T, m proto.Message, wantFast bool) {
	t.Helper()
	got, ok := appendFast([]byte("prefix"), m)
	want, err := protojson.Marshal(m)
	switch {
	case ok != wantFast:
		t.Errorf("%v: fast path took it %v, want %v", m, ok, wantFast)
		return
	case !ok:
		return
	case err != nil:
		t.Errorf("%v: fast path wrote it, protojson refuses: %v", m, err)
		return
	case string(got[:6]) != "prefix":
		t.Errorf("%v: the buffer's start was overwritten", m)
		return
	}
	got = got[6:]
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%v: fast path wrote invalid JSON %s: %v", m, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("fast path wrote\n%s\nprotojson\n%s", got, want)
	}
	back := m.ProtoReflect().New().Interface()
	if err := protojson.Unmarshal(got, back); err != nil || !proto.Equal(back, m) {
		t.Errorf("%s reads back as %v (%v), want %v", got, back, err, m)
	}
}

func TestEncodeInterceptMatchesProtojson(t *testing.T) {
	for _, m := range encodeCases {
		sameAsProtojson(t, m, true)
	}
	for _, m := range protojsonCases {
		sameAsProtojson(t, m, false)
	}
}

// TestCodecMarshalLikeProtojson: through the codec (both Marshal and MarshalAppend), every
// answer is written or refused as protojson writes or refuses it.
func TestCodecMarshalLikeProtojson(t *testing.T) {
	c := jsonCodec{"json"}
	for _, m := range append(append([]proto.Message(nil), encodeCases...), protojsonCases...) {
		_, wantErr := protojson.Marshal(m)
		for _, marshal := range []func() ([]byte, error){
			func() ([]byte, error) { return c.Marshal(m) },
			func() ([]byte, error) { return c.MarshalAppend(make([]byte, 0, 4), m) },
		} {
			got, err := marshal()
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%v: codec error %v, protojson error %v", m, err, wantErr)
				continue
			}
			if err != nil {
				continue
			}
			back := m.ProtoReflect().New().Interface()
			if err := protojson.Unmarshal(got, back); err != nil || !proto.Equal(back, m) {
				t.Errorf("%s reads back as %v (%v), want %v", got, back, err, m)
			}
		}
	}
}

func TestEncodeInterceptAllocations(t *testing.T) {
	c := jsonCodec{"json"}
	m := &ahpv1.InterceptResponse{Decision: fullDecision()}
	buf := make([]byte, 0, 4096)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.MarshalAppend(buf[:0], m); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("writing a decision into a large enough buffer takes %.0f allocations, want 0", allocs)
	}
}

// FuzzEncodeInterceptMatchesProtojson: any answer (decoded from protobuf bytes) is written by the
// fast path as protojson writes it, or left to protojson.
func FuzzEncodeInterceptMatchesProtojson(f *testing.F) {
	for _, m := range append(append([]proto.Message(nil), encodeCases...), protojsonCases...) {
		b, err := proto.MarshalOptions{}.Marshal(m)
		if err != nil {
			continue // invalid UTF-8: protobuf will not encode it either
		}
		var kind byte
		switch m.(type) {
		case *ahpv1.InterceptStreamResponse:
			kind = 1
		case *ahpv1.InterceptBatchResponse:
			kind = 2
		}
		f.Add(append([]byte{kind}, b...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		var m proto.Message
		switch data[0] % 3 {
		case 0:
			m = &ahpv1.InterceptResponse{}
		case 1:
			m = &ahpv1.InterceptStreamResponse{}
		default:
			m = &ahpv1.InterceptBatchResponse{}
		}
		if proto.Unmarshal(data[1:], m) != nil {
			return
		}
		got, ok := appendFast(nil, m)
		if !ok {
			return
		}
		want, err := protojson.Marshal(m)
		if err != nil {
			t.Fatalf("%v: fast path wrote it, protojson refuses: %v", m, err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("fast path wrote invalid JSON %s: %v", got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("fast path wrote\n%s\nprotojson\n%s", got, want)
		}
	})
}

func BenchmarkEncodeIntercept(b *testing.B) {
	m := &ahpv1.InterceptResponse{Decision: &ahpv1.Decision{
		DecisionId: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", Verdict: ahpv1.Verdict_VERDICT_ALLOW, LatencyUs: 87,
		PolicyDigest: "sha256:5f2b9a0c8e7d6f1a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809123",
	}}
	buf := make([]byte, 0, 1024)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := appendFast(buf[:0], m); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := (protojson.MarshalOptions{}).MarshalAppend(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
