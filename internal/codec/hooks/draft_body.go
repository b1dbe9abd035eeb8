package hooks

import (
	"strings"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// checkBody validates the event-specific bodies of the draft catalogue (the payload members
// that stay verbatim in Event.payload): task and workspace changes, config changes, user
// messages, elicitations, hook failures, attention, file changes and compaction summaries.
func checkBody(o *object, typeName string) error {
	switch typeName {
	case "task.change.before", "task.change.after":
		t, err := objectAt(o.at("task"), o.m["task"])
		if err != nil {
			return err
		}
		if _, err := t.requiredString("id", true); err != nil {
			return err
		}
		if err := enumMember(t, "operation", "create", "update", "remove"); err != nil {
			return err
		}
		if _, err := t.requiredObject("change"); err != nil {
			return err
		}
	case "workspace.change.before", "workspace.change.after":
		w, err := objectAt(o.at("workspace"), o.m["workspace"])
		if err != nil {
			return err
		}
		if err := enumMember(w, "kind", "cwd", "roots", "switch"); err != nil {
			return err
		}
		if _, err := w.required("change"); err != nil {
			return err
		}
	case "config.change.before", "config.change.after":
		c, err := objectAt(o.at("change"), o.m["change"])
		if err != nil {
			return err
		}
		for _, key := range []string{"source", "scope", "settings", "summary"} {
			if _, err := c.required(key); err != nil {
				return err
			}
		}
	case "user.message.inbound", "user.message.outbound":
		m, err := objectAt(o.at("message"), o.m["message"])
		if err != nil {
			return err
		}
		if _, err := m.requiredString("channel", true); err != nil {
			return err
		}
		role := "assistant"
		if typeName == "user.message.inbound" {
			role = "user"
			if _, err := m.requiredString("sender", true); err != nil {
				return err
			}
		}
		list, err := m.requiredArray("messages", "must be an array of messages", "")
		if err != nil {
			return err
		}
		return checkItems(m.at("messages"), list, itemRules{messagesOnly: true, role: role})
	case "user.elicitation.request", "user.elicitation.result":
		e, err := objectAt(o.at("elicitation"), o.m["elicitation"])
		if err != nil {
			return err
		}
		if _, err := e.requiredString("server", true); err != nil {
			return err
		}
		if err := enumMember(e, "mode", "form", "url"); err != nil {
			return err
		}
		if typeName == "user.elicitation.result" {
			if err := enumMember(e, "action", "accept", "decline", "cancel"); err != nil {
				return err
			}
			if raw, ok := e.m["result"]; ok {
				return checkItem(e.at("result"), raw, itemRules{})
			}
		}
	case "hook.failure":
		f, err := objectAt(o.at("failure"), o.m["failure"])
		if err != nil {
			return err
		}
		for _, key := range []string{"backendId", "reason", "policy"} {
			if _, err := f.requiredString(key, true); err != nil {
				return err
			}
		}
	case "user.attention":
		a, err := objectAt(o.at("attention"), o.m["attention"])
		if err != nil {
			return err
		}
		if _, err := a.requiredString("kind", true); err != nil {
			return err
		}
		if _, err := a.required("message"); err != nil {
			return err
		}
		for _, key := range []string{"message", "title"} {
			if list, ok := a.m[key].([]any); ok {
				if err := checkItems(a.at(key), list, itemRules{}); err != nil {
					return err
				}
			}
		}
	case "file.changed":
		list := o.m["changes"].([]any) // kind checked by the catalogue
		for i, x := range list {
			c, err := objectAt(jsonwire.IndexPath(o.at("changes"), i), x)
			if err != nil {
				return err
			}
			if _, err := c.requiredString("path", true); err != nil {
				return err
			}
			if _, err := c.requiredString("operation", true); err != nil {
				return err
			}
			raw, err := c.required("agentCaused")
			if err != nil {
				return err
			}
			if _, ok := raw.(bool); !ok {
				return invalid(c.at("agentCaused"), "must be a boolean")
			}
		}
	case "context.compact.after":
		if list, ok := o.m["summary"].([]any); ok {
			return checkItems(o.at("summary"), list, itemRules{})
		}
	}
	return nil
}

// enumMember reads a required string member that must be one of set.
func enumMember(o *object, key string, set ...string) error {
	s, err := o.requiredString(key, false)
	if err != nil {
		return err
	}
	if !oneOf(s, set...) {
		return invalid(o.at(key), "must be one of %s", strings.Join(set, ", "))
	}
	return nil
}
