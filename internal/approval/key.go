package approval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// ActionKey identifies an action for approvals: the authenticated principal, the event's source,
// agent, session and type, the tool and its canonical input (JSON with sorted keys), the payload
// and typed body, and the approval rules. Event id, time and tool call id are left out, so a
// retry of the same action with a new event id has the same key; any other change of the action
// gives another key.
func ActionKey(principal string, ev *ahpv1.Event, ruleIDs []string) string {
	h := sha256.New()
	for _, s := range []string{principal, ev.GetSource(), agentOf(ev), ev.GetSession().GetId(), ev.GetType().String(), ev.GetTool().GetName()} {
		field(h, []byte(s))
	}
	field(h, canonicalStruct(ev.GetTool().GetInput()))
	field(h, canonicalValue(ev.GetPayload()))
	field(h, bodyBytes(ev))
	for _, r := range ruleIDs {
		field(h, []byte(r))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// field writes b length-prefixed, so that no two field lists give the same bytes.
func field(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

func canonicalStruct(s *structpb.Struct) []byte {
	if s == nil {
		return nil
	}
	b, _ := json.Marshal(s.AsMap()) // encoding/json sorts map keys
	return b
}

func canonicalValue(v *structpb.Value) []byte {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v.AsInterface())
	return b
}

// bodyBytes is the deterministic encoding of the event's typed or contract payload, if any.
func bodyBytes(ev *ahpv1.Event) []byte {
	m := ev.ProtoReflect()
	oo := m.Descriptor().Oneofs().ByName("body")
	if oo == nil {
		return nil
	}
	fd := m.WhichOneof(oo)
	if fd == nil {
		return nil
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m.Get(fd).Message().Interface())
	return b
}

func agentOf(ev *ahpv1.Event) string {
	if id := ev.GetHarness().GetAgentId(); id != "" {
		return id
	}
	return ev.GetSession().GetAgent().GetId()
}
