package hooks

import (
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/types/known/structpb"
)

// DiscoveryResult is the result of a "draft" hooks/capabilities response: {protocolVersion,
// manifest}. It never carries effects (discovery and interception cannot be combined).
type DiscoveryResult struct {
	// ProtocolVersion echoes the request's ("draft").
	ProtocolVersion string
	// Manifest is the capabilities manifest, validated by checkManifest, kept verbatim.
	Manifest *structpb.Struct
	// UnknownFields keeps other result members, verbatim.
	UnknownFields *structpb.Struct
}

// manifestMembers are the members a draft manifest requires; absence never means unlimited.
var manifestMembers = []struct {
	name string
	kind jsonKind
}{
	{"events", kindArray}, {"gaps", kindArray}, {"transports", kindArray}, {"authentication", kindArray},
	{"toolPaths", kindArray}, {"contentCategories", kindArray}, {"limits", kindObject},
	{"managedPolicy", kindObject}, {"correlationIdentityFields", kindArray},
}

func decodeDiscoveryResult(path string, v any) (*DiscoveryResult, error) {
	o, err := objectAt(path, v)
	if err != nil {
		return nil, err
	}
	r := &DiscoveryResult{}
	if r.ProtocolVersion, err = checkDraftVersion(o); err != nil {
		return nil, err
	}
	raw, err := o.required("manifest")
	if err != nil {
		return nil, err
	}
	if err := checkManifest(o.at("manifest"), raw); err != nil {
		return nil, err
	}
	if r.Manifest, err = o.requiredStruct("manifest"); err != nil {
		return nil, err
	}
	if r.UnknownFields, err = o.rest(); err != nil {
		return nil, err
	}
	return r, nil
}

// checkManifest validates a capabilities manifest: every required member with its kind, no
// identity block, each event entry {event (a catalogue name), modes ⊆ {intercept, observe},
// capabilities {effects}} with intercept only for interceptable events, gaps as {path, reason},
// and min/max timeouts that are ordered non-negative integers.
func checkManifest(path string, v any) error {
	o, err := objectAt(path, v)
	if err != nil {
		return err
	}
	for _, m := range manifestMembers {
		raw, ok := o.m[m.name]
		if !ok {
			return invalid(o.at(m.name), "required; absence never means unlimited")
		}
		if !hasKind(raw, m.kind) {
			return invalid(o.at(m.name), "must be %s", m.kind)
		}
	}
	if err := o.forbid("identity", "not allowed in a manifest"); err != nil {
		return err
	}
	for i, x := range o.m["events"].([]any) {
		e, err := objectAt(jsonwire.IndexPath(o.at("events"), i), x)
		if err != nil {
			return err
		}
		name, err := e.requiredString("event", true)
		if err != nil {
			return err
		}
		spec, known := catalogue[name]
		if !known {
			return invalid(e.at("event"), "not a draft catalogue event")
		}
		modes, err := e.requiredArray("modes", "must be an array of modes", "must not be empty")
		if err != nil {
			return err
		}
		for j, m := range modes {
			s, _ := m.(string)
			if s != "intercept" && s != "observe" {
				return invalid(jsonwire.IndexPath(e.at("modes"), j), "must be intercept or observe")
			}
			if s == "intercept" && !spec.interceptable {
				return invalid(jsonwire.IndexPath(e.at("modes"), j), "event cannot be intercepted")
			}
		}
		c, err := e.requiredObject("capabilities")
		if err != nil {
			return err
		}
		if _, err := c.requiredArray("effects", "must be an array of effect names", ""); err != nil {
			return err
		}
	}
	if _, err := decodeGaps(o.at("gaps"), o.m["gaps"]); err != nil {
		return err
	}
	limits := newObject(o.at("limits"), o.m["limits"].(map[string]any))
	var bounds [2]int64
	for i, key := range []string{"minTimeoutMs", "maxTimeoutMs"} {
		raw, ok := limits.m[key]
		if !ok {
			continue
		}
		n, ok := safeInteger(raw)
		if !ok || n < 0 {
			return invalid(limits.at(key), "must be a non-negative integer")
		}
		bounds[i] = n
	}
	if bounds[1] != 0 && bounds[0] > bounds[1] {
		return invalid(limits.at("minTimeoutMs"), "must not exceed maxTimeoutMs")
	}
	return nil
}

func (e encoder) discovery(r *DiscoveryResult) map[string]any {
	out := e.base(r.UnknownFields)
	out["protocolVersion"] = r.ProtocolVersion
	if r.Manifest != nil {
		out["manifest"] = e.object(r.Manifest)
	}
	return out
}
