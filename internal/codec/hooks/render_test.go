package hooks_test

import (
	"bytes"
	"encoding/json"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"google.golang.org/protobuf/types/known/structpb"
)

func denyEffect(reason, code, ruleID string) *ahpv1.Effect {
	return &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason, Code: code}}, RuleId: ruleID}
}

// renderJSON renders d as a complete response and returns its result object as JSON, checking
// on the way that the rendered result is one the codec accepts.
func renderJSON(t *testing.T, d *ahpv1.Decision) string {
	t.Helper()
	r := hooks.RenderResult(d, hooks.ProtocolVersion)
	out, err := hooks.EncodeMessage(&hooks.Message{ID: hooks.StringID("ev-1"), Result: r})
	if err != nil {
		t.Fatalf("rendered result is not valid v0.1: %v", err)
	}
	if direct := hooks.EncodeDecision(hooks.StringID("ev-1"), d, hooks.ProtocolVersion); !bytes.Equal(direct, out) {
		t.Errorf("EncodeDecision:\n got %s\nwant %s", direct, out)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatal(err)
	}
	return string(env.Result)
}

func TestRenderResult(t *testing.T) {
	t.Parallel()
	allow := &ahpv1.Effect{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{Reason: "fine"}}, RuleId: "r-allow"}
	ask := &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "check"}}}
	modify := &ahpv1.Effect{Effect: &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{Value: structpb.NewStringValue("x")}}}
	message := &ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "hi"}}}
	tests := []struct {
		name     string
		decision *ahpv1.Decision
		want     string
	}{
		{
			name:     "deny with message becomes one deny",
			decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{denyEffect("Force pushes are blocked.", "dev.ahpgateway.git.force_push", "git-1")}},
			want: `{"effects":[{"code":"dev.ahpgateway.git.force_push","extensions":{"dev.ahpgateway":{"ruleId":"git-1"}},` +
				`"reason":"Force pushes are blocked.","type":"deny"}],"protocolVersion":"0.1"}`,
		},
		{
			name:     "allow ask modify and message render no effect",
			decision: &ahpv1.Decision{Verdict: ahpv1.Verdict_VERDICT_ALLOW, Effects: []*ahpv1.Effect{allow, ask, modify, message}},
			want:     `{"effects":[],"protocolVersion":"0.1"}`,
		},
		{
			name:     "first deny wins",
			decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{allow, denyEffect("first", "", ""), denyEffect("second", "", "")}},
			want:     `{"effects":[{"reason":"first","type":"deny"}],"protocolVersion":"0.1"}`,
		},
		{
			name: "decision id rule ids and synthetic go to extensions",
			decision: &ahpv1.Decision{
				DecisionId:     "0190f1c2-7d1e-7000-8000-000000000001",
				MatchedRuleIds: []string{"r-1", "r-2"},
				Synthetic:      true,
				Effects:        []*ahpv1.Effect{denyEffect("Required policy backend unavailable.", "", "")},
			},
			want: `{"effects":[{"reason":"Required policy backend unavailable.","type":"deny"}],` +
				`"extensions":{"dev.ahpgateway":{"decisionId":"0190f1c2-7d1e-7000-8000-000000000001","ruleIds":["r-1","r-2"],"synthetic":true}},` +
				`"protocolVersion":"0.1"}`,
		},
		{
			name: "the policy digest and revision go to extensions",
			decision: &ahpv1.Decision{
				DecisionId:     "d-2",
				PolicyDigest:   "sha256:4f2a",
				PolicyRevision: 7,
				Effects:        []*ahpv1.Effect{denyEffect("no", "", "")},
			},
			want: `{"effects":[{"reason":"no","type":"deny"}],` +
				`"extensions":{"dev.ahpgateway":{"decisionId":"d-2","policyDigest":"sha256:4f2a","policyRevision":7}},` +
				`"protocolVersion":"0.1"}`,
		},
		{
			name:     "a policy from a file has a digest and no revision",
			decision: &ahpv1.Decision{DecisionId: "d-3", PolicyDigest: "sha256:4f2a"},
			want:     `{"effects":[],"extensions":{"dev.ahpgateway":{"decisionId":"d-3","policyDigest":"sha256:4f2a"}},"protocolVersion":"0.1"}`,
		},
		{
			name:     "no-effect decision still carries its id",
			decision: &ahpv1.Decision{DecisionId: "d-1"},
			want:     `{"effects":[],"extensions":{"dev.ahpgateway":{"decisionId":"d-1"}},"protocolVersion":"0.1"}`,
		},
		{
			name: "invalid deny parts are repaired or dropped",
			decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{
				Code: "not reverse dns",
				Extensions: &structpb.Struct{Fields: map[string]*structpb.Value{
					"com.example.ok": structpb.NewBoolValue(true),
					"bad key":        structpb.NewBoolValue(true),
				}},
			}}}}},
			want: `{"effects":[{"extensions":{"com.example.ok":true},"reason":"Denied by policy.","type":"deny"}],"protocolVersion":"0.1"}`,
		},
		{
			name: "an existing namespace extension is not overwritten",
			decision: &ahpv1.Decision{Effects: []*ahpv1.Effect{{RuleId: "r-9", Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{
				Reason:     "no",
				Extensions: &structpb.Struct{Fields: map[string]*structpb.Value{"dev.ahpgateway": structpb.NewStringValue("own")}},
			}}}}},
			want: `{"effects":[{"extensions":{"dev.ahpgateway":"own"},"reason":"no","type":"deny"}],"protocolVersion":"0.1"}`,
		},
		{
			name:     "nil decision",
			decision: nil,
			want:     `{"effects":[],"protocolVersion":"0.1"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := renderJSON(t, tt.decision); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRenderResultDoesNotAlias checks that the result shares no messages with the decision,
// which other code may go on to change.
func TestRenderResultDoesNotAlias(t *testing.T) {
	t.Parallel()
	ext := &structpb.Struct{Fields: map[string]*structpb.Value{
		"com.example.policy": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(1)}}),
	}}
	d := &ahpv1.Decision{Effects: []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no", Extensions: ext}}}}}
	r := hooks.RenderResult(d, "0.1")
	ext.Fields["com.example.policy"].GetStructValue().Fields["a"] = structpb.NewNumberValue(2)
	if got := r.GetEffects()[0].GetExtensions().GetFields()["com.example.policy"].GetStructValue().GetFields()["a"].GetNumberValue(); got != 1 {
		t.Errorf("rendered extension changed with the decision: %v", got)
	}
}

func TestEncodeRegistrationBuilt(t *testing.T) {
	t.Parallel()
	timeout, native := uint32(250), true
	reg := &ahpv1.HooksRegistration{
		ProtocolVersion: "0.1",
		Hooks: []*ahpv1.HookBackend{{
			Id:             "dev.ahpgateway.bridge",
			Transport:      &ahpv1.HookBackend_Http{Http: &ahpv1.HookHttpTransport{Url: "https://gw.example/hooks"}},
			Authentication: &ahpv1.HookAuthentication{Type: "bearer", TokenEnv: "AHP_GATEWAY_TOKEN"},
			Subscriptions: []*ahpv1.HookSubscription{
				{Events: []string{"tool.before"}, Mode: ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_INTERCEPT,
					TimeoutMs: &timeout, FailurePolicy: ahpv1.FailurePolicy_FAILURE_POLICY_FAIL_CLOSED, IncludeNative: &native},
				{Events: []string{"tool.after", "session.end"}, Mode: ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_OBSERVE},
			},
		}},
	}
	out, err := hooks.EncodeRegistration(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hooks":[{"authentication":{"tokenEnv":"AHP_GATEWAY_TOKEN","type":"bearer"},"id":"dev.ahpgateway.bridge",` +
		`"subscriptions":[{"events":["tool.before"],"failurePolicy":"fail-closed","includeNative":true,"mode":"intercept","timeoutMs":250},` +
		`{"events":["tool.after","session.end"],"mode":"observe"}],"transport":{"type":"http","url":"https://gw.example/hooks"}}],` +
		`"protocolVersion":"0.1"}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}

	// An observe subscription with a failure policy is refused, not written.
	reg.Hooks[0].Subscriptions[1].FailurePolicy = ahpv1.FailurePolicy_FAILURE_POLICY_FAIL_OPEN
	if out, err := hooks.EncodeRegistration(reg); err == nil {
		t.Errorf("encoded invalid registration %s", out)
	}
}
