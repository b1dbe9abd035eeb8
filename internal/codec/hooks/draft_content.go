package hooks

import (
	"strings"

	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// The draft content model (content-item.schema.json and the content-upload text): an item is
// either a canonical message {id, role, parts} or one flat part. A part has id, kind (text or
// attachment), mediaType and selection (body, metadata or omit):
//
//   - a text part has mediaType text/plain; body-selected it carries text (a string) or a gap;
//   - an attachment has a non-text, non-JSON mediaType; body-selected it carries body {ref, size?,
//     sha256?} or a gap, never text;
//   - metadata and omit parts carry neither text, body nor gap;
//   - sizes are non-negative integers and every sha256 exactly 64 lowercase hex characters.
//
// Parts inside a message carry no role and no parentItemId of their own.

// messageRoles are the canonical message roles.
var messageRoles = []string{"system", "developer", "user", "assistant", "tool"}

// itemRules narrows what a content list may hold at one place in a message.
type itemRules struct {
	messagesOnly bool   // every item must be a message (message lists, inject values)
	role         string // every message must have this role (user.message.inbound: user, ...)
}

// checkItems validates a content list.
func checkItems(path string, list []any, r itemRules) error {
	for i, x := range list {
		if err := checkItem(jsonwire.IndexPath(path, i), x, r); err != nil {
			return err
		}
	}
	return nil
}

func checkItem(path string, v any, r itemRules) error {
	o, err := objectAt(path, v)
	if err != nil {
		return err
	}
	if !o.has("parts") {
		if r.messagesOnly {
			return invalid(o.at("parts"), "required; this list holds messages {id, role, parts}")
		}
		if raw, ok := o.m["role"]; ok {
			if s, ok := raw.(string); !ok || !oneOf(s, messageRoles...) {
				return invalid(o.at("role"), "must be one of system, developer, user, assistant, tool")
			}
		}
		if raw, ok := o.m["parentItemId"]; ok {
			if s, ok := raw.(string); !ok || s == "" {
				return invalid(o.at("parentItemId"), "must be a non-empty item id")
			}
		}
		return checkPart(o)
	}
	if _, err := o.requiredString("id", true); err != nil {
		return err
	}
	role, err := o.requiredString("role", false)
	if err != nil {
		return err
	}
	if !oneOf(role, messageRoles...) {
		return invalid(o.at("role"), "must be one of system, developer, user, assistant, tool")
	}
	if r.role != "" && role != r.role {
		return invalid(o.at("role"), "must be %s here", r.role)
	}
	if _, err := o.optionalBool("synthesized"); err != nil {
		return err
	}
	parts, ok := o.m["parts"].([]any)
	if !ok {
		return invalid(o.at("parts"), "must be an array of parts")
	}
	for i, p := range parts {
		po, err := objectAt(jsonwire.IndexPath(o.at("parts"), i), p)
		if err != nil {
			return err
		}
		for _, key := range []string{"role", "parentItemId"} {
			if err := po.forbid(key, "not allowed on a part; the message carries it"); err != nil {
				return err
			}
		}
		if err := checkPart(po); err != nil {
			return err
		}
	}
	return nil
}

func checkPart(o *object) error {
	if _, err := o.requiredString("id", true); err != nil {
		return err
	}
	kind, err := o.requiredString("kind", false)
	if err != nil {
		return err
	}
	media, err := o.requiredString("mediaType", true)
	if err != nil {
		return err
	}
	switch kind {
	case "text":
		if base, _, _ := strings.Cut(media, ";"); strings.TrimSpace(base) != "text/plain" {
			return invalid(o.at("mediaType"), "must be text/plain for a text part")
		}
	case "attachment":
		if isTextOrJSON(media) {
			return invalid(o.at("mediaType"), "must not be a text or JSON media type for an attachment; use a text part")
		}
	default:
		return invalid(o.at("kind"), "must be text or attachment")
	}
	selection, err := o.requiredString("selection", false)
	if err != nil {
		return err
	}
	switch selection {
	case "body":
		hasGap := o.has("gap")
		if hasGap {
			if _, err := o.requiredObject("gap"); err != nil {
				return err
			}
		}
		if kind == "text" {
			if err := o.forbid("body", "not allowed on a text part; a text body is the text member"); err != nil {
				return err
			}
			if raw, ok := o.m["text"]; ok {
				if hasGap {
					return invalid(o.at("text"), "not allowed together with gap")
				}
				if _, ok := raw.(string); !ok {
					return invalid(o.at("text"), "must be a string")
				}
			} else if !hasGap {
				return invalid(o.at("text"), "required for a body-selected text part unless a gap says why it is missing")
			}
		} else {
			if err := o.forbid("text", "not allowed on an attachment; its bytes are uploaded and referenced by body.ref"); err != nil {
				return err
			}
			if o.has("body") {
				if hasGap {
					return invalid(o.at("body"), "not allowed together with gap")
				}
				if err := checkBodyRef(o); err != nil {
					return err
				}
			} else if !hasGap {
				return invalid(o.at("body"), "required for a body-selected attachment unless a gap says why it is missing")
			}
		}
	case "metadata", "omit":
		for _, key := range []string{"text", "body", "gap"} {
			if err := o.forbid(key, "not allowed when selection is %s", selection); err != nil {
				return err
			}
		}
	default:
		return invalid(o.at("selection"), "must be body, metadata or omit")
	}
	if err := checkSizeHash(o); err != nil {
		return err
	}
	if _, err := o.optionalBool("synthesized"); err != nil {
		return err
	}
	if raw, ok := o.m["category"]; ok {
		if s, ok := raw.(string); !ok || s == "" {
			return invalid(o.at("category"), "must be a non-empty string")
		}
	}
	return nil
}

// checkBodyRef validates body {ref, size?, sha256?}; nothing else may ride along.
func checkBodyRef(o *object) error {
	b, err := o.requiredObject("body")
	if err != nil {
		return err
	}
	if _, err := b.requiredString("ref", true); err != nil {
		return err
	}
	for k := range b.m {
		if k != "ref" && k != "size" && k != "sha256" {
			return invalid(b.at(k), "not allowed; body holds only ref, size and sha256")
		}
	}
	return checkSizeHash(b)
}

func checkSizeHash(o *object) error {
	if raw, ok := o.m["size"]; ok {
		if n, ok := safeInteger(raw); !ok || n < 0 {
			return invalid(o.at("size"), "must be a non-negative integer")
		}
	}
	if raw, ok := o.m["sha256"]; ok {
		if s, ok := raw.(string); !ok || !isSHA256(s) {
			return invalid(o.at("sha256"), "must be exactly 64 lowercase hexadecimal characters")
		}
	}
	return nil
}

// isSHA256 reports whether s is exactly 64 lowercase hexadecimal characters.
func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isTextOrJSON reports whether a media type is text/* or JSON (application/json, */*+json).
func isTextOrJSON(media string) bool {
	base, _, _ := strings.Cut(strings.ToLower(media), ";")
	base = strings.TrimSpace(base)
	return strings.HasPrefix(base, "text/") || base == "application/json" || strings.HasSuffix(base, "+json")
}
