package harness_test

import (
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/codec/hooks"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonwire.Parse([]byte(s))
	if err != nil {
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
