package adapter

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// FuzzMapRender feeds arbitrary input to every runtime's mapping: it never panics, a failure is
// always an *InputError, and every intercepted event renders an answer for each kind of decision
// that Claude Code's and Codex's parsers accept — and a Stop hook's "block", which keeps the agent
// working, only for a flow continue.
func FuzzMapRender(f *testing.F) {
	for _, c := range loadGolden(f) {
		f.Add(uint8(c.provider), string(c.body()), c.EventOption)
	}
	decisions := []*ahpv1.Decision{
		decisionOf(),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: "no"}}}),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: "ask"}}}),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{}}}),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: "note"}}}),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: "stop", Reason: "halt"}}}),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Flow{Flow: &ahpv1.FlowEffect{Operation: "continue"}}}),
		decisionOf(&ahpv1.Effect{Effect: &ahpv1.Effect_Inject{Inject: &ahpv1.InjectEffect{Target: "context", Operation: "append",
			Value: &structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("not a message")}}}}}),
	}
	providers := Providers()
	f.Fuzz(func(t *testing.T, p uint8, body, event string) {
		provider := providers[int(p)%len(providers)]
		req, err := Map(provider, []byte(body), Options{ID: "e", Now: time.Unix(0, 0), Event: event})
		if err != nil {
			if ie := (*InputError)(nil); !errors.As(err, &ie) {
				t.Fatalf("%v: error %T %v is not an *InputError", provider, err, err)
			}
			return
		}
		if !req.Intercepted() {
			return
		}
		for _, d := range decisions {
			out, err := RenderOutput(req, d, "notice")
			if err != nil {
				t.Fatalf("%v %s: RenderOutput: %v", provider, req.HookEvent, err)
			}
			if out.Exit != 0 && out.Exit != 2 {
				t.Fatalf("%v %s: exit %d", provider, req.HookEvent, out.Exit)
			}
			if provider == ClaudeCode || provider == Codex {
				checkRuntimeAccepts(t, provider, req.HookEvent, out.Stdout)
				continues := len(d.GetEffects()) > 0 && d.GetEffects()[0].GetFlow().GetOperation() == "continue"
				if req.spec.keepsGoingOnExit2() && bytes.Contains(out.Stdout, []byte(`"decision":"block"`)) != continues {
					t.Fatalf("%v %s: %s for %v", provider, req.HookEvent, out.Stdout, d.GetEffects())
				}
			}
		}
	})
}
