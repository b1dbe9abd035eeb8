package policy_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// noInternalErrors fails on evaluation errors that come from a recovered panic: CEL run-time
// errors are fine (a rule may not fit the input), panics are bugs.
func noInternalErrors(t *testing.T, res policy.Result) {
	t.Helper()
	for _, e := range res.Errors {
		if strings.Contains(e.Error(), "internal error") {
			t.Fatalf("panic during evaluation: %v", e)
		}
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, seed := range exampleSeeds(f) {
		f.Add(seed)
	}
	f.Add([]byte("version: 1\nrules:\n  - id: a\n    on: [idle]\n    effect: {typed: {action: defer}}\n"))
	f.Add([]byte("version: 1\nrules:\n  - id: m\n    on: [tool.before]\n    effect: {modify: {merge: {a: {b: null}}}}\n"))
	f.Add([]byte("version: 1\nrules: [{id: x, when: 'input.a[0].b > 1', effect: {deny: {reason_expr: 'string(input)'}}}]\n"))
	f.Add([]byte("version: 1\nsettings: {confirmation: {default: {x: approve}}}\n"))
	f.Add([]byte("{version: 1, rules: [{id: 'a', effect: {allow: {}}}, {id: 'a'}]}"))
	f.Add([]byte("version: 1\nrules:\n  - &r {id: a, effect: {deny: {reason: x}}}\n  - *r\n"))
	in := shell(f, "rm -rf / && git push --force origin main")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse(data, "fuzz.yaml")
		if err != nil {
			if p != nil {
				t.Fatal("Parse returned a policy and an error")
			}
			return
		}
		// A policy that loads must evaluate without panicking, for every caller shape.
		for _, c := range []*ahpv1.Capabilities{nil, hooksCaps(), caps()} {
			in.Capabilities = c
			res := p.Evaluate(in)
			noInternalErrors(t, res)
			if res.Verdict == ahpv1.Verdict_VERDICT_UNSPECIFIED {
				t.Fatal("no verdict")
			}
		}
		_ = p.Rules()
		_ = p.Settings()
	})
}

// probePolicy reads every variable the environment offers, in ways that fail at run time on
// unexpected shapes; the fuzzer checks that such failures stay errors.
const probePolicy = `version: 1
rules:
  - id: event-fields
    when: |
      event.id + event.source + event.type + event.time + event.outcome != "x" &&
      event.session.id + event.session.cwd + event.session.model + event.session.agent.id != "x" &&
      size(event.session.workspace_roots) >= 0 && size(event.extensions) >= 0 &&
      event.harness.depth >= 0 && size(event.harness.context) >= 0 && size(event.harness.metadata) >= 0 &&
      event.origin.dialect != "x" && event.native.provider != "x" && event.raw_payload != "x"
    effect: {message: {text_expr: 'event.type + ":" + tool.name'}}
  - id: tool-fields
    when: |
      tool.call_id + tool.name + tool.kind != "x" && tool.output != "x" &&
      tool.error.message != "x" && tool.error.code != "x" && tool.mcp.server != "x" &&
      size(tool.input) >= 0 && input.all(k, k != "")
    effect: {deny: {reason_expr: 'string(size(input))'}}
  - id: input-walk
    when: '"command" in input && input.command.matches("a+") || input.exists(k, type(input[k]) == map && size(input[k]) > 0)'
    effect: {ask: {reason: walked}}
  - id: session-fields
    when: |
      session.event_count + session.tool_call_count + session.error_count + session.deny_count + session.idle_ms >= 0 &&
      session.first_seen <= now && session.last_event_type + session.run_status + session.verification_status != "x" &&
      session.facts.all(f, f.confidence >= 0.0 || f.confidence < 0.0) && size(session.recent) >= 0
    effect: {defer: {retry_after_ms: 1}}
  - id: payload-fields
    when: 'payload.exists(k, payload[k] != null) && event.payload == payload'
    effect: {escalate: {target: t}}
  - id: modify
    on: [tool.before]
    effect: {modify: {merge_expr: 'input', reason: copy}}
  - id: replace
    on: [tool.before]
    effect: {modify: {input: '{"n": size(input), "first": input.exists(k, true)}'}}
`

func FuzzEvaluateInput(f *testing.F) {
	f.Add(int32(1), "Bash", int32(1), `{"command":"rm -rf /"}`, "src", "sess", uint64(5), int64(1000), "payload", []byte("x"))
	f.Add(int32(86), "", int32(0), `{}`, "", "", uint64(0), int64(0), "llm_token_limit", []byte{})
	f.Add(int32(87), "t", int32(9), `{"a":{"b":[1,2,{"c":null}]}}`, "s", "s", uint64(1<<63), int64(-5), "custom", []byte("\xff"))
	f.Add(int32(80), "x", int32(99), `[1,2]`, "\x00", "\u2028", uint64(0), int64(1<<62), "", []byte("{"))
	f.Add(int32(6), "Write", int32(3), `{"file_path": ".env", "command": 3}`, "", "", uint64(9), int64(9), "prompt", []byte(`{"prompt":"hi"}`))
	p := mustParse(f, probePolicy)
	def := policy.Default()
	f.Fuzz(func(t *testing.T, evType int32, toolName string, toolKind int32, inputJSON, source, sessionID string,
		counter uint64, idleMs int64, text string, raw []byte) {
		ev := &ahpv1.Event{
			Id:      text,
			Source:  source,
			Type:    ahpv1.EventType(evType),
			Time:    text,
			Session: &ahpv1.Session{Id: sessionID, WorkspaceRoots: []string{text}, Agent: &ahpv1.Agent{Id: text}},
			Tool:    &ahpv1.Tool{Name: toolName, Kind: ahpv1.ToolKind(toolKind), Error: &ahpv1.ToolError{Message: text}},
			Harness: &ahpv1.HarnessEnvelope{AgentId: text, Depth: uint32(counter), Context: &ahpv1.EventContext{CurrentTask: &text}},
		}
		var v any
		if json.Unmarshal([]byte(inputJSON), &v) == nil {
			if m, ok := v.(map[string]any); ok {
				ev.Tool.Input, _ = structpb.NewStruct(m)
			}
			ev.Tool.Output, _ = structpb.NewValue(v)
			ev.Payload, _ = structpb.NewValue(v)
		}
		if json.Unmarshal(raw, &v) == nil {
			ev.Extensions, _ = structpb.NewStruct(map[string]any{"raw": v})
		}
		switch ahpv1.EventType(evType) {
		case ahpv1.EventType_EVENT_TYPE_RATE_LIMIT:
			ev.Body = &ahpv1.Event_RateLimit{RateLimit: &ahpv1.RateLimitPayload{
				LimitType: &ahpv1.RateLimitType{Type: &ahpv1.RateLimitType_Custom{Custom: text}}, RetryAfterMs: counter, CurrentUsage: text,
			}}
		case ahpv1.EventType_EVENT_TYPE_CONFIRMATION:
			ev.Body = &ahpv1.Event_Confirmation{Confirmation: &ahpv1.ConfirmationPayload{
				ConfirmationType: &ahpv1.ConfirmationType{Type: &ahpv1.ConfirmationType_Known{Known: ahpv1.ConfirmationKind(toolKind)}},
				Options:          &ahpv1.StringList{Values: []string{text}},
			}}
		case ahpv1.EventType_EVENT_TYPE_IDLE:
			ev.Body = &ahpv1.Event_Idle{Idle: &ahpv1.IdlePayload{IdleDurationMs: counter, SuggestedAction: &text}}
		case ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION:
			ev.Body = &ahpv1.Event_ContextPerception{ContextPerception: &ahpv1.ContextPerceptionPayload{
				Intent: ahpv1.PerceptionIntent(toolKind),
				Target: &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Resource{Resource: &ahpv1.ResourceTarget{Name: text, Constraints: ev.Payload}}},
			}}
		}
		in := policy.Input{
			Event: ev,
			Session: &policy.SessionView{
				SessionID: sessionID, EventCount: counter, DenyCount: counter,
				LastSeen: testNow.Add(-time.Duration(idleMs) * time.Millisecond),
				Facts:    []*ahpv1.Fact{{Content: text, Confidence: float32(idleMs)}},
				Recent:   []policy.EventSummary{{Type: text}},
			},
			Now: testNow,
		}
		for _, c := range []*ahpv1.Capabilities{nil, hooksCaps()} {
			in.Capabilities = c
			noInternalErrors(t, p.Evaluate(in))
			noInternalErrors(t, def.Evaluate(in))
		}
	})
}
