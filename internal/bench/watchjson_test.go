package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// The lean JSON codec reads what a full protojson decoding reads of the fields the checks use,
// whatever else the message holds.
func TestScanWatchResponseMatchesProtojson(t *testing.T) {
	t.Parallel()
	wl, _ := NewWorkload(64)
	input, err := structpb.NewStruct(map[string]any{
		"id": "not the event's", "nested": map[string]any{"event": map[string]any{"id": "deeper"}, "list": []any{1.5, -2e3, true, nil, "a\"b\\c\u00e9\n", []any{}, map[string]any{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	odd := wl.ToolBefore(1, 9)
	odd.Id = "quote\"d\\id\u2028"
	odd.Tool.Input = input
	msgs := []*ahpv1.WatchResponse{
		{Event: wl.ToolBefore(0, 4), Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_DENY, DecisionId: "d"}, Time: time.Now().UTC().Format(time.RFC3339Nano)},
		{Event: wl.ToolAfter(1, 5), Time: "t"},
		{Event: odd, Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict(99)}},
		{},
	}
	for i, m := range msgs {
		for _, opts := range []protojson.MarshalOptions{{}, {Multiline: true}, {EmitUnpopulated: true}} {
			b, err := opts.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var got ahpv1.WatchResponse
			if err := (leanJSONWatchCodec{}).Unmarshal(b, &got); err != nil {
				t.Fatalf("message %d: %v\n%s", i, err, b)
			}
			want := &ahpv1.WatchResponse{Time: m.GetTime()}
			if m.Event != nil {
				want.Event = &ahpv1.Event{Id: m.Event.GetId(), Type: m.Event.GetType()}
				if m.Event.Session != nil {
					want.Event.Session = &ahpv1.Session{Id: m.Event.GetSession().GetId()}
				}
				if m.Event.Tool != nil {
					want.Event.Tool = &ahpv1.Tool{Kind: m.Event.GetTool().GetKind()}
				}
			}
			if m.Decision != nil {
				want.Decision = &ahpv1.Decision{Verdict: m.Decision.GetVerdict()}
			}
			if !proto.Equal(&got, want) {
				t.Errorf("message %d: scanned %v, want %v", i, &got, want)
			}
		}
	}
}

// What is not one JSON object is refused.
func TestScanWatchResponseRefusesBadJSON(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		``, `[]`, `{`, `{"event":{"id":"a"}`, `{"event":{"id":"a"}}x`, `{"time":"a}`, `{"time" "a"}`,
		`{"event":{"id":"a",}}`, `{"event":nul}`, `{"decision":{"verdict":"VERDICT_NOPE"}}`, `{"x":[1 2]}`,
		`{"time":"a` + "\x01" + `"}`, `{"time":"\q"}`, `{"event":{"type":"EVENT_TYPE_TOOL_BEFORE"},}`,
	} {
		var got ahpv1.WatchResponse
		if err := scanWatchResponse([]byte(bad), &got); err == nil {
			t.Errorf("%q: no error", bad)
		} else if strings.Contains(err.Error(), "VERDICT_NOPE") {
			t.Errorf("%q: the error echoes the value: %v", bad, err)
		}
	}
}

// The scan builds nothing for what it skips: a large tool input costs no more allocations than
// a small one.
func TestScanWatchResponseAllocatesLittle(t *testing.T) {
	allocs := func(payload int) float64 {
		wl, _ := NewWorkload(payload)
		b, err := protojson.Marshal(&ahpv1.WatchResponse{Event: wl.ToolBefore(0, 1), Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}, Time: "2026-12-01T00:00:00Z"})
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(100, func() {
			var got ahpv1.WatchResponse
			if err := scanWatchResponse(b, &got); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(0), allocs(16<<10)
	// The four messages kept, the id, session id and time strings, and the scan's closures.
	if small > 12 || large != small {
		t.Errorf("%.0f allocations for a bare item, %.0f with a 16 KB tool input; want the same, at most 12", small, large)
	}
}

func BenchmarkScanWatchResponse(b *testing.B) {
	wl, _ := NewWorkload(1024)
	msg, _ := protojson.Marshal(&ahpv1.WatchResponse{Event: wl.ToolBefore(0, 1), Decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW}, Time: "2026-12-01T00:00:00Z"})
	b.Run("lean", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var got ahpv1.WatchResponse
			if err := scanWatchResponse(msg, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var got ahpv1.WatchResponse
			if err := protojson.Unmarshal(msg, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The console watchers ask for the interval the console's Live page asks for.
func TestConsoleWatchFlushIntervalIsThePages(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../console/web/assets/store.js")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("export const WATCH_FLUSH_INTERVAL_MS = %d;", ConsoleWatchFlushInterval/time.Millisecond)
	if !strings.Contains(string(src), want) {
		t.Errorf("store.js does not say %q: ConsoleWatchFlushInterval and the page differ", want)
	}
}
