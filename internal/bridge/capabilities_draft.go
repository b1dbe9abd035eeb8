package bridge

import (
	"slices"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/names"
)

// The "draft" answer to hooks/capabilities is a full manifest, built from the running
// configuration and the upstream's capabilities; discovery starts no session and decides nothing
// (it only asks HarnessService.GetCapabilities, which has no side effects):
//
//   - events: every catalogue event the upstream serves, with intercept for the interceptable ones
//     it decides and observe for those it records; an intercept entry lists the effects the draft
//     allows there (RenderDraftResult can express each of them; the policy decides which it uses);
//   - gaps: none (the bridge withholds no event member); transports: the draft bindings this
//     process serves (stdio, http); authentication: bearer when the listener demands credentials;
//   - toolPaths native and mcp; contentCategories text; maxUploadBytes the upload binding's item
//     limit (0 when it is not served);
//   - limits: minTimeoutMs is the bridge's own upstream deadline (a shorter harness timeout would
//     cut off answers the bridge still waits for), maxTimeoutMs the longest deadline it accepts;
//   - managedPolicy: the gateway's policy is operator-managed and cannot be disabled by a caller;
//   - correlationIdentityFields: the members the gateway correlates events by.

// draftTransports are the bindings the draft defines; WebSocket and Unix sockets are this
// bridge's own and are not listed.
var draftTransports = []string{"stdio", "http"}

func (b *Bridge) draftManifest(caps *ahpv1.GetCapabilitiesResponse) map[string]any {
	events := []any{}
	for _, name := range hooks.CatalogueEvents {
		t, ok := names.ParseEventType(name)
		if !ok {
			continue
		}
		modes := []any{}
		effects := []any{}
		if hooks.IsInterceptable(name) && slices.Contains(caps.GetInterceptableEventTypes(), t) {
			modes = append(modes, "intercept")
			for _, e := range hooks.AllowedEffects(name) {
				effects = append(effects, e)
			}
		}
		if slices.Contains(caps.GetObservableEventTypes(), t) {
			modes = append(modes, "observe")
		}
		if len(modes) == 0 {
			continue
		}
		events = append(events, map[string]any{"event": name, "modes": modes, "capabilities": map[string]any{"effects": effects}})
	}
	transports := []any{}
	for _, t := range b.cfg.HooksTransports {
		if slices.Contains(draftTransports, t) {
			transports = append(transports, t)
		}
	}
	authentication := []any{}
	if b.cfg.HooksAuthentication {
		authentication = append(authentication, "bearer")
	}
	return map[string]any{
		"events":            events,
		"gaps":              []any{},
		"transports":        transports,
		"authentication":    authentication,
		"toolPaths":         []any{"native", "mcp"},
		"contentCategories": []any{"text"},
		"limits": map[string]any{
			"maxUploadBytes": b.cfg.UploadMaxBytes,
			"minTimeoutMs":   b.cfg.Timeout.Milliseconds(),
			"maxTimeoutMs":   MaxTimeout.Milliseconds(),
		},
		"managedPolicy":             map[string]any{"scopes": []any{"managed"}, "disableable": false},
		"correlationIdentityFields": []any{"id", "source", "parentEventId", "session.id", "turn.id", "call.id"},
	}
}
