package hooks

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

// The fast paths of the Hooks codec (direct writer, typed response check, hand-written
// reverse-DNS match) must be invisible: these tests hold each to the slower reference it
// replaced, byte for byte and error for error.

var reverseDNSRegexp = regexp.MustCompile(reverseDNSPattern)

func TestIsReverseDNSMatchesPattern(t *testing.T) {
	for _, s := range []string{
		"", ".", "a", "a.b", "com.example.feature", "A1.b_-", "a.b.", ".a.b", "a..b", "1a.b", "a.1b",
		"a._b", "a.b-", "dev.ahpgateway", "com.example.x\n", "é.b", "a.b c", "a-b.c_d.E9",
	} {
		if got, want := isReverseDNS(s), reverseDNSRegexp.MatchString(s); got != want {
			t.Errorf("isReverseDNS(%q) = %v, pattern says %v", s, got, want)
		}
	}
}

func FuzzHooksIsReverseDNS(f *testing.F) {
	for _, s := range []string{"a.b", "com.example.feature", "a..b", "a.", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isReverseDNS(s), reverseDNSRegexp.MatchString(s); got != want {
			t.Fatalf("isReverseDNS(%q) = %v, pattern says %v", s, got, want)
		}
	})
}

// encodeReference is EncodeMessage as it was: the plain tree, checked by decoding it in
// full, written as encoding/json writes it.
func encodeReference(m *Message) ([]byte, error) {
	if err := checkShape(m); err != nil {
		return nil, err
	}
	v := plainEncoder.envelope(m)
	if _, err := decodeEnvelope(v); err != nil {
		return nil, encodeError("message", err)
	}
	return jsonwire.Marshal(v) // encoding/json's bytes (jsonwire.TestAppendJSONMatchesStd)
}

func checkEncodeMatchesReference(t *testing.T, m *Message) {
	t.Helper()
	got, err := EncodeMessage(m)
	want, wantErr := encodeReference(m)
	if string(got) != string(want) || !reflect.DeepEqual(err, wantErr) {
		t.Fatalf("EncodeMessage:\n got %s, %v\nwant %s, %v", got, err, want, wantErr)
	}
	// A message the typed check passes must pass the real one.
	if checkShape(m) == nil && responseValid(m) {
		if _, err := decodeEnvelope(plainEncoder.envelope(m)); err != nil {
			t.Fatalf("responseValid passed a message the decoder refuses: %v", err)
		}
	}
}

func TestEncodeMessageMatchesReference(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*/*.json*")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage(data)
		if err != nil {
			if resp, ok := ErrorResponse(err); ok {
				checkEncodeMatchesReference(t, resp)
			}
			continue
		}
		checkEncodeMatchesReference(t, m)
	}
	ext := func(keys ...string) *structpb.Struct {
		s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for _, k := range keys {
			s.Fields[k] = structpb.NewStringValue("v<&>\u2028")
		}
		return s
	}
	deny := func(reason, code string) *ahpv1.HooksEffect {
		return &ahpv1.HooksEffect{Type: "deny", Reason: reason, Code: code}
	}
	num := func(f float64) *structpb.Value { return structpb.NewNumberValue(f) }
	odd := &structpb.Struct{Fields: map[string]*structpb.Value{
		"n": num(math.NaN()), "i": num(math.Inf(1)), "big": num(1e300), "frac": num(-0.1), "int": num(1 << 52),
		"neg0": num(math.Copysign(0, -1)), "huge": num(1 << 53), "nil": nil, "empty": {},
		"s": structpb.NewStructValue(nil), "l": structpb.NewListValue(nil), "bad": structpb.NewStringValue("\xff\x00\"\\"),
	}}
	results := []*ahpv1.HooksInterceptResult{
		{ProtocolVersion: "0.1"},
		{ProtocolVersion: "0.2"},
		{ProtocolVersion: ""},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("no", "")}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("", "")}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("no", "not dns")}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("no", "a.b")}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{deny("no", ""), deny("again", "")}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{{Type: "allow", Reason: "x"}}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{nil}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{{Type: "deny", Reason: "x", Extensions: ext("bad key")}}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{{Type: "deny", Reason: "x", Extensions: ext("a.b", "c.d")}}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{{Type: "deny", Extensions: ext(), UnknownFields: ext("reason")}}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{{Type: "deny", Reason: "x", UnknownFields: ext("code")}}},
		{ProtocolVersion: "0.1", Effects: []*ahpv1.HooksEffect{{Type: "deny", Reason: "x", UnknownFields: odd}}},
		{ProtocolVersion: "0.1", Extensions: ext("dev.ahpgateway", "x")},
		{ProtocolVersion: "0.1", Extensions: ext()},
		{ProtocolVersion: "0.1", UnknownFields: ext("effects")},
		{ProtocolVersion: "0.1", UnknownFields: ext("extensions")},
		{ProtocolVersion: "0.1", UnknownFields: odd},
		RenderResult(&ahpv1.Decision{DecisionId: "d", MatchedRuleIds: []string{"r1", "r2"}, Synthetic: true,
			Effects: []*ahpv1.Effect{{RuleId: "r1", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no\n\"way\"", Code: "a.b"}}}}}, "0.1"),
	}
	ids := []ID{{}, NullID(), StringID(""), StringID("ev-1"), IntID(7), IntID(1 << 60), IntID(-(1<<53 - 1))}
	envelopes := []*structpb.Struct{nil, ext("x-note"), ext("method"), ext("error"), ext("result"), ext("id"), ext("jsonrpc"), ext("params"), odd}
	for _, r := range results {
		for _, id := range ids {
			for _, env := range envelopes {
				checkEncodeMatchesReference(t, &Message{ID: id, Result: r, UnknownFields: env})
			}
		}
	}
	errs := []*ahpv1.RpcError{{}, {Code: -32602, Message: "Invalid params", Data: structpb.NewStructValue(odd)}, {Code: math.MinInt32, Data: structpb.NewNullValue()}}
	for _, e := range errs {
		for _, id := range ids {
			for _, env := range envelopes {
				checkEncodeMatchesReference(t, &Message{ID: id, Error: e, UnknownFields: env})
				checkEncodeMatchesReference(t, &Message{ID: id, Error: e, Method: "hooks/intercept", UnknownFields: env})
			}
		}
	}
	checkEncodeMatchesReference(t, nil)
	checkEncodeMatchesReference(t, &Message{})
	checkEncodeMatchesReference(t, &Message{ID: StringID("x"), Result: results[0], Error: errs[0]})
}

// FuzzEncodeHooksResponse builds responses from fuzzed parts and holds EncodeMessage to the
// reference, which exercises every branch of responseValid.
func FuzzEncodeHooksResponse(f *testing.F) {
	f.Add("0.1", "deny", "no", "a.b", "com.example.x", "x-note", uint8(1), uint8(2), "ev-1", int64(0))
	f.Add("0.1", "deny", "", "", "bad key", "reason", uint8(2), uint8(3), "", int64(1<<53))
	f.Add("0.2", "allow", "r", "zz", "", "method", uint8(0), uint8(0), "x", int64(-1))
	f.Fuzz(func(t *testing.T, pv, typ, reason, code, extKey, unknownKey string, effects, idKind uint8, idStr string, idNum int64) {
		var id ID
		switch idKind % 4 {
		case 1:
			id = NullID()
		case 2:
			id = StringID(idStr)
		case 3:
			id = IntID(idNum)
		}
		unknown := &structpb.Struct{Fields: map[string]*structpb.Value{unknownKey: structpb.NewStringValue(idStr)}}
		var ext *structpb.Struct
		if extKey != "" {
			ext = &structpb.Struct{Fields: map[string]*structpb.Value{extKey: structpb.NewNumberValue(float64(idNum))}}
		}
		r := &ahpv1.HooksInterceptResult{ProtocolVersion: pv, Extensions: ext}
		for i := range int(effects % 3) {
			e := &ahpv1.HooksEffect{Type: typ, Reason: reason, Code: code, Extensions: ext}
			if i == 0 && effects&4 != 0 {
				e.UnknownFields = unknown
			}
			r.Effects = append(r.Effects, e)
		}
		if effects&8 != 0 {
			r.UnknownFields = unknown
		}
		m := &Message{ID: id, Result: r}
		if effects&16 != 0 {
			m.UnknownFields = unknown
		}
		checkEncodeMatchesReference(t, m)
		if effects&32 != 0 {
			checkEncodeMatchesReference(t, &Message{ID: id, Error: &ahpv1.RpcError{Code: int32(idNum), Message: reason}, UnknownFields: unknown})
		}
	})
}
