package policy_test

import (
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/types/known/structpb"
)

const draftEffectsPolicy = `version: 1
name: draft
rules:
  - id: note
    on: [turn.start]
    effect:
      message: {text: checked}
  - id: stop-long-turns
    on: [turn.finish.before]
    when: 'payload.continuationCount >= 3.0'
    effect:
      flow: {stop: {reason: too many continuations}}
  - id: keep-going
    on: [turn.finish.before]
    when: 'payload.continuationCount < 3.0'
    effect:
      flow: {continue: {instruction: run the tests}}
  - id: cached
    on: [model.request.before]
    when: 'event.catalogue.model.provider == "example" && event.catalogue.attempt.number == 1.0'
    effect:
      return: {value: [{id: m1, role: assistant, parts: [{id: p1, kind: text, mediaType: text/plain, selection: body, text: cached}]}]}
  - id: remind
    on: [turn.start]
    when: 'event.catalogue.trigger == "user"'
    effect:
      inject: {deliver_at: next_turn, text: Remember the style guide.}
  - id: rewrite-prompt
    on: [turn.start]
    effect:
      modify: {target: prompt, operation: merge, value: [{id: m2, role: user, parts: [{id: p2, kind: text, mediaType: text/plain, selection: body, text: Be brief.}]}]}
  - id: no-secret-tasks
    on: [task.change.before]
    when: 'payload.task.id.startsWith("secret")'
    effect:
      deny: {reason: secret tasks are not allowed}
`

func draftEvent(t *testing.T, typ ahpv1.EventType, payload map[string]any, c *ahpv1.Catalogue) policy.Input {
	t.Helper()
	p, err := structpb.NewValue(payload)
	if err != nil {
		t.Fatal(err)
	}
	name := names.EventTypeName(typ)
	return policy.Input{
		Event: &ahpv1.Event{Id: "e1", Source: "urn:test:h", Type: typ, Payload: p, Catalogue: c,
			Origin: &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HOOKS, ProtocolVersion: "draft", EventType: name}},
		Session: &policy.SessionView{},
		Now:     testNow,
	}
}

func kindsOf(effects []*ahpv1.Effect) string {
	var out []string
	for _, e := range effects {
		out = append(out, names.EffectKindName(names.EffectKindOf(e)))
	}
	return strings.Join(out, ",")
}

// TestDraftEffectForms evaluates rules on draft events whose CEL reads payload and
// event.catalogue, and whose effects are the draft forms.
func TestDraftEffectForms(t *testing.T) {
	t.Parallel()
	p := mustParse(t, draftEffectsPolicy)
	all := &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_MODIFY,
		ahpv1.EffectKind_EFFECT_KIND_MESSAGE, ahpv1.EffectKind_EFFECT_KIND_RETURN, ahpv1.EffectKind_EFFECT_KIND_FLOW, ahpv1.EffectKind_EFFECT_KIND_INJECT}}

	in := draftEvent(t, ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, map[string]any{"continuationCount": 4}, &ahpv1.Catalogue{})
	in.Capabilities = all
	if r := p.Evaluate(in); kindsOf(r.Effects) != "flow" || r.Effects[0].GetFlow().GetOperation() != "stop" {
		t.Errorf("turn.finish.before at 4: %v", r.Effects)
	}
	in = draftEvent(t, ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE, map[string]any{"continuationCount": 1}, &ahpv1.Catalogue{})
	in.Capabilities = all
	if r := p.Evaluate(in); kindsOf(r.Effects) != "flow" || r.Effects[0].GetFlow().GetInstruction() != "run the tests" {
		t.Errorf("turn.finish.before at 1: %v", r.Effects)
	}

	in = draftEvent(t, ahpv1.EventType_EVENT_TYPE_MODEL_REQUEST_BEFORE, map[string]any{}, &ahpv1.Catalogue{Model: &ahpv1.ModelRef{Id: "m", Provider: "example"}, Attempt: &ahpv1.Attempt{Id: "a", Number: 1}})
	in.Capabilities = all
	if r := p.Evaluate(in); kindsOf(r.Effects) != "return" || r.Effects[0].GetReturn().GetValue().GetListValue() == nil {
		t.Errorf("model.request.before: %v", r.Effects)
	}

	in = draftEvent(t, ahpv1.EventType_EVENT_TYPE_TURN_START, map[string]any{}, &ahpv1.Catalogue{Trigger: "user"})
	in.Capabilities = all
	r := p.Evaluate(in)
	if kindsOf(r.Effects) != "message,inject,modify" {
		t.Fatalf("turn.start: %s", kindsOf(r.Effects))
	}
	if m := r.Effects[2].GetModify(); m.GetTarget() != ahpv1.ModifyTarget_MODIFY_TARGET_PROMPT || m.GetOperation() != ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE {
		t.Errorf("modify = %v", m)
	}
	if in := r.Effects[1].GetInject(); in.GetDeliverAt() != "next_turn" || len(in.GetValue().GetValues()) != 1 {
		t.Errorf("inject = %v", in)
	}

	// A caller that cannot express them: inject dropped and recorded, modify falls back to deny.
	in.Capabilities = &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY}}
	r = p.Evaluate(in)
	if kindsOf(r.Effects) != "deny" || r.Effects[0].GetDeny().GetCode() != policy.CodeFallback || len(r.Fallbacks) != 3 {
		t.Errorf("deny-only caller: %s, %d fallbacks", kindsOf(r.Effects), len(r.Fallbacks))
	}

	in = draftEvent(t, ahpv1.EventType_EVENT_TYPE_TASK_CHANGE_BEFORE, map[string]any{"task": map[string]any{"id": "secret-1"}}, &ahpv1.Catalogue{})
	in.Capabilities = all
	if r := p.Evaluate(in); kindsOf(r.Effects) != "deny" {
		t.Errorf("task.change.before: %s", kindsOf(r.Effects))
	}
}

// TestDraftTargetModifyStaysWithDraftCallers: a Harness caller advertises modify for its payload
// only, so a modify of a draft target falls back for it.
func TestDraftTargetModifyStaysWithDraftCallers(t *testing.T) {
	t.Parallel()
	p := mustParse(t, draftEffectsPolicy)
	in := draftEvent(t, ahpv1.EventType_EVENT_TYPE_TURN_START, map[string]any{}, &ahpv1.Catalogue{})
	in.Event.Origin = &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HARNESS, ProtocolVersion: "2.4"}
	in.Capabilities = &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_MODIFY, ahpv1.EffectKind_EFFECT_KIND_MESSAGE}}
	r := p.Evaluate(in)
	if kindsOf(r.Effects) != "message,deny" {
		t.Errorf("harness caller: %s", kindsOf(r.Effects))
	}
}

// TestDraftEffectFormErrors checks the load errors of the new forms.
func TestDraftEffectFormErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ effect, want string }{
		{`flow: {}`, "give exactly one of stop, continue"},
		{`flow: {stop: {}}`, "reason is required"},
		{`inject: {deliver_at: later, text: x}`, "want now or next_turn"},
		{`inject: {}`, "give exactly one of text, value"},
		{`return: {}`, "value is required"},
		{`modify: {target: nowhere, value: 1}`, "unknown target"},
		{`modify: {target: prompt, operation: append, value: []}`, "want replace or merge"},
		{`modify: {target: prompt, merge: {a: 1}}`, "with target \"prompt\" give value"},
	} {
		src := "version: 1\nrules:\n  - id: r\n    on: [turn.start]\n    effect:\n      " + tc.effect + "\n"
		if got := parseErr(t, src); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.effect, got, tc.want)
		}
	}
}
