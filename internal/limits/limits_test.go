package limits_test

import (
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/limits"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The schema's max_len rules are the package's numbers, field by field.
func TestSchemaMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg   proto.Message
		field protoreflect.Name
		want  int
	}{
		{&ahpv1.Event{}, "id", limits.ID},
		{&ahpv1.Event{}, "source", limits.Source},
		{&ahpv1.Event{}, "time", limits.Time},
		{&ahpv1.Origin{}, "protocol_version", limits.Version},
		{&ahpv1.Origin{}, "event_type", limits.Kind},
		{&ahpv1.Origin{}, "provider", limits.Kind},
		{&ahpv1.Session{}, "id", limits.ID},
		{&ahpv1.Session{}, "cwd", limits.Path},
		{&ahpv1.Session{}, "workspace_roots", limits.Path},
		{&ahpv1.Session{}, "model", limits.Name},
		{&ahpv1.Agent{}, "id", limits.ID},
		{&ahpv1.Agent{}, "type", limits.Name},
		{&ahpv1.Tool{}, "call_id", limits.CallID},
		{&ahpv1.Tool{}, "name", limits.Name},
		{&ahpv1.ToolError{}, "category", limits.Kind},
		{&ahpv1.McpTool{}, "server", limits.Name},
		{&ahpv1.McpTool{}, "tool", limits.Name},
		{&ahpv1.Native{}, "provider", limits.Kind},
		{&ahpv1.Native{}, "event_name", limits.Name},
		{&ahpv1.HarnessEnvelope{}, "agent_id", limits.ID},
		{&ahpv1.WatchRequest{}, "session_id", limits.ID},
		{&ahpv1.HandshakeRequest{}, "session_id", limits.ID},
		{&ahpv1.HandshakeRequest{}, "agent_id", limits.ID},
		{&ahpv1.QueryRequest{}, "session_id", limits.ID},
		{&ahpv1.QueryRequest{}, "agent_id", limits.ID},
		{&ahpv1.QueryRequest{}, "source", limits.Source},
	}
	for _, c := range cases {
		md := c.msg.ProtoReflect().Descriptor()
		fd := md.Fields().ByName(c.field)
		if fd == nil {
			t.Fatalf("%s has no field %s", md.FullName(), c.field)
		}
		rules, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
		str := rules.GetString()
		if fd.IsList() {
			str = rules.GetRepeated().GetItems().GetString()
		}
		if got := str.GetMaxLen(); got != uint64(c.want) {
			t.Errorf("%s.%s: max_len %d in the schema, %d in package limits", md.FullName(), c.field, got, c.want)
		}
	}
}

func TestExceedsCountsCharacters(t *testing.T) {
	t.Parallel()
	if limits.Exceeds(strings.Repeat("é", 4), 4) {
		t.Error("four two-byte characters exceed four characters")
	}
	if !limits.Exceeds(strings.Repeat("x", 5), 4) {
		t.Error("five characters do not exceed four")
	}
}
