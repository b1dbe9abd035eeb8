package hooks_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
)

// parseText decodes JSON the way the codec expects its input: numbers as json.Number.
func parseText(t testing.TB, s string) any {
	t.Helper()
	v, err := jsonwire.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// eventWith is a valid tool.before event with one member replaced (or removed when value is
// nil).
func eventWith(t testing.TB, key string, value any) map[string]any {
	t.Helper()
	ev := parseText(t, `{"id":"e1","source":"urn:example:host","type":"tool.before",
		"time":"2026-09-01T10:00:00Z","session":{"id":"s1"},
		"tool":{"callId":"c1","name":"Bash","kind":"shell","input":{"command":"ls"}}}`).(map[string]any)
	if value == nil {
		delete(ev, key)
	} else {
		ev[key] = value
	}
	return ev
}

// validityCase is a field value and whether the codec accepts it.
type validityCase struct {
	value string
	valid bool
}

// checkEventField decodes the sample event with field set to each value: valid values are
// accepted, the others rejected at event.<field> with invalid params.
func checkEventField(t *testing.T, field string, tests []validityCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			_, err := hooks.DecodeEvent("event", eventWith(t, field, tt.value))
			if tt.valid && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !tt.valid {
				wantError(t, err, "event."+field, hooks.CodeInvalidParams)
			}
		})
	}
}

func TestDecodeEventTime(t *testing.T) {
	t.Parallel()
	checkEventField(t, "time", []validityCase{
		{"2026-09-01T10:00:00Z", true},
		{"2026-09-01T10:00:00.123456789Z", true},
		{"2026-09-01T10:00:00+05:30", true},
		{"2026-09-01T10:00:00-00:00", true},
		{"2026-09-01t10:00:00z", true},
		{"2024-02-29T00:00:00Z", true},
		{"2026-12-31T23:59:60Z", true},
		{"20260901T100000Z", false},
		{"2026-09-01 10:00:00Z", false},
		{"2026-09-01T10:00:00", false},
		{"2026-09-01T10:00Z", false},
		{"2026-09-01T10:00:00+0530", false},
		{"2026-09-01T10:00:00+24:00", false},
		{"2026-09-01T24:00:00Z", false},
		{"2026-09-01T10:60:00Z", false},
		{"2026-09-01T10:00:61Z", false},
		{"2023-02-29T10:00:00Z", false},
		{"2026-04-31T10:00:00Z", false},
		{"2026-13-01T10:00:00Z", false},
		{"2026-00-01T10:00:00Z", false},
		{"2026-09-01T10:00:00.Z", false},
		{"2026-9-01T10:00:00Z", false},
		{"2026-09-01T10:00:00ZZ", false},
		{"", false},
	})
}

func TestDecodeEventSource(t *testing.T) {
	t.Parallel()
	checkEventField(t, "source", []validityCase{
		{"https://harness.example/runtime/42", true},
		{"urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d", true},
		{"vscode-ext+local:agent?x=1#frag", true},
		{"https://h.example/a%20b", true},
		{"", false},
		{"harness-42", false},
		{"://no-scheme", false},
		{"1https://h.example/", false},
		{"https://h.example/a b", false},
		{"https://h.example/%zz", false},
		{"https://h.example/%2", false},
		{"https://h.example/#a#b", false},
		{"https://h.example/ü", false},
		{"https://h.example/\n", false},
	})
}

func TestDecodeEventToolKinds(t *testing.T) {
	t.Parallel()
	kinds := map[string]ahpv1.ToolKind{
		"shell": ahpv1.ToolKind_TOOL_KIND_SHELL, "file_read": ahpv1.ToolKind_TOOL_KIND_FILE_READ,
		"file_write": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, "file_edit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
		"search": ahpv1.ToolKind_TOOL_KIND_SEARCH, "fetch": ahpv1.ToolKind_TOOL_KIND_FETCH,
		"task": ahpv1.ToolKind_TOOL_KIND_TASK, "mcp": ahpv1.ToolKind_TOOL_KIND_MCP,
		"other": ahpv1.ToolKind_TOOL_KIND_OTHER,
	}
	for name, want := range kinds {
		tool := map[string]any{"callId": "c", "name": "n", "kind": name, "input": map[string]any{}}
		ev, err := hooks.DecodeEvent("event", eventWith(t, "tool", tool))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ev.GetTool().GetKind() != want {
			t.Errorf("%s: kind = %v, want %v", name, ev.GetTool().GetKind(), want)
		}
	}
	for _, name := range []string{"Shell", "SHELL", "bash", "unspecified", ""} {
		tool := map[string]any{"callId": "c", "name": "n", "kind": name, "input": map[string]any{}}
		_, err := hooks.DecodeEvent("event", eventWith(t, "tool", tool))
		wantError(t, err, "event.tool.kind", hooks.CodeInvalidParams)
	}
}

func TestDecodeEventUnsupportedType(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"turn.start", "model.request.before", "pre_action", "Tool.Before"} {
		_, err := hooks.DecodeEvent("params.event", eventWith(t, "type", typ))
		wantError(t, err, "params.event.type", hooks.CodeUnsupportedEvent)
		if !errors.Is(err, hooks.ErrUnsupportedEvent) {
			t.Errorf("%s: error does not match ErrUnsupportedEvent", typ)
		}
	}
	// A missing or non-string type is an invalid event, not an unsupported one.
	_, err := hooks.DecodeEvent("params.event", eventWith(t, "type", json.Number("1")))
	wantError(t, err, "params.event.type", hooks.CodeInvalidParams)
	_, err = hooks.DecodeEvent("params.event", eventWith(t, "type", nil))
	wantError(t, err, "params.event.type", hooks.CodeInvalidParams)
}

// TestDecodeEventCanonical checks where the members of the richest test event land.
func TestDecodeEventCanonical(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testdataDir, "message", "intercept-full.valid.json"))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := hooks.DecodeMessage(data)
	if err != nil {
		t.Fatal(err)
	}
	p := msg.Intercept
	ev := p.Request.GetEvent()
	checks := []struct {
		name      string
		got, want any
	}{
		{"method", msg.Method, hooks.MethodIntercept},
		{"type", ev.GetType(), ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE},
		{"origin.dialect", ev.GetOrigin().GetDialect(), ahpv1.Dialect_DIALECT_HOOKS},
		{"origin.protocol_version", ev.GetOrigin().GetProtocolVersion(), "0.1"},
		{"origin.event_type", ev.GetOrigin().GetEventType(), "tool.before"},
		{"time kept as sent", ev.GetTime(), "2026-09-01T10:00:00.123456+02:00"},
		{"session.agent.id", ev.GetSession().GetAgent().GetId(), "agent-7"},
		{"session.agent.type", ev.GetSession().GetAgent().GetType(), "coder"},
		{"session.model", ev.GetSession().GetModel(), "example-model-2"},
		{"session.workspace_roots", len(ev.GetSession().GetWorkspaceRoots()), 2},
		{"tool.kind", ev.GetTool().GetKind(), ahpv1.ToolKind_TOOL_KIND_MCP},
		{"tool.mcp.server", ev.GetTool().GetMcp().GetServer(), "tickets"},
		{"tool.mcp.tool", ev.GetTool().GetMcp().GetTool(), "create"},
		{"tool.mcp unknown", ev.GetTool().GetMcp().GetUnknownFields().GetFields()["transport"].GetStringValue(), "stdio"},
		{"tool unknown", ev.GetTool().GetUnknownFields().GetFields()["x-tool-note"].GetStringValue(), "kept"},
		{"agent unknown", ev.GetSession().GetAgent().GetUnknownFields().GetFields()["x-agent-note"].GetStringValue(), "kept"},
		{"session unknown", len(ev.GetSession().GetUnknownFields().GetFields()), 1},
		{"native.event_name", ev.GetNative().GetEventName(), "PreToolUse"},
		{"native unknown", len(ev.GetNative().GetUnknownFields().GetFields()), 1},
		{"event unknown", ev.GetUnknownFields().GetFields()["x-event-note"].GetStringValue(), "kept verbatim"},
		{"event extensions", len(ev.GetExtensions().GetFields()), 2},
		{"capabilities.effects", len(p.Request.GetCapabilities().GetEffects()), 1},
		{"capabilities.extension_effects[0]", p.Request.GetCapabilities().GetExtensionEffects()[0], "com.example.effects.redact"},
		{"capabilities unknown", len(p.CapabilitiesUnknownFields.GetFields()), 1},
		{"params extensions", len(p.Extensions.GetFields()), 1},
		{"params state", p.State.GetStructValue().GetFields()["permission"].GetStringValue(), "none"},
		{"params unknown", len(p.UnknownFields.GetFields()), 1},
		{"envelope unknown", msg.UnknownFields.GetFields()["x-envelope-note"].GetStringValue(), "kept"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestDecodeEventZeroValues checks that members holding a typed field's zero value keep their
// presence through the unknown fields, while the typed field reads as empty.
func TestDecodeEventZeroValues(t *testing.T) {
	t.Parallel()
	session := parseText(t, `{"id":"s1","cwd":"","workspaceRoots":[],"model":""}`)
	ev, err := hooks.DecodeEvent("event", eventWith(t, "session", session))
	if err != nil {
		t.Fatal(err)
	}
	s := ev.GetSession()
	if s.GetCwd() != "" || len(s.GetWorkspaceRoots()) != 0 || s.GetModel() != "" {
		t.Errorf("typed fields not empty: %v", s)
	}
	for _, key := range []string{"cwd", "workspaceRoots", "model"} {
		if _, ok := s.GetUnknownFields().GetFields()[key]; !ok {
			t.Errorf("%s: presence lost", key)
		}
	}
	out := hooks.EncodeEvent(ev)["session"].(map[string]any)
	if len(out) != 4 {
		t.Errorf("encoded session = %v, want all four members back", out)
	}
}

// TestEncodeEventTypedFieldsWin checks that a typed field overrides a stale unknown member of
// the same name, so code that edits the proto is not undone by the unknown fields.
func TestEncodeEventTypedFieldsWin(t *testing.T) {
	t.Parallel()
	ev, err := hooks.DecodeEvent("event", eventWith(t, "session",
		parseText(t, `{"id":"s1","cwd":""}`)))
	if err != nil {
		t.Fatal(err)
	}
	ev.Session.Cwd = "/changed"
	if got := hooks.EncodeEvent(ev)["session"].(map[string]any)["cwd"]; got != "/changed" {
		t.Errorf("cwd = %v, want /changed", got)
	}
}

func TestCapabilitiesCodec(t *testing.T) {
	t.Parallel()
	caps, err := hooks.DecodeCapabilities("capabilities", parseText(t, `{"effects":["deny","com.x.y"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(caps.GetEffects()) != 1 || caps.GetEffects()[0] != ahpv1.EffectKind_EFFECT_KIND_DENY ||
		len(caps.GetExtensionEffects()) != 1 || caps.GetExtensionEffects()[0] != "com.x.y" {
		t.Fatalf("capabilities = %v", caps)
	}
	out, _ := json.Marshal(hooks.EncodeCapabilities(caps))
	if string(out) != `{"effects":["deny","com.x.y"]}` {
		t.Errorf("encoded = %s", out)
	}
	for _, tt := range []struct{ in, path string }{
		{`{"effects":"deny"}`, "c.effects"},
		{`{"effects":[]}`, "c.effects"},
		{`{"effects":["deny",1]}`, "c.effects[1]"},
		{`{"effects":["com.x.y","com.x.y"]}`, "c.effects[1]"},
		{`{"effects":["ask"]}`, "c.effects[0]"},
		{`{}`, "c.effects"},
		{`[]`, "c"},
	} {
		_, err := hooks.DecodeCapabilities("c", parseText(t, tt.in))
		wantError(t, err, tt.path, hooks.CodeInvalidParams)
	}
}

// Identifiers longer than the schema allows are refused, naming the member; at the limit they
// are accepted.
func TestOverlongIdentifiersAreRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 257) // counted in characters, not bytes
	for _, c := range []struct{ member, path string }{
		{"id", "event.id"},
		{"session", "event.session.id"},
		{"tool", "event.tool.name"},
	} {
		ev := eventWith(t, "type", "tool.before")
		switch c.member {
		case "id":
			ev["id"] = long
		case "session":
			ev["session"].(map[string]any)["id"] = long
		case "tool":
			ev["tool"].(map[string]any)["name"] = long
		}
		_, err := hooks.DecodeEvent("event", ev)
		wantError(t, err, c.path, hooks.CodeInvalidParams)
		if err != nil && !strings.Contains(err.Error(), "must be at most 256 characters") {
			t.Errorf("%s: error %q does not give the limit", c.path, err)
		}
	}
	ev := eventWith(t, "id", long[:2*256])
	if _, err := hooks.DecodeEvent("event", ev); err != nil {
		t.Errorf("an id of 256 characters: %v", err)
	}
}
