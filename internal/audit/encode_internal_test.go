package audit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// marshalStd is the reference: encoding/json with HTML escaping off, chain members left out.
func marshalStd(t testing.TB, rec Record) []byte {
	t.Helper()
	rec.Seq, rec.Prev, rec.Hash = 0, "", ""
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&rec); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestEncoderMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	records := []Record{
		{Kind: KindObservation},
		{Kind: KindDecision, Time: "t", DecisionID: "d", EventID: "e", Source: "s", SessionID: "x", AgentID: "a",
			EventType: "tool.before", ToolName: "Bash", ToolKind: "shell", ToolCallID: "c", Verdict: "deny",
			Effects:        []Effect{{Kind: "deny", RuleID: "r", Reason: "a <b> & \"c\"\n\t\x01\u2028é\xff", Code: "k", Message: "m", Target: "t", RetryAfterMs: 5}, {Kind: "allow"}},
			MatchedRuleIDs: []string{"r", ""},
			DryRun:         []DryRun{{WouldBe: Effect{Kind: "ask"}}, {RuleID: "d", WouldBe: Effect{Kind: "deny", Reason: "x"}}},
			Fallbacks:      []Fallback{{Wanted: "ask"}, {RuleID: "r", Wanted: "ask", Sent: "deny", Reason: "why"}},
			Typed:          "block", Synthetic: true, Replayed: true, LatencyUs: 12,
			Extensions: map[string]any{"b": 1.5, "a": map[string]any{"z": []any{"<x>", nil, true}}},
			Event:      json.RawMessage(`{ "id" : "e",  "tool": {"name":"a&b"} }`),
		},
		{Kind: KindDecision, Effects: []Effect{}, MatchedRuleIDs: []string{}},
		{Kind: KindDecision, ApprovalID: "apv-1"},
		{Kind: KindApproval, ApprovalID: "apv-1", Approval: &Approval{Change: "decided", State: "denied", RuleIDs: []string{"r"},
			Principal: "agent", DecidedBy: "alice", Comment: "no <way> & \u2028", LatencyMs: 1500, Abandoned: true}},
		{Kind: KindApproval, Approval: &Approval{Change: "requested", State: "pending"}},
	}
	for i, rec := range records {
		got, err := appendBody(nil, &rec)
		if err != nil {
			t.Fatal(err)
		}
		if want := marshalStd(t, rec); !bytes.Equal(got, want) {
			t.Errorf("record %d\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\b\f\n\r\t\x00\x1f\x7f", "<>&", "\u2028\u2029", "\xff\xfe", "é日本🙂", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := jsonwire.AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
