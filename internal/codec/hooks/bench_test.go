package hooks_test

import (
	"os"
	"path/filepath"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
)

// BenchmarkDecodeHooksMessage decodes the richest intercept request of the test data.
func BenchmarkDecodeHooksMessage(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testdataDir, "message", "intercept-full.valid.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := hooks.DecodeMessage(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeHooksDeny renders a deny decision and encodes the response, as the bridge does
// for every denied call.
func BenchmarkEncodeHooksDeny(b *testing.B) {
	d := &ahpv1.Decision{
		DecisionId:     "0190f1c2-7d1e-7000-8000-000000000001",
		MatchedRuleIds: []string{"git-1"},
		Effects:        []*ahpv1.Effect{denyEffect("Force pushes are blocked.", "dev.ahpgateway.git.force_push", "git-1")},
	}
	b.ReportAllocs()
	for b.Loop() {
		r := hooks.RenderResult(d, hooks.ProtocolVersion)
		if _, err := hooks.EncodeMessage(&hooks.Message{ID: hooks.StringID("ev-1"), Result: r}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDecisionDeny is BenchmarkEncodeHooksDeny the way the bridge now answers a v0.1
// deny: EncodeDecision writes the same bytes straight from the decision.
func BenchmarkEncodeDecisionDeny(b *testing.B) {
	d := &ahpv1.Decision{
		DecisionId:     "0190f1c2-7d1e-7000-8000-000000000001",
		MatchedRuleIds: []string{"git-1"},
		PolicyDigest:   "sha256:a6750d408d1a08a22e937348ec172c6b63cbe7815eddc4c46f03517a38e72268",
		Effects:        []*ahpv1.Effect{denyEffect("Force pushes are blocked.", "dev.ahpgateway.git.force_push", "git-1")},
	}
	b.Run("RenderResult+EncodeResult", func(b *testing.B) { // the bridge's way before
		b.ReportAllocs()
		for b.Loop() {
			if out := hooks.EncodeResult(hooks.StringID("ev-1"), hooks.RenderResult(d, hooks.ProtocolVersion)); len(out) == 0 {
				b.Fatal("no answer")
			}
		}
	})
	b.Run("EncodeDecision", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if out := hooks.EncodeDecision(hooks.StringID("ev-1"), d, hooks.ProtocolVersion); len(out) == 0 {
				b.Fatal("no answer")
			}
		}
	})
}

// BenchmarkDecodeDraftMessage decodes the richest draft intercept request of the test data (an
// MCP tool.before with lineage, gaps, state and every effect advertised).
func BenchmarkDecodeDraftMessage(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testdataDir, "draft", "intercept-tool-before-mcp.valid.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := hooks.DecodeBytes(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDraftDeny renders a deny for a draft offer and writes the response, as the
// bridge does (hooks.EncodeResult).
func BenchmarkEncodeDraftDeny(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testdataDir, "draft", "intercept-tool-before-mcp.valid.json"))
	if err != nil {
		b.Fatal(err)
	}
	m, err := hooks.DecodeBytes(data)
	if err != nil {
		b.Fatal(err)
	}
	d := &ahpv1.Decision{
		DecisionId:     "0190f1c2-7d1e-7000-8000-000000000001",
		MatchedRuleIds: []string{"git-1"},
		Effects:        []*ahpv1.Effect{denyEffect("Force pushes are blocked.", "dev.ahpgateway.git.force_push", "git-1")},
	}
	b.ReportAllocs()
	for b.Loop() {
		r, _ := hooks.RenderDraftResult(d, m.Intercept.Offer)
		if out := hooks.EncodeResult(m.ID, r); len(out) == 0 {
			b.Fatal("empty answer")
		}
	}
}
