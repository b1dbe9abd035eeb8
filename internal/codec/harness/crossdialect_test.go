package harness_test

import (
	"bytes"
	"encoding/json"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// canonicalCore drops what legitimately differs between dialects — where the event came from and
// the fields only one dialect has — and keeps what the policy sees: type, session, tool.
func canonicalCore(ev *ahpv1.Event) *ahpv1.Event {
	out := proto.Clone(ev).(*ahpv1.Event)
	out.Origin = nil
	out.Harness = nil
	out.Payload = nil
	out.Source = ""
	out.Time = ""
	out.Extensions = nil
	out.UnknownFields = nil
	return out
}

func TestPreActionAndToolBeforeGiveTheSameCanonicalEvent(t *testing.T) {
	t.Parallel()
	harness, err := harness.DecodeEvent("params", jsonValue(t, `{
		"event_type": "pre_action", "session_id": "sess-1", "agent_id": "agent-1",
		"timestamp": "2026-05-01T00:00:00Z", "depth": 0,
		"payload": {"action_type": "tool_call", "tool_name": "Bash", "arguments": {"command": "git push --force"}}
	}`), "evt-1")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := hooks.DecodeEvent("params.event", jsonValue(t, `{
		"id": "evt-1", "source": "urn:uuid:5b7de29e-a9e0-41a8-bf26-d94b05f0656d", "type": "tool.before",
		"time": "2026-08-24T08:51:14Z",
		"session": {"id": "sess-1", "agent": {"id": "agent-1"}},
		"tool": {"callId": "`+harness.GetTool().GetCallId()+`", "name": "Bash", "kind": "shell", "input": {"command": "git push --force"}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if harness.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE || hooks.GetType() != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE {
		t.Fatalf("types: harness %v, hooks %v", harness.GetType(), hooks.GetType())
	}
	if diff := cmp.Diff(canonicalCore(hooks), canonicalCore(harness), protocmp.Transform()); diff != "" {
		t.Fatalf("canonical events differ (-hooks +harness):\n%s", diff)
	}
	// Each still remembers where it came from.
	if harness.GetOrigin().GetDialect() != ahpv1.Dialect_DIALECT_HARNESS || hooks.GetOrigin().GetDialect() != ahpv1.Dialect_DIALECT_HOOKS {
		t.Fatalf("origins: %v / %v", harness.GetOrigin(), hooks.GetOrigin())
	}
}

func TestToolKindTable(t *testing.T) {
	t.Parallel()
	cases := map[string]ahpv1.ToolKind{
		"Bash": ahpv1.ToolKind_TOOL_KIND_SHELL, "bash": ahpv1.ToolKind_TOOL_KIND_SHELL, "shell": ahpv1.ToolKind_TOOL_KIND_SHELL,
		"Read": ahpv1.ToolKind_TOOL_KIND_FILE_READ, "read_file": ahpv1.ToolKind_TOOL_KIND_FILE_READ,
		"Write": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE, "write_file": ahpv1.ToolKind_TOOL_KIND_FILE_WRITE,
		"Edit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT, "MultiEdit": ahpv1.ToolKind_TOOL_KIND_FILE_EDIT,
		"Grep": ahpv1.ToolKind_TOOL_KIND_SEARCH, "Glob": ahpv1.ToolKind_TOOL_KIND_SEARCH,
		"WebFetch": ahpv1.ToolKind_TOOL_KIND_FETCH, "WebSearch": ahpv1.ToolKind_TOOL_KIND_FETCH,
		"Task":                      ahpv1.ToolKind_TOOL_KIND_TASK,
		"mcp__github__create_issue": ahpv1.ToolKind_TOOL_KIND_MCP,
		"mcp__broken":               ahpv1.ToolKind_TOOL_KIND_OTHER,
		"frobnicate":                ahpv1.ToolKind_TOOL_KIND_OTHER,
	}
	for name, want := range cases {
		if got := names.ToolKindFor(name); got != want {
			t.Errorf("ToolKindFor(%q) = %v, want %v", name, got, want)
		}
	}
	if s, tool, ok := names.SplitMCPToolName("mcp__github__create_issue"); !ok || s != "github" || tool != "create_issue" {
		t.Errorf("SplitMCPToolName = %q %q %v", s, tool, ok)
	}
}

func TestEventNamesComeFromTheSchema(t *testing.T) {
	t.Parallel()
	for i := range ahpv1.EventType(0).Descriptor().Values().Len() {
		et := ahpv1.EventType(ahpv1.EventType(0).Descriptor().Values().Get(i).Number())
		name := names.EventTypeName(et)
		if et == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED {
			if name != "" {
				t.Errorf("unspecified has name %q", name)
			}
			continue
		}
		back, ok := names.ParseEventType(name)
		if name == "" || !ok || back != et {
			t.Errorf("%v: name %q round-trips to %v (%v)", et, name, back, ok)
		}
	}
	if n, _ := names.ParseEventType("tool.before"); n != ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE {
		t.Error("tool.before")
	}
	if k, ok := names.ParseToolKind("file_read"); !ok || k != ahpv1.ToolKind_TOOL_KIND_FILE_READ || names.ToolKindName(k) != "file_read" {
		t.Error("file_read")
	}
	if _, ok := names.ParseToolKind("FILE_READ"); ok {
		t.Error("upper-case wire names must be rejected")
	}
}

// TestEffectKindOfCoversEveryEffect fails when an effect is added to the schema without a kind.
func TestEffectKindOfCoversEveryEffect(t *testing.T) {
	t.Parallel()
	oneof := (&ahpv1.Effect{}).ProtoReflect().Descriptor().Oneofs().ByName("effect")
	for i := range oneof.Fields().Len() {
		fd := oneof.Fields().Get(i)
		e := &ahpv1.Effect{}
		m := e.ProtoReflect()
		m.Set(fd, m.NewField(fd))
		if got := names.EffectKindName(names.EffectKindOf(e)); got != string(fd.Name()) {
			t.Errorf("effect %s: kind %q", fd.Name(), got)
		}
	}
	if names.EffectKindOf(&ahpv1.Effect{}) != ahpv1.EffectKind_EFFECT_KIND_UNSPECIFIED {
		t.Error("an empty effect has a kind")
	}
}
