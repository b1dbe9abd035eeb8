package server

import (
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

// benchInterceptBody is the body ahp-bench's Connect JSON target sends.
const benchInterceptBody = `{"event":{"id":"a1b2c3-17","source":"urn:ahp-bench","type":"EVENT_TYPE_TOOL_BEFORE","time":"2026-12-01T21:00:00Z",` +
	`"session":{"id":"bench-a1b2c3-w0"},"tool":{"callId":"call-a1b2c3-17","name":"Bash","kind":"TOOL_KIND_SHELL","input":{"command":"ls -la"}}}}`

// fastCases are documents the fast path reads: each must give what protojson gives.
var fastCases = []string{
	`{}`,
	` { } `,
	`{"event":{}}`,
	benchInterceptBody,
	`{"event":{"id":"e","type":"EVENT_TYPE_SESSION_END","outcome":"SESSION_OUTCOME_COMPLETED"}}`,
	`{"event":{"id":"e","session":{},"tool":{},"origin":{}},"capabilities":{}}`,
	"{\n\t\"event\" : {\r\n \"id\" : \"e\" ,\"source\":\"\" } }\n",
	`{"capabilities":{"effects":["EFFECT_KIND_DENY","EFFECT_KIND_ASK"],"extensionEffects":["com.example.x"]}}`,
	`{"capabilities":{"effects":[],"extension_effects":[]}}`,
	`{"event":{"session":{"id":"s","cwd":"/w","workspaceRoots":["/a","/b"],"model":"m","agent":{"id":"a","type":"t"}}}}`,
	`{"event":{"session":{"workspace_roots":[]}}}`,
	`{"event":{"tool":{"call_id":"c","name":"Edit","kind":"TOOL_KIND_FILE_EDIT","origin":"mcp","output":null}}}`,
	`{"event":{"tool":{"output":{"a":[1,-2.5,1e3,0,-0,true,false,null,"x",{},[]]},"error":{"message":"m","code":-32600,"category":"c"}}}}`,
	`{"event":{"tool":{"error":{"code":"E1"}},"payload":[1,2,{"k":"v"}]}}`,
	`{"event":{"payload":"text"}}`,
	`{"event":{"payload":null}}`,
	`{"event":{"payload":12345678901234567890}}`,
	`{"event":{"extensions":{"com.example.a":{"b":"c"}, "":"empty key"}}}`,
	`{"event":{"origin":{"dialect":"DIALECT_HOOKS","protocolVersion":"0.1","event_type":"tool.before","synthesizedId":true,"synthesized_call_id":false,"provider":"p"}}}`,
	`{"event":{"id":"esc \" \\ \/ \b \f \n \r \t \u0041\u00e9\u20ac\u0000 end"}}`,
	`{"event":{"tool":{"input":{"command":"grep -r \"a\\tb\" .","unicode":"Grüße 日本 😀"}}}}`,
	`{"event":{"tool":{"input":{"deep":{"a":{"b":{"c":[[[[{"d":1}]]]]}}}}}}}`,
	`{"event":{"type":"EVENT_TYPE_UNSPECIFIED","tool":{"kind":"TOOL_KIND_UNSPECIFIED"}}}`,
}

// slowCases are documents the fast path leaves to protojson (which may accept or refuse them).
var slowCases = []string{
	``,
	`[]`,
	`null`,
	`{"event":{}} x`,
	`{"event":{}}{}`,
	`{"event":null}`,
	`{"event":{"id":null}}`,
	`{"event":{"id":1}}`,
	`{"event":{"type":3}}`,
	`{"event":{"type":"EVENT_TYPE_NOPE"}}`,
	`{"event":{"id":"a","id":"b"}}`,
	`{"event":{"tool":{"callId":"a","call_id":"b"}}}`,
	`{"event":{},"event":{}}`,
	`{"event":{"tool":{"input":{"a":1,"a":2}}}}`,
	`{"event":{"tool":{"input":null}}}`,
	`{"event":{"tool":{"input":[]}}}`,
	`{"event":{"native":{}}}`,
	`{"event":{"harness":{"depth":1}}}`,
	`{"event":{"unknownFields":{}}}`,
	`{"event":{"nope":1}}`,
	`{"nope":1}`,
	`{"ev\u0065nt":{}}`,
	`{"event":{"tool":{"input":{"k\u00e9y":"v"}}}}`,
	`{"event":{"id":"\ud83d\ude00"}}`,
	`{"event":{"id":"\ud800"}}`,
	`{"event":{"id":"\x"}}`,
	"{\"event\":{\"id\":\"a\x01b\"}}",
	"{\"event\":{\"id\":\"\xff\"}}",
	"{\"event\":{\"tool\":{\"input\":{\"\xc3\":1}}}}",
	`{"event":{"payload":1e400}}`,
	`{"event":{"payload":01}}`,
	`{"event":{"payload":1.}}`,
	`{"event":{"payload":.5}}`,
	`{"event":{"payload":+1}}`,
	`{"event":{"payload":tru}}`,
	`{"event":{"payload":nul}}`,
	`{"event":{"payload":[1,]}}`,
	`{"event":{"payload":{"a":1,}}}`,
	`{"event":{"origin":{"synthesizedId":"true"}}}`,
	`{"event":{"session":{"workspaceRoots":null}}}`,
	`{"event":{"session":{"workspaceRoots":[null]}}}`,
	`{"capabilities":{"effects":[1]}}`,
	`{"event":{"id":"unterminated`,
	`{"event":{"payload":` + strings.Repeat("[", fastMaxDepth) + strings.Repeat("]", fastMaxDepth) + `}}`,
}

func protojsonIntercept(data []byte) (*ahpv1.InterceptRequest, error) {
	want := &ahpv1.InterceptRequest{}
	return want, protojson.Unmarshal([]byte(data), want)
}

func TestDecodeInterceptMatchesProtojson(t *testing.T) {
	for _, doc := range fastCases {
		got := &ahpv1.InterceptRequest{}
		if !decodeIntercept([]byte(doc), got) {
			t.Errorf("fast path refused %s", doc)
			continue
		}
		want, err := protojsonIntercept([]byte(doc))
		if err != nil {
			t.Errorf("fast path accepted %s, protojson refuses it: %v", doc, err)
			continue
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: fast path differs from protojson (-protojson +fast):\n%s", doc, diff)
		}
	}
	for _, doc := range slowCases {
		if decodeIntercept([]byte(doc), &ahpv1.InterceptRequest{}) {
			t.Errorf("fast path accepted %s, which is protojson's to read", doc)
		}
	}
}

// TestCodecUnmarshalInterceptLikeProtojson: through the codec, a document the fast path refuses
// still decodes (or fails) as before, and a partial fast decode never leaks into the result.
func TestCodecUnmarshalInterceptLikeProtojson(t *testing.T) {
	c := jsonCodec{"json"}
	for _, doc := range append(append([]string(nil), fastCases...), slowCases...) {
		got := &ahpv1.InterceptRequest{}
		err := c.Unmarshal([]byte(doc), got)
		want, wantErr := protojsonIntercept([]byte(doc))
		if wantErr != nil && strings.Contains(wantErr.Error(), "unknown field") {
			want = &ahpv1.InterceptRequest{}
			wantErr = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal([]byte(doc), want)
		}
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%q: codec error %v, protojson error %v", doc, err, wantErr)
			continue
		}
		if err == nil && !proto.Equal(got, want) {
			t.Errorf("%q: codec gives %v, protojson %v", doc, got, want)
		}
	}
}

// Decoding into a message that already holds fields replaces them, as protojson does.
func TestCodecUnmarshalInterceptResets(t *testing.T) {
	c := jsonCodec{"json"}
	got := &ahpv1.InterceptRequest{Event: &ahpv1.Event{Id: "old", Source: "old"}, Capabilities: &ahpv1.Capabilities{}}
	if err := c.Unmarshal([]byte(`{"event":{"id":"new"}}`), got); err != nil {
		t.Fatal(err)
	}
	if want := (&ahpv1.InterceptRequest{Event: &ahpv1.Event{Id: "new"}}); !proto.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDecodeInterceptAllocations keeps the hot request on the fast path: protojson took about
// 40 allocations for it.
func TestDecodeInterceptAllocations(t *testing.T) {
	c := jsonCodec{"json"}
	data := []byte(benchInterceptBody)
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.Unmarshal(data, &ahpv1.InterceptRequest{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("decoding the benchmark's request takes %.0f allocations, want ≤ 20 (has it left the fast path?)", allocs)
	}
}

// FuzzDecodeInterceptMatchesProtojson: whatever the fast path accepts, protojson accepts and
// reads to an equal message.
func FuzzDecodeInterceptMatchesProtojson(f *testing.F) {
	for _, doc := range fastCases {
		f.Add([]byte(doc))
	}
	for _, doc := range slowCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := &ahpv1.InterceptRequest{}
		if !decodeIntercept(data, got) {
			return
		}
		want, err := protojsonIntercept(data)
		if err != nil {
			t.Fatalf("fast path accepted %q, protojson refuses it: %v", data, err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("%q: fast path %v, protojson %v", data, got, want)
		}
	})
}

func BenchmarkDecodeIntercept(b *testing.B) {
	data := []byte(benchInterceptBody)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !decodeIntercept(data, &ahpv1.InterceptRequest{}) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := protojson.Unmarshal(data, &ahpv1.InterceptRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
