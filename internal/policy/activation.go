package policy

import (
	"math"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/convert"
)

// activation supplies the CEL variables of one evaluation. Each variable is built from the proto
// on first use and cached, so a policy whose rules only look at `input` never pays for `session`
// or `payload`. Values are CEL values (ref.Val) all the way down: no protojson round trip, and
// JSON-shaped proto fields (tool input, extensions) are wrapped, not copied.
//
// An activation belongs to one Evaluate call and is not shared between goroutines.
type activation struct {
	in      *Input
	adapter types.Adapter
	now     time.Time

	event, tool, input, session, payload ref.Val
}

var _ interpreter.Activation = (*activation)(nil)

func newActivation(in *Input, adapter types.Adapter) *activation {
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &activation{in: in, adapter: adapter, now: now}
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case varEvent:
		if a.event == nil {
			a.event = a.buildEvent()
		}
		return a.event, true
	case varTool:
		return a.toolVal(), true
	case varInput:
		if a.input == nil {
			a.input = a.structVal(a.in.Event.GetTool().GetInput())
		}
		return a.input, true
	case varSession:
		if a.session == nil {
			a.session = a.buildSession()
		}
		return a.session, true
	case varPayload:
		return a.payloadVal(), true
	case varNow:
		return types.Timestamp{Time: a.now}, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// inputOverride rebinds `input` for modify expressions, which see the input as changed by earlier
// rules while `tool.input` and `event.tool.input` keep what the agent sent.
type inputOverride struct {
	parent *activation
	input  ref.Val
}

func (o *inputOverride) ResolveName(name string) (any, bool) {
	if name == varInput {
		return o.input, true
	}
	return o.parent.ResolveName(name)
}

func (o *inputOverride) Parent() interpreter.Activation { return nil }

// object builds a CEL map from string keys to CEL values.
func (a *activation) object(m map[string]ref.Val) ref.Val {
	return types.NewMap(a.adapter, m)
}

// structVal wraps a JSON object; absent objects read as an empty map so `has(x.y)` works.
func (a *activation) structVal(s *structpb.Struct) ref.Val {
	if s == nil {
		return a.object(nil)
	}
	return types.NewJSONStruct(a.adapter, s)
}

// jsonVal converts any JSON value; absent reads as null.
func (a *activation) jsonVal(v *structpb.Value) ref.Val {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return types.Double(k.NumberValue)
	case *structpb.Value_StringValue:
		return types.String(k.StringValue)
	case *structpb.Value_BoolValue:
		return types.Bool(k.BoolValue)
	case *structpb.Value_StructValue:
		return a.structVal(k.StructValue)
	case *structpb.Value_ListValue:
		if k.ListValue == nil {
			return types.NewRefValList(a.adapter, nil)
		}
		return types.NewJSONList(a.adapter, k.ListValue)
	default:
		return types.NullValue
	}
}

func (a *activation) toolVal() ref.Val {
	if a.tool == nil {
		t := a.in.Event.GetTool()
		e := t.GetError()
		a.tool = a.object(map[string]ref.Val{
			"call_id": types.String(t.GetCallId()),
			"name":    types.String(t.GetName()),
			"kind":    types.String(convert.ToolKindName(t.GetKind())),
			"input":   a.structVal(t.GetInput()),
			"output":  a.jsonVal(t.GetOutput()),
			"error": a.object(map[string]ref.Val{
				"message":  types.String(e.GetMessage()),
				"code":     a.jsonVal(e.GetCode()),
				"category": types.String(e.GetCategory()),
			}),
			"mcp": a.object(map[string]ref.Val{
				"server": types.String(t.GetMcp().GetServer()),
				"tool":   types.String(t.GetMcp().GetTool()),
			}),
		})
	}
	return a.tool
}

func (a *activation) payloadVal() ref.Val {
	if a.payload == nil {
		a.payload = a.buildPayload()
	}
	return a.payload
}

func (a *activation) buildEvent() ref.Val {
	ev := a.in.Event
	s := ev.GetSession()
	h := ev.GetHarness()
	o := ev.GetOrigin()
	harness := map[string]ref.Val{
		"agent_id": types.String(h.GetAgentId()),
		"depth":    types.Int(h.GetDepth()),
		"context":  a.object(nil),
		"metadata": a.structVal(h.GetMetadata()),
	}
	if c := h.GetContext(); c != nil {
		harness["context"] = messageVal(a.adapter, c.ProtoReflect())
	}
	native := ev.GetNative()
	return a.object(map[string]ref.Val{
		"id":     types.String(ev.GetId()),
		"source": types.String(ev.GetSource()),
		"type":   types.String(convert.EventTypeName(ev.GetType())),
		"time":   types.String(ev.GetTime()),
		"session": a.object(map[string]ref.Val{
			"id":              types.String(s.GetId()),
			"cwd":             types.String(s.GetCwd()),
			"workspace_roots": types.NewStringList(a.adapter, s.GetWorkspaceRoots()),
			"model":           types.String(s.GetModel()),
			"agent": a.object(map[string]ref.Val{
				"id":   types.String(s.GetAgent().GetId()),
				"type": types.String(s.GetAgent().GetType()),
			}),
		}),
		"tool":        a.toolVal(),
		"extensions":  a.structVal(ev.GetExtensions()),
		"harness":     a.object(harness),
		"payload":     a.payloadVal(),
		"raw_payload": a.jsonVal(ev.GetPayload()),
		"outcome":     types.String(enumWireName(ev.GetOutcome())),
		"origin": a.object(map[string]ref.Val{
			"dialect":          types.String(enumWireName(o.GetDialect())),
			"protocol_version": types.String(o.GetProtocolVersion()),
			"event_type":       types.String(o.GetEventType()),
			"provider":         types.String(o.GetProvider()),
		}),
		"native": a.object(map[string]ref.Val{
			"provider":   types.String(native.GetProvider()),
			"event_name": types.String(native.GetEventName()),
			"payload":    a.structVal(native.GetPayload()),
		}),
	})
}

// buildPayload gives the typed payload in Harness wire names; for events without one, the
// payload object the dialect sent (fields without a canonical home). Keys of the dialect payload
// the typed message does not model are added too, so nothing the harness sent is out of reach.
func (a *activation) buildPayload() ref.Val {
	ev := a.in.Event
	raw := ev.GetPayload().GetStructValue()
	m := ev.ProtoReflect()
	fd := m.WhichOneof(eventBody)
	if fd == nil {
		return a.structVal(raw)
	}
	fields := messageFields(a.adapter, m.Get(fd).Message())
	for k, v := range raw.GetFields() {
		if _, ok := fields[k]; !ok {
			fields[k] = a.jsonVal(v)
		}
	}
	return a.object(fields)
}

var eventBody = (&ahpv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

func (a *activation) buildSession() ref.Val {
	sv := a.in.Session
	if sv == nil {
		sv = &SessionView{}
	}
	var idle int64
	if !sv.LastSeen.IsZero() {
		idle = max(a.now.Sub(sv.LastSeen).Milliseconds(), 0)
	}
	facts := make([]ref.Val, len(sv.Facts))
	for i, f := range sv.Facts {
		facts[i] = a.object(map[string]ref.Val{
			"content":    types.String(f.GetContent()),
			"source":     types.String(f.GetSource()),
			"confidence": types.Double(f.GetConfidence()),
		})
	}
	recent := make([]ref.Val, len(sv.Recent))
	for i, r := range sv.Recent {
		recent[i] = a.object(map[string]ref.Val{
			"type":      types.String(r.Type),
			"tool_name": types.String(r.ToolName),
			"tool_kind": types.String(r.ToolKind),
			"time":      timestampVal(r.Time),
		})
	}
	return a.object(map[string]ref.Val{
		"id":                  types.String(sv.SessionID),
		"agent_id":            types.String(sv.AgentID),
		"event_count":         uintVal(sv.EventCount),
		"tool_call_count":     uintVal(sv.ToolCallCount),
		"error_count":         uintVal(sv.ErrorCount),
		"deny_count":          uintVal(sv.DenyCount),
		"idle_ms":             types.Int(idle),
		"first_seen":          timestampVal(sv.FirstSeen),
		"last_seen":           timestampVal(sv.LastSeen),
		"last_event_type":     types.String(sv.LastEventType),
		"run_status":          types.String(sv.RunStatus),
		"verification_status": types.String(sv.VerificationStatus),
		"facts":               types.NewRefValList(a.adapter, facts),
		"recent":              types.NewRefValList(a.adapter, recent),
	})
}

// uintVal gives counters as CEL int so `session.deny_count > 3` and arithmetic with int literals
// work; only values beyond int64 stay uint.
func uintVal(u uint64) ref.Val {
	if u > math.MaxInt64 {
		return types.Uint(u)
	}
	return types.Int(int64(u))
}

// timestampVal gives unknown times as the Unix epoch, so comparisons never fail.
func timestampVal(t time.Time) ref.Val {
	if t.IsZero() {
		return types.Timestamp{Time: time.Unix(0, 0).UTC()}
	}
	return types.Timestamp{Time: t}
}
