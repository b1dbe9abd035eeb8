package session_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/session"
	"google.golang.org/protobuf/proto"
)

// failedTool records a tool error with message msg and returns the facts the session remembers.
func failedTool(t testing.TB, msg string) []*ahpv1.Fact {
	t.Helper()
	m := session.NewMemory(session.Options{})
	ev := toolEvent(ahpv1.EventType_EVENT_TYPE_TOOL_ERROR, "s", "a")
	ev.Tool.Error = &ahpv1.ToolError{Message: msg}
	m.RecordEvent(ev, time.Unix(1_000_000, 0))
	return m.View("s", "").Facts
}

// A long message of two-byte runes used to be cut in the middle of one: the fact then held
// invalid UTF-8 and every answer carrying it failed to marshal.
func TestLongFactIsCutOnARuneBoundary(t *testing.T) {
	t.Parallel()
	facts := failedTool(t, "a"+strings.Repeat("é", 200))
	if len(facts) != 1 {
		t.Fatalf("facts = %v, want one", facts)
	}
	content := facts[0].GetContent()
	if !utf8.ValidString(content) {
		t.Fatalf("fact content is not valid UTF-8: %q", content)
	}
	if _, err := proto.Marshal(facts[0]); err != nil {
		t.Fatalf("marshal fact: %v", err)
	}
	if len(content) > session.MaxFactLen || !strings.HasSuffix(content, "…") || !strings.HasPrefix(content, "tool Bash failed: aéé") {
		t.Errorf("fact = %q (%d bytes), want at most %d bytes ending in …", content, len(content), session.MaxFactLen)
	}
}

func TestShortFactIsKeptWhole(t *testing.T) {
	t.Parallel()
	msg := strings.Repeat("x", session.MaxFactLen-len("tool Bash failed: "))
	if got := failedTool(t, msg)[0].GetContent(); got != "tool Bash failed: "+msg {
		t.Errorf("fact = %q, want the whole message", got)
	}
}

// FuzzFactContent: whatever a tool error says, the fact remembered is valid UTF-8 (when the
// message is) and within the cap.
func FuzzFactContent(f *testing.F) {
	f.Add("a" + strings.Repeat("é", 200))
	f.Add(strings.Repeat("🙂", 100))
	f.Add("ab" + strings.Repeat("日本語", 40))
	f.Add("exit status 2")
	f.Fuzz(func(t *testing.T, msg string) {
		for _, fact := range failedTool(t, msg) {
			content := fact.GetContent()
			if utf8.ValidString(msg) && !utf8.ValidString(content) {
				t.Fatalf("valid message %q gave invalid fact %q", msg, content)
			}
			if len(content) > session.MaxFactLen {
				t.Fatalf("fact of %d bytes, cap %d: %q", len(content), session.MaxFactLen, content)
			}
		}
	})
}
