package hooks

import (
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
)

// envName is the tokenEnv pattern of registration.schema.json.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// literalCredentials are the members that would put a secret into a registration document.
var literalCredentials = []string{"token", "bearerToken", "value"}

var failurePolicies = map[string]ahpv1.FailurePolicy{
	"fail-open":   ahpv1.FailurePolicy_FAILURE_POLICY_FAIL_OPEN,
	"fail-closed": ahpv1.FailurePolicy_FAILURE_POLICY_FAIL_CLOSED,
}

// DecodeRegistration parses and validates a portable Agent Hooks Protocol v0.1 registration
// document (registration.schema.json) plus the rules the schema cannot say:
//
//   - protocolVersion is "0.1" and hooks has at least one backend;
//   - backend ids are reverse-DNS names, unique in the document;
//   - transport is stdio {command, args?, lifecycle persistent|per_event, cwd?} or http {url} with
//     an http or https URL that names a host;
//   - authentication appears only with http, is bearer with tokenEnv naming an environment
//     variable, and never holds a literal credential (token, bearerToken, value);
//   - intercept subscriptions subscribe exactly ["tool.before"] and need timeoutMs >= 1 and
//     failurePolicy fail-open|fail-closed; observe subscriptions take any of the five v0.1 events,
//     each once, and must not carry timeoutMs or failurePolicy;
//   - a backend subscribes to each event at most once per mode.
//
// Members the schema does not model have no place in HooksRegistration and are dropped.
func DecodeRegistration(data []byte) (*ahpv1.HooksRegistration, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	return decodeRegistration(v, V01)
}

func decodeRegistration(v any, version Version) (*ahpv1.HooksRegistration, error) {
	o, err := objectAt("", v)
	if err != nil {
		return nil, err
	}
	r := &ahpv1.HooksRegistration{}
	check := checkVersion
	if version == Draft {
		check = checkDraftVersion
	}
	if r.ProtocolVersion, err = check(o); err != nil {
		return nil, err
	}
	list, err := o.requiredArray("hooks", "must be an array of backends", "must contain at least one backend")
	if err != nil {
		return nil, err
	}
	firstByID := map[string]int{}
	for i, e := range list {
		path := jsonwire.IndexPath("hooks", i)
		b, err := decodeBackend(path, e, version)
		if err != nil {
			return nil, err
		}
		if j, dup := firstByID[b.Id]; dup {
			return nil, invalid(jsonwire.JoinPath(path, "id"), "duplicate backend id; already used by %s", jsonwire.IndexPath("hooks", j))
		}
		firstByID[b.Id] = i
		r.Hooks = append(r.Hooks, b)
	}
	return r, nil
}

func decodeBackend(path string, v any, version Version) (*ahpv1.HookBackend, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	b := &ahpv1.HookBackend{}
	if b.Id, err = o.requiredString("id", true); err != nil {
		return nil, err
	}
	if !isReverseDNS(b.Id) {
		return nil, invalid(o.at("id"), "must be a reverse-DNS name (e.g. com.example.policy)")
	}
	transport, err := o.requiredObject("transport")
	if err != nil {
		return nil, err
	}
	if err := decodeTransport(transport, b); err != nil {
		return nil, err
	}
	auth, err := o.optionalObject("authentication")
	if err != nil {
		return nil, err
	}
	if auth != nil {
		if b.Authentication, err = decodeAuthentication(auth); err != nil {
			return nil, err
		}
		if b.GetHttp() == nil {
			return nil, invalid(o.at("authentication"), "allowed only with an http transport")
		}
	}

	list, err := o.requiredArray("subscriptions", "must be an array of subscriptions", "must contain at least one subscription")
	if err != nil {
		return nil, err
	}
	type eventMode struct {
		event string
		mode  ahpv1.SubscriptionMode
	}
	subscribedBy := map[eventMode]int{}
	for i, e := range list {
		spath := jsonwire.IndexPath(o.at("subscriptions"), i)
		s, err := decodeSubscription(spath, e, version)
		if err != nil {
			return nil, err
		}
		for k, ev := range s.Events {
			key := eventMode{ev, s.Mode}
			if j, dup := subscribedBy[key]; dup {
				return nil, invalid(jsonwire.IndexPath(jsonwire.JoinPath(spath, "events"), k),
					"event already subscribed in this mode by %s; a backend is configured at most once per event and mode",
					jsonwire.IndexPath(o.at("subscriptions"), j))
			}
			subscribedBy[key] = i
		}
		b.Subscriptions = append(b.Subscriptions, s)
	}
	return b, nil
}

func decodeTransport(o *object, b *ahpv1.HookBackend) error {
	kind, err := o.requiredString("type", false)
	if err != nil {
		return err
	}
	switch kind {
	case "stdio":
		t := &ahpv1.HookStdioTransport{}
		if t.Command, err = o.requiredString("command", true); err != nil {
			return err
		}
		if t.Args, err = o.optionalStrings("args"); err != nil {
			return err
		}
		lifecycle, err := o.requiredString("lifecycle", false)
		if err != nil {
			return err
		}
		n, ok := names.ParseEnumWire(ahpv1.HookLifecycle(0).Descriptor(), lifecycle)
		if !ok {
			return invalid(o.at("lifecycle"), "unknown lifecycle; expected persistent or per_event")
		}
		t.Lifecycle = ahpv1.HookLifecycle(n)
		if t.Cwd, err = o.optionalString("cwd"); err != nil {
			return err
		}
		b.Transport = &ahpv1.HookBackend_Stdio{Stdio: t}
	case "http":
		t := &ahpv1.HookHttpTransport{}
		if t.Url, err = o.requiredString("url", false); err != nil {
			return err
		}
		if !isHTTPURL(t.Url) {
			return invalid(o.at("url"), "must be an absolute http or https URL with a host")
		}
		b.Transport = &ahpv1.HookBackend_Http{Http: t}
	default:
		return invalid(o.at("type"), "unknown transport type; expected stdio or http")
	}
	return nil
}

// isHTTPURL checks the schema's uri format and ^https?:// pattern, and that a host is named.
func isHTTPURL(s string) bool {
	if !jsonwire.IsURI(s) || !(strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != ""
}

func decodeAuthentication(o *object) (*ahpv1.HookAuthentication, error) {
	// Checked first: a secret in the document is the problem to report, whatever else is wrong.
	for _, key := range literalCredentials {
		if o.has(key) {
			return nil, invalid(o.at(key), "literal credentials are not allowed; name an environment variable in tokenEnv")
		}
	}
	a := &ahpv1.HookAuthentication{}
	var err error
	if a.Type, err = o.requiredString("type", false); err != nil {
		return nil, err
	}
	if a.Type != "bearer" {
		return nil, invalid(o.at("type"), "unsupported authentication type; v0.1 supports only bearer")
	}
	if a.TokenEnv, err = o.requiredString("tokenEnv", false); err != nil {
		return nil, err
	}
	if !envName.MatchString(a.TokenEnv) {
		return nil, invalid(o.at("tokenEnv"), "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
	}
	return a, nil
}

func decodeSubscription(path string, v any, version Version) (*ahpv1.HookSubscription, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	s := &ahpv1.HookSubscription{}
	mode, err := o.requiredString("mode", false)
	if err != nil {
		return nil, err
	}
	n, ok := names.ParseEnumWire(ahpv1.SubscriptionMode(0).Descriptor(), mode)
	if !ok {
		return nil, invalid(o.at("mode"), "unknown mode; expected intercept or observe")
	}
	s.Mode = ahpv1.SubscriptionMode(n)
	decodeEvents := decodeSubscribedEvents
	if version == Draft {
		decodeEvents = decodeDraftSubscribedEvents
	}
	if s.Events, err = decodeEvents(o, s.Mode); err != nil {
		return nil, err
	}

	if s.Mode == ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_INTERCEPT {
		raw, err := o.required("timeoutMs")
		if err != nil {
			return nil, err
		}
		ms, ok := safeInteger(raw)
		if !ok || ms < 1 || ms > math.MaxUint32 {
			return nil, invalid(o.at("timeoutMs"), "must be a positive integer number of milliseconds")
		}
		timeout := uint32(ms)
		s.TimeoutMs = &timeout
		policy, err := o.requiredString("failurePolicy", false)
		if err != nil {
			return nil, err
		}
		if s.FailurePolicy, ok = failurePolicies[policy]; !ok {
			return nil, invalid(o.at("failurePolicy"), "unknown failure policy; expected fail-open or fail-closed")
		}
	} else {
		for _, key := range []string{"timeoutMs", "failurePolicy"} {
			if err := o.forbid(key, "allowed only on intercept subscriptions"); err != nil {
				return nil, err
			}
		}
	}
	if s.IncludeNative, err = o.optionalBool("includeNative"); err != nil {
		return nil, err
	}
	if version == Draft {
		if err := decodeDraftSubscription(o, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func decodeSubscribedEvents(o *object, mode ahpv1.SubscriptionMode) ([]string, error) {
	list, err := o.requiredArray("events", "must be an array of event names", "must contain at least one event")
	if err != nil {
		return nil, err
	}
	intercept := mode == ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_INTERCEPT
	if intercept && len(list) != 1 {
		return nil, invalid(o.at("events"), "intercept subscriptions take exactly one event, tool.before")
	}
	events := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		p := jsonwire.IndexPath(o.at("events"), i)
		name, ok := e.(string)
		switch {
		case !ok:
			return nil, invalid(p, "must be a string")
		case intercept && name != "tool.before":
			return nil, invalid(p, "only tool.before can be intercepted in v0.1")
		case eventTypes[name] == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED:
			return nil, invalid(p, "unknown event; expected one of %s", eventTypeList)
		case seen[name]:
			return nil, invalid(p, "duplicate event")
		}
		seen[name] = true
		events = append(events, name)
	}
	return events, nil
}

// EncodeRegistration writes a registration document as compact JSON. It is checked with the
// rules of DecodeRegistration first, so an invalid registration is refused, not written.
func EncodeRegistration(r *ahpv1.HooksRegistration) ([]byte, error) {
	v := encodeRegistration(r)
	if _, err := decodeRegistration(v, V01); err != nil {
		return nil, encodeError("registration", err)
	}
	return jsonwire.Marshal(v)
}

func encodeRegistration(r *ahpv1.HooksRegistration) map[string]any {
	hooks := make([]any, 0, len(r.GetHooks()))
	for _, b := range r.GetHooks() {
		m := map[string]any{"id": b.GetId()}
		switch t := b.GetTransport().(type) {
		case *ahpv1.HookBackend_Stdio:
			tm := map[string]any{
				"type":      "stdio",
				"command":   t.Stdio.GetCommand(),
				"lifecycle": names.EnumWireName(t.Stdio.GetLifecycle()),
			}
			if args := t.Stdio.GetArgs(); len(args) > 0 {
				list := make([]any, len(args))
				for i, a := range args {
					list[i] = a
				}
				tm["args"] = list
			}
			putString(tm, "cwd", t.Stdio.GetCwd())
			m["transport"] = tm
		case *ahpv1.HookBackend_Http:
			m["transport"] = map[string]any{"type": "http", "url": t.Http.GetUrl()}
		}
		if a := b.GetAuthentication(); a != nil {
			m["authentication"] = map[string]any{"type": a.GetType(), "tokenEnv": a.GetTokenEnv()}
		}
		subs := make([]any, 0, len(b.GetSubscriptions()))
		for _, s := range b.GetSubscriptions() {
			events := make([]any, len(s.GetEvents()))
			for i, e := range s.GetEvents() {
				events[i] = e
			}
			sm := map[string]any{"events": events, "mode": names.EnumWireName(s.GetMode())}
			if s.TimeoutMs != nil {
				sm["timeoutMs"] = json.Number(strconv.FormatUint(uint64(s.GetTimeoutMs()), 10))
			}
			for name, p := range failurePolicies {
				if p == s.GetFailurePolicy() {
					sm["failurePolicy"] = name
				}
			}
			if s.IncludeNative != nil {
				sm["includeNative"] = s.GetIncludeNative()
			}
			encodeDraftSubscription(sm, s)
			subs = append(subs, sm)
		}
		m["subscriptions"] = subs
		hooks = append(hooks, m)
	}
	return map[string]any{"protocolVersion": r.GetProtocolVersion(), "hooks": hooks}
}
