package policy_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// testNow is the evaluation time of hand-built inputs.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// mustParse parses a policy written in a test, failing the test on error.
func mustParse(tb testing.TB, src string) *policy.Policy {
	tb.Helper()
	p, err := policy.Parse([]byte(src), "test.yaml")
	if err != nil {
		tb.Fatalf("Parse: %v", err)
	}
	return p
}

// parseErr parses src, which must fail, and returns the error text.
func parseErr(tb testing.TB, src string) string {
	tb.Helper()
	_, err := policy.Parse([]byte(src), "test.yaml")
	if err == nil {
		tb.Fatalf("Parse succeeded, want an error")
	}
	return err.Error()
}

// toolBefore builds a tool.before input for a tool call.
func toolBefore(tb testing.TB, name string, kind ahpv1.ToolKind, input map[string]any) policy.Input {
	tb.Helper()
	s, err := structpb.NewStruct(input)
	if err != nil {
		tb.Fatal(err)
	}
	return policy.Input{
		Event: &ahpv1.Event{
			Id:      "evt-1",
			Source:  "https://harness.example/agent",
			Type:    ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE,
			Session: &ahpv1.Session{Id: "sess-1", Agent: &ahpv1.Agent{Id: "agent-1"}},
			Tool:    &ahpv1.Tool{CallId: "call-1", Name: name, Kind: kind, Input: s},
		},
		Session: &policy.SessionView{SessionID: "sess-1"},
		Now:     testNow,
	}
}

func shell(tb testing.TB, command string) policy.Input {
	tb.Helper()
	return toolBefore(tb, "Bash", ahpv1.ToolKind_TOOL_KIND_SHELL, map[string]any{"command": command})
}

// hooksCaps are the capabilities of an Agent Hooks Protocol v0.1 caller.
func hooksCaps() *ahpv1.Capabilities {
	return &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY}}
}

func caps(kinds ...ahpv1.EffectKind) *ahpv1.Capabilities {
	return &ahpv1.Capabilities{Effects: kinds}
}

// effectKinds names the effects of a result in order ("deny", "message").
func effectKinds(res policy.Result) []string {
	out := []string{}
	for _, e := range res.Effects {
		fd := e.ProtoReflect().WhichOneof(e.ProtoReflect().Descriptor().Oneofs().ByName("effect"))
		out = append(out, string(fd.Name()))
	}
	return out
}

func wantVerdict(tb testing.TB, res policy.Result, want ahpv1.Verdict) {
	tb.Helper()
	if res.Verdict != want {
		tb.Errorf("verdict = %v, want %v (effects %v, errors %v)", res.Verdict, want, effectKinds(res), res.Errors)
	}
}

func wantStrings(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if !slices.Equal(got, want) {
		tb.Errorf("%s = %q, want %q", what, got, want)
	}
}

func wantContains(tb testing.TB, what, got, want string) {
	tb.Helper()
	if !strings.Contains(got, want) {
		tb.Errorf("%s = %q, want it to contain %q", what, got, want)
	}
}

func wantNoErrors(tb testing.TB, res policy.Result) {
	tb.Helper()
	if len(res.Errors) > 0 {
		tb.Errorf("unexpected evaluation errors: %v", res.Errors)
	}
}
