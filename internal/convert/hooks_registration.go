package convert

import (
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// hooksEnvName is the tokenEnv pattern of registration.schema.json.
var hooksEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// hooksLiteralCredentials are the members that would put a secret into a registration document.
var hooksLiteralCredentials = []string{"token", "bearerToken", "value"}

var hooksFailurePolicies = map[string]ahpv1.FailurePolicy{
	"fail-open":   ahpv1.FailurePolicy_FAILURE_POLICY_FAIL_OPEN,
	"fail-closed": ahpv1.FailurePolicy_FAILURE_POLICY_FAIL_CLOSED,
}

// DecodeHooksRegistration parses and validates a portable Agent Hooks Protocol v0.1 registration
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
func DecodeHooksRegistration(data []byte) (*ahpv1.HooksRegistration, error) {
	v, err := hooksParseJSON(data)
	if err != nil {
		return nil, err
	}
	return hooksDecodeRegistration(v)
}

func hooksDecodeRegistration(v any) (*ahpv1.HooksRegistration, error) {
	o, err := hooksObjectAt("", v)
	if err != nil {
		return nil, err
	}
	r := &ahpv1.HooksRegistration{}
	if r.ProtocolVersion, err = hooksCheckVersion(o); err != nil {
		return nil, err
	}
	raw, err := o.required("hooks")
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, hooksInvalid("hooks", "must be an array of backends")
	}
	if len(list) == 0 {
		return nil, hooksInvalid("hooks", "must contain at least one backend")
	}
	firstByID := map[string]int{}
	for i, e := range list {
		path := indexPath("hooks", i)
		b, err := hooksDecodeBackend(path, e)
		if err != nil {
			return nil, err
		}
		if j, dup := firstByID[b.Id]; dup {
			return nil, hooksInvalid(joinPath(path, "id"), "duplicate backend id; already used by %s", indexPath("hooks", j))
		}
		firstByID[b.Id] = i
		r.Hooks = append(r.Hooks, b)
	}
	return r, nil
}

func hooksDecodeBackend(path string, v any) (*ahpv1.HookBackend, error) {
	o, err := hooksObjectAt(path, v)
	if err != nil {
		return nil, err
	}
	b := &ahpv1.HookBackend{}
	if b.Id, err = o.requiredString("id", true); err != nil {
		return nil, err
	}
	if !hooksIsReverseDNS(b.Id) {
		return nil, hooksInvalid(o.at("id"), "must be a reverse-DNS name (e.g. com.example.policy)")
	}
	transport, err := o.requiredObject("transport")
	if err != nil {
		return nil, err
	}
	if err := hooksDecodeTransport(transport, b); err != nil {
		return nil, err
	}
	auth, err := o.optionalObject("authentication")
	if err != nil {
		return nil, err
	}
	if auth != nil {
		if b.Authentication, err = hooksDecodeAuthentication(auth); err != nil {
			return nil, err
		}
		if b.GetHttp() == nil {
			return nil, hooksInvalid(o.at("authentication"), "allowed only with an http transport")
		}
	}

	raw, err := o.required("subscriptions")
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, hooksInvalid(o.at("subscriptions"), "must be an array of subscriptions")
	}
	if len(list) == 0 {
		return nil, hooksInvalid(o.at("subscriptions"), "must contain at least one subscription")
	}
	type eventMode struct {
		event string
		mode  ahpv1.SubscriptionMode
	}
	subscribedBy := map[eventMode]int{}
	for i, e := range list {
		spath := indexPath(o.at("subscriptions"), i)
		s, err := hooksDecodeSubscription(spath, e)
		if err != nil {
			return nil, err
		}
		for k, ev := range s.Events {
			key := eventMode{ev, s.Mode}
			if j, dup := subscribedBy[key]; dup {
				return nil, hooksInvalid(indexPath(joinPath(spath, "events"), k),
					"event already subscribed in this mode by %s; a backend is configured at most once per event and mode",
					indexPath(o.at("subscriptions"), j))
			}
			subscribedBy[key] = i
		}
		b.Subscriptions = append(b.Subscriptions, s)
	}
	return b, nil
}

func hooksDecodeTransport(o *hooksObject, b *ahpv1.HookBackend) error {
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
		n, ok := parseEnumWire(ahpv1.HookLifecycle(0).Descriptor(), lifecycle)
		if !ok {
			return hooksInvalid(o.at("lifecycle"), "unknown lifecycle; expected persistent or per_event")
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
		if !hooksIsHTTPURL(t.Url) {
			return hooksInvalid(o.at("url"), "must be an absolute http or https URL with a host")
		}
		b.Transport = &ahpv1.HookBackend_Http{Http: t}
	default:
		return hooksInvalid(o.at("type"), "unknown transport type; expected stdio or http")
	}
	return nil
}

// hooksIsHTTPURL checks the schema's uri format and ^https?:// pattern, and that a host is named.
func hooksIsHTTPURL(s string) bool {
	if !hooksIsURI(s) || !(strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != ""
}

func hooksDecodeAuthentication(o *hooksObject) (*ahpv1.HookAuthentication, error) {
	// Checked first: a secret in the document is the problem to report, whatever else is wrong.
	for _, key := range hooksLiteralCredentials {
		if o.has(key) {
			return nil, hooksInvalid(o.at(key), "literal credentials are not allowed; name an environment variable in tokenEnv")
		}
	}
	a := &ahpv1.HookAuthentication{}
	var err error
	if a.Type, err = o.requiredString("type", false); err != nil {
		return nil, err
	}
	if a.Type != "bearer" {
		return nil, hooksInvalid(o.at("type"), "unsupported authentication type; v0.1 supports only bearer")
	}
	if a.TokenEnv, err = o.requiredString("tokenEnv", false); err != nil {
		return nil, err
	}
	if !hooksEnvName.MatchString(a.TokenEnv) {
		return nil, hooksInvalid(o.at("tokenEnv"), "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
	}
	return a, nil
}

func hooksDecodeSubscription(path string, v any) (*ahpv1.HookSubscription, error) {
	o, err := hooksObjectAt(path, v)
	if err != nil {
		return nil, err
	}
	s := &ahpv1.HookSubscription{}
	mode, err := o.requiredString("mode", false)
	if err != nil {
		return nil, err
	}
	n, ok := parseEnumWire(ahpv1.SubscriptionMode(0).Descriptor(), mode)
	if !ok {
		return nil, hooksInvalid(o.at("mode"), "unknown mode; expected intercept or observe")
	}
	s.Mode = ahpv1.SubscriptionMode(n)
	if s.Events, err = hooksDecodeSubscribedEvents(o, s.Mode); err != nil {
		return nil, err
	}

	if s.Mode == ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_INTERCEPT {
		raw, err := o.required("timeoutMs")
		if err != nil {
			return nil, err
		}
		ms, ok := hooksInteger(raw)
		if !ok || ms < 1 || ms > math.MaxUint32 {
			return nil, hooksInvalid(o.at("timeoutMs"), "must be a positive integer number of milliseconds")
		}
		timeout := uint32(ms)
		s.TimeoutMs = &timeout
		policy, err := o.requiredString("failurePolicy", false)
		if err != nil {
			return nil, err
		}
		if s.FailurePolicy, ok = hooksFailurePolicies[policy]; !ok {
			return nil, hooksInvalid(o.at("failurePolicy"), "unknown failure policy; expected fail-open or fail-closed")
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
	return s, nil
}

func hooksDecodeSubscribedEvents(o *hooksObject, mode ahpv1.SubscriptionMode) ([]string, error) {
	raw, err := o.required("events")
	if err != nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, hooksInvalid(o.at("events"), "must be an array of event names")
	}
	if len(list) == 0 {
		return nil, hooksInvalid(o.at("events"), "must contain at least one event")
	}
	intercept := mode == ahpv1.SubscriptionMode_SUBSCRIPTION_MODE_INTERCEPT
	if intercept && len(list) != 1 {
		return nil, hooksInvalid(o.at("events"), "intercept subscriptions take exactly one event, tool.before")
	}
	events := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		p := indexPath(o.at("events"), i)
		name, ok := e.(string)
		switch {
		case !ok:
			return nil, hooksInvalid(p, "must be a string")
		case intercept && name != "tool.before":
			return nil, hooksInvalid(p, "only tool.before can be intercepted in v0.1")
		case hooksEventTypes[name] == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED:
			return nil, hooksInvalid(p, "unknown event; expected one of %s", hooksEventTypeList)
		case seen[name]:
			return nil, hooksInvalid(p, "duplicate event")
		}
		seen[name] = true
		events = append(events, name)
	}
	return events, nil
}

// EncodeHooksRegistration writes a registration document as compact JSON. It is checked with the
// rules of DecodeHooksRegistration first, so an invalid registration is refused, not written.
func EncodeHooksRegistration(r *ahpv1.HooksRegistration) ([]byte, error) {
	v := hooksEncodeRegistration(r)
	if _, err := hooksDecodeRegistration(v); err != nil {
		return nil, hooksEncodeError("registration", err)
	}
	return marshalJSON(v)
}

func hooksEncodeRegistration(r *ahpv1.HooksRegistration) map[string]any {
	hooks := make([]any, 0, len(r.GetHooks()))
	for _, b := range r.GetHooks() {
		m := map[string]any{"id": b.GetId()}
		switch t := b.GetTransport().(type) {
		case *ahpv1.HookBackend_Stdio:
			tm := map[string]any{
				"type":      "stdio",
				"command":   t.Stdio.GetCommand(),
				"lifecycle": enumWireName(t.Stdio.GetLifecycle()),
			}
			if args := t.Stdio.GetArgs(); len(args) > 0 {
				list := make([]any, len(args))
				for i, a := range args {
					list[i] = a
				}
				tm["args"] = list
			}
			hooksPutString(tm, "cwd", t.Stdio.GetCwd())
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
			sm := map[string]any{"events": events, "mode": enumWireName(s.GetMode())}
			if s.TimeoutMs != nil {
				sm["timeoutMs"] = json.Number(strconv.FormatUint(uint64(s.GetTimeoutMs()), 10))
			}
			for name, p := range hooksFailurePolicies {
				if p == s.GetFailurePolicy() {
					sm["failurePolicy"] = name
				}
			}
			if s.IncludeNative != nil {
				sm["includeNative"] = s.GetIncludeNative()
			}
			subs = append(subs, sm)
		}
		m["subscriptions"] = subs
		hooks = append(hooks, m)
	}
	return map[string]any{"protocolVersion": r.GetProtocolVersion(), "hooks": hooks}
}
