package names_test

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

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
	if _, ok := names.ParseToolKind("ſhell"); ok {
		t.Error(`"ſhell" must not name shell (strings.ToUpper maps ſ to S)`)
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

// TestEnumValuesCarryTheirPrefix holds every ahp.v1 enum to the naming convention the wire names
// rely on: each value starts with the enum's UPPER_SNAKE name, so EnumWireName and ParseEnumWire
// are inverses.
func TestEnumValuesCarryTheirPrefix(t *testing.T) {
	t.Parallel()
	n := 0
	protoregistry.GlobalTypes.RangeEnums(func(et protoreflect.EnumType) bool {
		d := et.Descriptor()
		if d.ParentFile().Package() != "ahp.v1" {
			return true
		}
		for i := range d.Values().Len() {
			vd := d.Values().Get(i)
			if vd.Number() == 0 {
				continue
			}
			n++
			name := names.EnumWireName(et.New(vd.Number()))
			if back, ok := names.ParseEnumWire(d, name); !ok || back != vd.Number() {
				t.Errorf("%s: wire name %q parses back to %v, %v", vd.FullName(), name, back, ok)
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no ahp.v1 enums registered")
	}
}
