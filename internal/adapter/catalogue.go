package adapter

import (
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Claude-style hook input fields that fill the Agent Hooks "draft" catalogue members of the
// events they map onto.
const (
	fieldPrompt           = "prompt"
	fieldLastAssistant    = "last_assistant_message"
	fieldTrigger          = "trigger"
	fieldMessage          = "message"
	fieldTitle            = "title"
	fieldNotificationType = "notification_type"
	fieldTurnID           = "turn_id"
	fieldSource           = "source"
)

// gapNoTurn is the gap of a turn the runtime does not identify: its hooks carry no turn id, and
// the adapter keeps no state to make one that a turn.start and its turn.finish.before would share.
var gapNoTurn = &ahpv1.Gap{Path: "turn", Reason: "the runtime's hook input names no turn"}

// draftCatalogue fills the typed draft members of a Claude-style input (Claude Code, Codex,
// Factory) for the draft catalogue event it maps onto, so one rule sees a draft harness and the
// runtime alike (event.catalogue.trigger, event.catalogue.items, payload.attention, …). Native
// fields stay in the payload under their own names (payload.prompt, payload.stop_hook_active, …),
// except Notification's message, title and notification_type, which become payload.attention
// {kind, message, title} as user.attention has them. A member the input cannot supply is a gap.
func draftCatalogue(canonical ahpv1.EventType, rest fieldMap) *ahpv1.Catalogue {
	switch canonical {
	case evTurnStart:
		c := &ahpv1.Catalogue{Trigger: "user"}
		turnOf(c, rest)
		if prompt, ok := rest[fieldPrompt].(string); ok {
			c.Items = messageList("prompt", "user", prompt)
		} else {
			c.Items = &structpb.ListValue{}
			c.Gaps = append(c.Gaps, &ahpv1.Gap{Path: "items", Reason: "the hook input has no prompt"})
		}
		return c
	case evTurnFinish:
		c := &ahpv1.Catalogue{Outcome: "completed"}
		turnOf(c, rest)
		c.Gaps = append(c.Gaps, &ahpv1.Gap{Path: "continuationCount", Reason: "the runtime reports only whether a stop hook already continued the turn"})
		if last, ok := rest[fieldLastAssistant].(string); ok {
			c.Items = messageList("last-assistant-message", "assistant", last)
		} else {
			c.Items = &structpb.ListValue{}
			c.Gaps = append(c.Gaps, &ahpv1.Gap{Path: "items", Reason: "the hook input carries no assistant message (the payload names the transcript file)"})
		}
		return c
	case evCompact:
		c := &ahpv1.Catalogue{Items: &structpb.ListValue{},
			Gaps: []*ahpv1.Gap{{Path: "items", Reason: "the hook input carries no messages (the payload names the transcript file)"}}}
		switch t, _ := rest[fieldTrigger].(string); t {
		case "manual", "auto":
			c.Trigger = t
		default:
			c.Gaps = append(c.Gaps, &ahpv1.Gap{Path: "trigger", Reason: "the hook input has no trigger of manual or auto"})
		}
		return c
	case ahpv1.EventType_EVENT_TYPE_SESSION_START:
		c := &ahpv1.Catalogue{Items: &structpb.ListValue{},
			Gaps: []*ahpv1.Gap{{Path: "items", Reason: "the hook input carries no messages"}}}
		switch t, _ := rest[fieldSource].(string); t {
		case "startup", "resume", "clear", "compact":
			c.Trigger = t
		default:
			c.Gaps = append(c.Gaps, &ahpv1.Gap{Path: "trigger", Reason: "the hook input has no source of startup, resume, clear or compact"})
		}
		return c
	case evAttention:
		kind := rest.take(fieldNotificationType)
		if kind == "" {
			kind = "notification"
		}
		rest["attention"] = map[string]any{"kind": kind, "message": rest.take(fieldMessage), "title": rest.take(fieldTitle)}
		return nil
	}
	return nil
}

// turnOf sets the turn the input names (Codex's turn_id, which stays in the payload too), or
// records that it names none.
func turnOf(c *ahpv1.Catalogue, rest fieldMap) {
	if id, ok := rest[fieldTurnID].(string); ok && id != "" {
		c.Turn = &ahpv1.TurnRef{Id: id}
		return
	}
	c.Gaps = append(c.Gaps, gapNoTurn)
}

// messageList is a list of one canonical message holding one body-selected text part.
func messageList(id, role, text string) *structpb.ListValue {
	msg := structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"id":   structpb.NewStringValue(id),
		"role": structpb.NewStringValue(role),
		"parts": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"id":        structpb.NewStringValue(id + "-text"),
			"kind":      structpb.NewStringValue("text"),
			"mediaType": structpb.NewStringValue("text/plain"),
			"selection": structpb.NewStringValue("body"),
			"text":      structpb.NewStringValue(text),
		}})}}),
	}})
	return &structpb.ListValue{Values: []*structpb.Value{msg}}
}

// injectedText is the text of an inject effect's canonical messages: every text part, in order,
// one paragraph each. Attachments cannot travel in a hook's additionalContext and are left out.
func injectedText(l *structpb.ListValue) []string {
	var out []string
	for _, m := range l.GetValues() {
		for _, p := range m.GetStructValue().GetFields()["parts"].GetListValue().GetValues() {
			f := p.GetStructValue().GetFields()
			if f["kind"].GetStringValue() == "text" {
				if t := f["text"].GetStringValue(); t != "" {
					out = append(out, t)
				}
			}
		}
	}
	return out
}
