package policy

import (
	"context"
	"math"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// activation supplies the CEL variables of one evaluation straight from the proto: no protojson
// round trip, no copy of the tool input. Fixed-shape parts (event, tool, session) are records
// whose fields are computed when read; JSON parts (tool input, extensions) are wrapped as they
// are; each variable is built at most once per evaluation.
//
// An activation belongs to one Evaluate call and is not shared between goroutines.
type activation struct {
	ctx     context.Context // the evaluation's; CEL stops when it ends
	in      Input           // a copy, so the caller's Input need not move to the heap
	adapter types.Adapter
	now     ref.Val
	nowTime time.Time

	event, tool, input, session, payload ref.Val
}

var _ interpreter.Activation = (*activation)(nil)

func newActivation(ctx context.Context, in *Input, adapter types.Adapter) *activation {
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &activation{ctx: ctx, in: *in, adapter: adapter, nowTime: now}
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case varEvent:
		if a.event == nil {
			a.event = newRecord(a.adapter, eventFields{a})
		}
		return a.event, true
	case varTool:
		return a.toolVal(), true
	case varInput:
		return a.inputVal(), true
	case varSession:
		if a.session == nil {
			sv := a.in.Session
			if sv == nil {
				sv = &SessionView{}
			}
			a.session = newRecord(a.adapter, sessionFields{a, sv})
		}
		return a.session, true
	case varPayload:
		return a.payloadVal(), true
	case varNow:
		if a.now == nil {
			a.now = types.Timestamp{Time: a.nowTime}
		}
		return a.now, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

func (a *activation) toolVal() ref.Val {
	if a.tool == nil {
		a.tool = newRecord(a.adapter, toolFields{a, a.in.Event.GetTool()})
	}
	return a.tool
}

// inputVal converts the top level of the tool input once: almost every rule reads a key or two
// of it, often more than once, and a map lookup beats converting the proto value on each read.
// Nested objects and lists stay wrapped.
func (a *activation) inputVal() ref.Val {
	if a.input == nil {
		fields := a.in.Event.GetTool().GetInput().GetFields()
		if len(fields) == 0 {
			a.input = emptyObject
		} else {
			m := make(map[string]ref.Val, len(fields))
			for k, v := range fields {
				m[k] = jsonVal(a.adapter, v)
			}
			a.input = types.NewMap(a.adapter, m)
		}
	}
	return a.input
}

func (a *activation) payloadVal() ref.Val {
	if a.payload == nil {
		a.payload = a.buildPayload()
	}
	return a.payload
}

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

// ---- JSON values ----

// emptyObject is the value of absent JSON objects, so `has(x.y)` is false rather than an error.
var emptyObject = types.NewMap(types.DefaultTypeAdapter, map[string]ref.Val{})

var emptyList = types.NewRefValList(types.DefaultTypeAdapter, nil)

// structVal wraps a JSON object without copying it.
func structVal(adapter types.Adapter, s *structpb.Struct) ref.Val {
	if s == nil {
		return emptyObject
	}
	return types.NewJSONStruct(adapter, s)
}

// jsonVal converts any JSON value; absent reads as null.
func jsonVal(adapter types.Adapter, v *structpb.Value) ref.Val {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return types.Double(k.NumberValue)
	case *structpb.Value_StringValue:
		return types.String(k.StringValue)
	case *structpb.Value_BoolValue:
		return types.Bool(k.BoolValue)
	case *structpb.Value_StructValue:
		return structVal(adapter, k.StructValue)
	case *structpb.Value_ListValue:
		if k.ListValue == nil {
			return emptyList
		}
		return types.NewJSONList(adapter, k.ListValue)
	default:
		return types.NullValue
	}
}

// ---- event ----

type eventFields struct{ a *activation }

var eventFieldNames = []string{"id", "source", "type", "time", "session", "tool", "extensions",
	"harness", "payload", "raw_payload", "outcome", "origin", "native", "catalogue"}

func (f eventFields) names() []string { return eventFieldNames }

func (f eventFields) field(name string) (ref.Val, bool) {
	a, ev := f.a, f.a.in.Event
	switch name {
	case "id":
		return types.String(ev.GetId()), true
	case "source":
		return types.String(ev.GetSource()), true
	case "type":
		return types.String(names.EventTypeName(ev.GetType())), true
	case "time":
		return types.String(ev.GetTime()), true
	case "session":
		return newRecord(a.adapter, eventSessionFields{a, ev.GetSession()}), true
	case "tool":
		return a.toolVal(), true
	case "extensions":
		return structVal(a.adapter, ev.GetExtensions()), true
	case "harness":
		return newRecord(a.adapter, harnessFields{a, ev.GetHarness()}), true
	case "payload":
		return a.payloadVal(), true
	case "raw_payload":
		return jsonVal(a.adapter, ev.GetPayload()), true
	case "outcome":
		return types.String(names.EnumWireName(ev.GetOutcome())), true
	case "origin":
		o := ev.GetOrigin()
		return types.NewMap(a.adapter, map[string]ref.Val{
			"dialect":          types.String(names.EnumWireName(o.GetDialect())),
			"protocol_version": types.String(o.GetProtocolVersion()),
			"event_type":       types.String(o.GetEventType()),
			"provider":         types.String(o.GetProvider()),
		}), true
	case "catalogue":
		return catalogueVal(a.adapter, ev), true
	case "native":
		n := ev.GetNative()
		return types.NewMap(a.adapter, map[string]ref.Val{
			"provider":   types.String(n.GetProvider()),
			"event_name": types.String(n.GetEventName()),
			"payload":    structVal(a.adapter, n.GetPayload()),
		}), true
	}
	return nil, false
}

type eventSessionFields struct {
	a *activation
	s *ahpv1.Session
}

var eventSessionFieldNames = []string{"id", "cwd", "workspace_roots", "model", "agent"}

func (f eventSessionFields) names() []string { return eventSessionFieldNames }

func (f eventSessionFields) field(name string) (ref.Val, bool) {
	switch name {
	case "id":
		return types.String(f.s.GetId()), true
	case "cwd":
		return types.String(f.s.GetCwd()), true
	case "workspace_roots":
		return types.NewStringList(f.a.adapter, f.s.GetWorkspaceRoots()), true
	case "model":
		return types.String(f.s.GetModel()), true
	case "agent":
		return types.NewMap(f.a.adapter, map[string]ref.Val{
			"id":   types.String(f.s.GetAgent().GetId()),
			"type": types.String(f.s.GetAgent().GetType()),
		}), true
	}
	return nil, false
}

type harnessFields struct {
	a *activation
	h *ahpv1.HarnessEnvelope
}

var harnessFieldNames = []string{"agent_id", "depth", "context", "metadata"}

func (f harnessFields) names() []string { return harnessFieldNames }

func (f harnessFields) field(name string) (ref.Val, bool) {
	switch name {
	case "agent_id":
		return types.String(f.h.GetAgentId()), true
	case "depth":
		return types.Int(f.h.GetDepth()), true
	case "context":
		if c := f.h.GetContext(); c != nil {
			return messageVal(f.a.adapter, c.ProtoReflect()), true
		}
		return emptyObject, true
	case "metadata":
		return structVal(f.a.adapter, f.h.GetMetadata()), true
	}
	return nil, false
}

// ---- tool ----

type toolFields struct {
	a *activation
	t *ahpv1.Tool
}

var toolFieldNames = []string{"call_id", "name", "kind", "input", "output", "error", "mcp"}

func (f toolFields) names() []string { return toolFieldNames }

func (f toolFields) field(name string) (ref.Val, bool) {
	switch name {
	case "call_id":
		return types.String(f.t.GetCallId()), true
	case "name":
		return types.String(f.t.GetName()), true
	case "kind":
		return types.String(names.ToolKindName(f.t.GetKind())), true
	case "input":
		return f.a.inputVal(), true
	case "output":
		return jsonVal(f.a.adapter, f.t.GetOutput()), true
	case "error":
		e := f.t.GetError()
		return types.NewMap(f.a.adapter, map[string]ref.Val{
			"message":  types.String(e.GetMessage()),
			"code":     jsonVal(f.a.adapter, e.GetCode()),
			"category": types.String(e.GetCategory()),
		}), true
	case "mcp":
		return types.NewMap(f.a.adapter, map[string]ref.Val{
			"server":      types.String(f.t.GetMcp().GetServer()),
			"tool":        types.String(f.t.GetMcp().GetTool()),
			"server_name": types.String(f.t.GetMcp().GetServerName()),
			"provenance":  types.String(f.t.GetMcp().GetProvenance()),
			"connection":  structVal(f.a.adapter, f.t.GetMcp().GetConnection()),
		}), true
	}
	return nil, false
}

// ---- session memory ----

type sessionFields struct {
	a  *activation
	sv *SessionView
}

var sessionFieldNames = []string{"id", "agent_id", "event_count", "tool_call_count", "error_count",
	"deny_count", "idle_ms", "first_seen", "last_seen", "last_event_type", "run_status",
	"verification_status", "facts", "recent"}

func (f sessionFields) names() []string { return sessionFieldNames }

func (f sessionFields) field(name string) (ref.Val, bool) {
	sv := f.sv
	switch name {
	case "id":
		return types.String(sv.SessionID), true
	case "agent_id":
		return types.String(sv.AgentID), true
	case "event_count":
		return uintVal(sv.EventCount), true
	case "tool_call_count":
		return uintVal(sv.ToolCallCount), true
	case "error_count":
		return uintVal(sv.ErrorCount), true
	case "deny_count":
		return uintVal(sv.DenyCount), true
	case "idle_ms":
		// Time since the session was last seen; 0 for a session never seen before.
		if sv.LastSeen.IsZero() {
			return types.Int(0), true
		}
		return types.Int(max(f.a.nowTime.Sub(sv.LastSeen).Milliseconds(), 0)), true
	case "first_seen":
		return timestampVal(sv.FirstSeen), true
	case "last_seen":
		return timestampVal(sv.LastSeen), true
	case "last_event_type":
		return types.String(sv.LastEventType), true
	case "run_status":
		return types.String(sv.RunStatus), true
	case "verification_status":
		return types.String(sv.VerificationStatus), true
	case "facts":
		if len(sv.Facts) == 0 {
			return emptyList, true
		}
		facts := make([]ref.Val, len(sv.Facts))
		for i, fact := range sv.Facts {
			facts[i] = types.NewMap(f.a.adapter, map[string]ref.Val{
				"content":    types.String(fact.GetContent()),
				"source":     types.String(fact.GetSource()),
				"confidence": types.Double(fact.GetConfidence()),
			})
		}
		return types.NewRefValList(f.a.adapter, facts), true
	case "recent":
		events := sv.RecentEvents()
		if len(events) == 0 {
			return emptyList, true
		}
		recent := make([]ref.Val, len(events))
		for i, r := range events {
			recent[i] = types.NewMap(f.a.adapter, map[string]ref.Val{
				"type":      types.String(r.Type),
				"tool_name": types.String(r.ToolName),
				"tool_kind": types.String(r.ToolKind),
				"time":      timestampVal(r.Time),
			})
		}
		return types.NewRefValList(f.a.adapter, recent), true
	}
	return nil, false
}

// ---- payload ----

// buildPayload gives the typed payload in Harness wire names; for events without one, the
// payload object the dialect sent (fields without a canonical home). Keys of the dialect payload
// the typed message does not model are added too, so nothing the harness sent is out of reach.
func (a *activation) buildPayload() ref.Val {
	ev := a.in.Event
	raw := ev.GetPayload().GetStructValue()
	if ev == nil {
		return emptyObject
	}
	m := ev.ProtoReflect()
	fd := m.WhichOneof(eventBody)
	if fd == nil {
		return structVal(a.adapter, raw)
	}
	fields := messageFields(a.adapter, m.Get(fd).Message())
	for k, v := range raw.GetFields() {
		if _, ok := fields[k]; !ok {
			fields[k] = jsonVal(a.adapter, v)
		}
	}
	return types.NewMap(a.adapter, fields)
}

var eventBody = (&ahpv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

// ---- scalars ----

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
