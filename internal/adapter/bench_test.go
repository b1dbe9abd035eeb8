package adapter

import (
	"context"
	"slices"
	"testing"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

var benchInput = []byte(`{"session_id":"3f1c2a9e-5b7d-4e21-9a0c-6d8e2f4b1a73","transcript_path":"/home/dev/.claude/projects/app/3f1c2a9e.jsonl","cwd":"/home/dev/app","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /","description":"Remove everything"},"tool_use_id":"toolu_01A1"}`)

// BenchmarkMapRender is the adapter's own work per event: the hook input to the canonical event,
// and a denial back to Claude Code's output.
func BenchmarkMapRender(b *testing.B) {
	d := decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "Refusing to delete the filesystem root."}}})
	opts := Options{ID: "e", Now: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		req, err := Map(ClaudeCode, benchInput, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(req, d, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandle is one PreToolUse through the runner against the embedded server: what the HTTP
// form costs per event, before HTTP.
func BenchmarkHandle(b *testing.B) {
	be := testBackend(b)
	a, err := New(Config{Provider: ClaudeCode, Clients: be.embedded})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := a.Handle(ctx, benchInput); res.Output == nil {
			b.Fatal("no answer")
		}
	}
}

// BenchmarkMapRenderRuntimes is BenchmarkMapRender for every runtime, on its golden
// before-tool denial case (pretooluse-deny, beforetool-deny, pre-run-command-deny).
func BenchmarkMapRenderRuntimes(b *testing.B) {
	d := decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "Refusing to delete the filesystem root."}}})
	for _, c := range loadGolden(b) {
		if !slices.Contains([]string{"pretooluse-deny", "beforetool-deny", "pre-run-command-deny"}, c.name) {
			continue
		}
		opts := Options{ID: "e", Now: time.Now(), Event: c.EventOption}
		b.Run(c.provider.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, err := Map(c.provider, c.Input, opts)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := RenderOutput(req, d, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
