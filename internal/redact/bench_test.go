package redact_test

import (
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/redact"
	"google.golang.org/protobuf/types/known/structpb"
)

// BenchmarkEventToolBefore is a typical tool.before event with nothing to mask: the common case.
func BenchmarkEventToolBefore(b *testing.B) {
	r := newRedactor(b, redact.Config{})
	ev := toolBefore()
	ev.Harness = &ahpv1.HarnessEnvelope{AgentId: "agent-1", Metadata: mustStruct(map[string]any{"client": "cli", "version": "2.4.0"})}
	ev.Extensions = mustStruct(map[string]any{"org.w3c.trace_context": map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	b.ReportAllocs()
	for b.Loop() {
		r.Event(ev)
	}
}

// BenchmarkEventToolBeforeWithSecret is the same event with a token in the command.
func BenchmarkEventToolBeforeWithSecret(b *testing.B) {
	r := newRedactor(b, redact.Config{})
	ev := toolBefore()
	ev.Tool.Input.Fields["command"] = structpb.NewStringValue("curl -H 'Authorization: Bearer ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d' https://api.github.com/user")
	b.ReportAllocs()
	for b.Loop() {
		r.Event(ev)
	}
}

// toolOutput is 64 KiB of plausible tool output: source code, a directory listing and logs.
func toolOutput() string {
	const chunk = `func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	token := r.Header.Get("X-Request-Id") // not a secret
	if err := s.auth.Check(r.Context(), token); err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
}
-rw-r--r--  1 dev staff   4096 Nov 29 10:00 main.go
drwxr-xr-x  5 dev staff    160 Nov 29 10:00 internal
2026-11-29T10:00:00Z INFO request done path=/v1/intercept status=200 latency_us=135 session=sess-42
e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  go.sum
`
	s := strings.Repeat(chunk, 64<<10/len(chunk)+1)
	return s[:64<<10]
}

// BenchmarkEventToolOutput64KiB redacts a tool.after event carrying 64 KiB of output.
func BenchmarkEventToolOutput64KiB(b *testing.B) {
	r := newRedactor(b, redact.Config{MaxFieldBytes: -1})
	ev := toolBefore()
	ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	ev.Tool.Output = structpb.NewStringValue(toolOutput())
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		r.Event(ev)
	}
}

// BenchmarkString64KiB is the text scan alone over the same output.
func BenchmarkString64KiB(b *testing.B) {
	r := newRedactor(b, redact.Config{MaxFieldBytes: -1})
	s := toolOutput()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(s)
	}
}

// BenchmarkStringShort is one short command.
func BenchmarkStringShort(b *testing.B) {
	r := newRedactor(b, redact.Config{})
	b.ReportAllocs()
	for b.Loop() {
		r.String("git push origin main")
	}
}

// BenchmarkAdversarial1MiB feeds 1 MiB of text built to make a naive scanner go quadratic:
// anchors repeated inside what an earlier match already covers, values that never end. Every
// case must stay linear (tens of milliseconds, not seconds).
func BenchmarkAdversarial1MiB(b *testing.B) {
	r := newRedactor(b, redact.Config{MaxFieldBytes: -1})
	for _, unit := range []string{
		"-----BEGIN RSA PRIVATE KEY-----\n", // PEM blocks that never end
		"token=",                            // one value that swallows every later assignment
		`password="`,                        // an unterminated quoted value
		"Cookie: ",                          // a header value to the end of the line
		"glpat-",                            // token characters that include the anchor's
		"xoxb-",
		"sk-a",    // a run that valid() rejects
		"eyJ",     // JWT headers that never reach a dot
		"AKIA",    // fixed-length keys overlapping
		"-",       // long option dashes
		"://a:b",  // URL credentials without an '@'
		"Bearer ", // bearer with nothing after it
	} {
		s := strings.Repeat(unit, 1<<20/len(unit))
		b.Run(strings.TrimSpace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				r.String(s)
			}
		})
	}
}
