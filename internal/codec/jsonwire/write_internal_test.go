package jsonwire

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// The reflection-free writer must be invisible: these tests hold it to encoding/json (marshalStd),
// byte for byte.

// checkAppendMatchesStd checks Append against encoding/json. A value of a type Append does
// not know may be refused (Marshal then falls back); others only when encoding/json fails too.
func checkAppendMatchesStd(t *testing.T, v any, mayRefuse ...bool) {
	t.Helper()
	got, ok := Append(nil, v)
	want, err := marshalStd(v)
	if !ok {
		if err == nil && len(mayRefuse) == 0 {
			t.Fatalf("appendJSON refused %#v, which encoding/json writes", v)
		}
		return
	}
	if err != nil || string(got) != string(want) {
		t.Fatalf("appendJSON(%#v)\n got %s\nwant %s (%v)", v, got, want, err)
	}
}

// jsonPlain turns direct-tree leaves into what fromStruct and fromValue make of them.
func jsonPlain(v any) any {
	switch x := v.(type) {
	case *structpb.Value:
		return FromValue(x)
	case *structpb.Struct:
		return FromStruct(x)
	}
	return v
}

func TestAppendJSONMatchesStd(t *testing.T) {
	strs := []string{"", "plain", "<&>", "\"\\/", "\b\f\n\r\t\x00\x1f\x7f", "é€😀", "\u2028\u2029", "\xff", "a\xc3", "\xed\xa0\x80"}
	for _, s := range strs {
		checkAppendMatchesStd(t, s)
		checkAppendMatchesStd(t, map[string]any{s: s, "k": []any{s, nil, true, false}})
	}
	for _, n := range []json.Number{"", "0", "-0", "1.5e+3", "01", "1.", "abc", "1e", "-"} {
		checkAppendMatchesStd(t, n)
		checkAppendMatchesStd(t, []any{n})
	}
	for _, f := range []float32{0, 1, 0.95, -1e-7, 1e20, float32(math.Inf(1)), float32(math.NaN())} {
		checkAppendMatchesStd(t, map[string]any{"f": F32(f)})
	}
	checkAppendMatchesStd(t, map[string]any(nil))
	checkAppendMatchesStd(t, []any(nil))
	checkAppendMatchesStd(t, map[string]any{"unsupported": 1.5}, true)
	checkAppendMatchesStd(t, []any{map[string]string{"x": "y"}}, true)
	if out, err := Marshal(map[string]any{"b": 1.5, "a": map[string]string{"x": "<"}}); err != nil || string(out) != `{"a":{"x":"<"},"b":1.5}` {
		t.Fatalf("marshalJSON fallback: %s, %v", out, err)
	}

	// Struct and Value leaves must write as their plain conversions do.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		v := randomValue(rng, 0)
		got, ok := Append(nil, v)
		want, err := marshalStd(FromValue(v))
		if !ok || err != nil || string(got) != string(want) {
			t.Fatalf("Value %v:\n got %s (%v)\nwant %s (%v)", v, got, ok, want, err)
		}
		s := &structpb.Struct{Fields: map[string]*structpb.Value{"a": v, "b": randomValue(rng, 1)}}
		got, _ = Append(nil, map[string]any{"s": s, "v": v})
		want, _ = marshalStd(map[string]any{"s": jsonPlain(s), "v": jsonPlain(v)})
		if string(got) != string(want) {
			t.Fatalf("Struct:\n got %s\nwant %s", got, want)
		}
	}
	got, _ := Append(nil, []any{(*structpb.Struct)(nil), (*structpb.Value)(nil)})
	want, _ := marshalStd([]any{FromStruct(nil), FromValue(nil)})
	if string(got) != string(want) {
		t.Fatalf("nil leaves: got %s, want %s", got, want)
	}
}

func randomValue(rng *rand.Rand, depth int) *structpb.Value {
	keys := []string{"a", "b", "é", "<k>", "", "\u2028", "z\x01"}
	switch n := rng.IntN(9); {
	case n == 0:
		return structpb.NewNullValue()
	case n == 1:
		return structpb.NewBoolValue(rng.IntN(2) == 0)
	case n == 2:
		return structpb.NewStringValue(keys[rng.IntN(len(keys))] + "\"\\\n")
	case n == 3:
		return structpb.NewNumberValue(float64(rng.Int64N(1<<60) - 1<<59))
	case n == 4:
		return structpb.NewNumberValue(math.Float64frombits(rng.Uint64()))
	case n == 5:
		return structpb.NewNumberValue(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20)))
	case n == 6 && depth < 3:
		s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for range rng.IntN(20) {
			s.Fields[keys[rng.IntN(len(keys))]+strings.Repeat("k", rng.IntN(3))] = randomValue(rng, depth+1)
		}
		return structpb.NewStructValue(s)
	case n == 7 && depth < 3:
		l := &structpb.ListValue{}
		for range rng.IntN(4) {
			l.Values = append(l.Values, randomValue(rng, depth+1))
		}
		return structpb.NewListValue(l)
	}
	return &structpb.Value{}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\u2028", "\xff", "<&>\"\\\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendMatchesStd(t, map[string]any{s: []any{s, json.Number(s)}})
	})
}
