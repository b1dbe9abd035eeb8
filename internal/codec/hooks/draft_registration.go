package hooks

import (
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// DecodeDraftRegistration parses and validates a portable Agent Hooks Protocol "draft"
// registration document: v0.1's rules (DecodeRegistration) with protocolVersion "draft", plus
//
//   - events are catalogue names, whole families ("tool.*") or "*"; intercept subscriptions name
//     only interceptable events (a family or "*" selects its interceptable members);
//   - every subscription has content {default, <category>: body|metadata|omit};
//   - filters {toolKinds, paths} and upload are objects, kept as written;
//   - no subscription identifier is carried.
func DecodeDraftRegistration(data []byte) (*ahpv1.HooksRegistration, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	return decodeRegistration(v, Draft)
}

// EncodeDraftRegistration writes a draft registration document as compact JSON, checked with
// DecodeDraftRegistration's rules first.
func EncodeDraftRegistration(r *ahpv1.HooksRegistration) ([]byte, error) {
	v := encodeRegistration(r)
	if _, err := decodeRegistration(v, Draft); err != nil {
		return nil, encodeError("registration", err)
	}
	return jsonwire.Marshal(v)
}

func decodeDraftSubscribedEvents(o *object, mode ahpv1.SubscriptionMode) ([]string, error) {
	list, err := o.requiredArray("events", "must be an array of event names", "must contain at least one event")
	if err != nil {
		return nil, err
	}
	intercept := mode == ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_INTERCEPT
	events := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		p := jsonwire.IndexPath(o.at("events"), i)
		name, ok := e.(string)
		switch {
		case !ok:
			return nil, invalid(p, "must be a string")
		case seen[name]:
			return nil, invalid(p, "duplicate event")
		case name == "*":
		case strings.HasSuffix(name, ".*"):
			if !familyExists(strings.TrimSuffix(name, "*"), intercept) {
				return nil, invalid(p, "no catalogue event in this family can be subscribed in this mode")
			}
		case catalogue[name].typ == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED:
			return nil, invalid(p, "unknown event; not in the draft catalogue")
		case intercept && !catalogue[name].interceptable:
			return nil, invalid(p, "event cannot be intercepted; subscribe it in observe mode")
		}
		seen[name] = true
		events = append(events, name)
	}
	return events, nil
}

// familyExists reports whether a family prefix ("tool.") holds a catalogue event, an
// interceptable one when intercept is set.
func familyExists(prefix string, intercept bool) bool {
	for _, name := range CatalogueEvents {
		if strings.HasPrefix(name, prefix) && (!intercept || catalogue[name].interceptable) {
			return true
		}
	}
	return false
}

var contentSelections = []string{"body", "metadata", "omit"}

func decodeDraftSubscription(o *object, s *ahpv1.HookSubscription) error {
	c, err := o.requiredObject("content")
	if err != nil {
		return err
	}
	if _, ok := c.m["default"]; !ok {
		return invalid(c.at("default"), "required; the selection for categories not named")
	}
	s.Content = map[string]string{}
	for _, k := range jsonwire.SortedKeys(c.m) {
		v, ok := c.m[k].(string)
		if !ok || !oneOf(v, contentSelections...) {
			return invalid(c.at(k), "must be body, metadata or omit")
		}
		s.Content[k] = v
	}
	if o.has("filters") {
		if s.Filters, err = o.requiredStruct("filters"); err != nil {
			return err
		}
	}
	if o.has("upload") {
		if s.Upload, err = o.requiredStruct("upload"); err != nil {
			return err
		}
	}
	return o.forbid("subscriptionId", "not allowed; the draft carries no subscription identifier")
}

func encodeDraftSubscription(sm map[string]any, s *ahpv1.HookSubscription) {
	if len(s.GetContent()) > 0 {
		c := make(map[string]any, len(s.GetContent()))
		for k, v := range s.GetContent() {
			c[k] = v
		}
		sm["content"] = c
	}
	if s.GetFilters() != nil {
		sm["filters"] = jsonwire.FromStruct(s.GetFilters())
	}
	if s.GetUpload() != nil {
		sm["upload"] = jsonwire.FromStruct(s.GetUpload())
	}
}
