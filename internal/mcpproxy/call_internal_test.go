package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReduce(t *testing.T) {
	t.Parallel()
	orig := mustStruct(t, map[string]any{"path": "/a", "opts": map[string]any{"x": 1.0, "y": 2.0}})
	patch := mustStruct(t, map[string]any{"path": "/b", "opts": map[string]any{"x": nil}})
	eff := func(e *ahpv1.Effect) *ahpv1.Decision { return &ahpv1.Decision{Effects: []*ahpv1.Effect{e}} }
	msg := &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "note"}}}
	cases := []struct {
		name   string
		d      *ahpv1.Decision
		want   verdict
		reason string
		input  map[string]any
	}{
		{"no effect", &ahpv1.Decision{}, forward, "", nil},
		{"deny", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}}}), refuse, "no", nil},
		{"deny without reason", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{}}}), refuse, "Denied by policy.", nil},
		{"deny verdict without its effect", &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY}, refuse, "Denied by policy.", nil},
		{"ask", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "human"}}}), refuse, "approval required: human", nil},
		{"defer", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: 500, Reason: "busy"}}}), refuse, "retry in 500ms: busy", nil},
		{"modify replace", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: structpb.NewStructValue(patch)}}}), rewrite, "", map[string]any{"path": "/b", "opts": map[string]any{"x": nil}}},
		{"modify merge", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Operation: ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE, Value: structpb.NewStructValue(patch)}}}), rewrite, "", map[string]any{"path": "/b", "opts": map[string]any{"y": 2.0}}},
		{"modify of another target", eff(&ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Target: ahpv1.ModifyTarget_MODIFY_TARGET_OUTPUT, Value: structpb.NewStructValue(patch)}}}), refuse, "input must be changed: the policy's change (the MCP gateway can change only the arguments)", nil},
		{"deny wins over modify", &ahpv1.Decision{Effects: []*ahpv1.Effect{
			{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: structpb.NewStructValue(patch)}}},
			{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}}}, msg}}, refuse, "no", nil},
	}
	for _, c := range cases {
		o := reduce(c.d, orig)
		if o.verdict != c.want || o.reason != c.reason {
			t.Errorf("%s: verdict %v reason %q, want %v %q", c.name, o.verdict, o.reason, c.want, c.reason)
		}
		if c.input != nil {
			got, _ := json.Marshal(o.input.AsMap())
			want, _ := json.Marshal(c.input)
			if !bytes.Equal(got, want) {
				t.Errorf("%s: input %s, want %s", c.name, got, want)
			}
		}
	}
	if o := reduce(&ahpv1.Decision{Effects: []*ahpv1.Effect{msg}}, orig); o.verdict != forward || len(o.messages) != 1 || o.messages[0] != "note" {
		t.Errorf("message only: %+v", o)
	}
}

func TestToolCallRewriteKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	c, err := parseToolCall(json.RawMessage(`{"name":"w","arguments":{"a":1},"_meta":{"progressToken":"p"}}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.withArguments(mustStruct(t, map[string]any{"a": 2.0}))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"_meta":{"progressToken":"p"},"arguments":{"a":2},"name":"w"}` {
		t.Errorf("rewritten params %s", out)
	}
	for _, bad := range []string{`[]`, `{"name":""}`, `{"name":"x","arguments":[1]}`, `{"name":3}`} {
		if _, err := parseToolCall(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		} else if strings.Contains(err.Error(), bad) {
			t.Errorf("%s: the error echoes the input: %v", bad, err)
		}
	}
}

func TestCallIDsAreStableAndDistinct(t *testing.T) {
	t.Parallel()
	n, _ := jsonrpc.MakeID(float64(7))
	s, _ := jsonrpc.MakeID("7")
	if callID("S", n) != "mcp-S-7" || callID("S", s) != "mcp-S-s7" || callID("S", n) != callID("S", n) {
		t.Errorf("call ids %q %q", callID("S", n), callID("S", s))
	}
}

func TestWithMessages(t *testing.T) {
	t.Parallel()
	got := withMessages(json.RawMessage(`{"content":[{"type":"text","text":"a"}],"isError":false}`), []string{"b"})
	if string(got) != `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"isError":false}` {
		t.Errorf("%s", got)
	}
	if got := withMessages(json.RawMessage(`"odd"`), []string{"b"}); string(got) != `"odd"` {
		t.Errorf("an unreadable result was changed: %s", got)
	}
}

func TestTooLargeFindsTheID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line    string
		hasID   bool
		id      any
		request bool
	}{
		{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 100), true, int64(12), true},
		{`{"jsonrpc":"2.0","id":"abc","result":{"x":"` + strings.Repeat("a", 100), true, "abc", false},
		{`{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", 100), false, nil, false},
		{`not json`, false, nil, false},
	} {
		e := tooLarge([]byte(c.line), 10)
		if e.HasID != c.hasID || e.Request != c.request || (c.hasID && e.ID.Raw() != c.id) {
			t.Errorf("%.30s: %+v", c.line, e)
		}
	}
}

func TestStreamRefusesLongLinesAndGoesOn(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200<<10) + `"}}` + "\n" +
		"\n" + `garbage` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	s := NewStream(strings.NewReader(in), io.Discard, 64<<10, nil)
	ctx := context.Background()
	_, err := s.Read(ctx)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !tl.HasID || !tl.Request {
		t.Fatalf("first read: %v", err)
	}
	var mf *MalformedError
	if _, err := s.Read(ctx); !errors.As(err, &mf) {
		t.Fatalf("second read: %v, want malformed", err)
	}
	msg, err := s.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); err != nil || !ok || req.ID.Raw() != int64(2) {
		t.Fatalf("third read: %v %v", msg, err)
	}
	if _, err := s.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v", err)
	}
}

// FuzzStream feeds arbitrary bytes to the framing: it never panics, and every error but the
// per-message ones ends the stream.
func FuzzStream(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n\n[1,2]\n{"))
	f.Add([]byte(strings.Repeat("x", 3000) + "\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewStream(bytes.NewReader(data), io.Discard, 1024, nil)
		for range 10000 {
			_, err := s.Read(context.Background())
			var tl *TooLargeError
			var mf *MalformedError
			if err != nil && !errors.As(err, &tl) && !errors.As(err, &mf) {
				return
			}
		}
		t.Fatal("the stream did not end")
	})
}
