package core

import (
	"context"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/session"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Memory and idempotency belong to the caller: session memory, agent facts and remembered
// decisions are keyed by the authenticated principal (Config.Caller) as well as by the ids the
// caller names, so a caller that names another principal's session or agent reads an empty
// memory, cannot add facts to it, and a retry is replayed only to the principal that made the
// first call. The stores' interfaces are unchanged: the principal goes into the keys.

// caller returns the principal of the call ("" when unauthenticated).
func (c *Core) caller(ctx context.Context) string {
	if c.cfg.Caller == nil {
		return ""
	}
	return c.cfg.Caller(ctx)
}

// idempotencyKey is idempotency.Key scoped by the principal, and the size of the event's
// encoding (idempotency.KeyAndSize; for policy.Input.RequestBytes).
func idempotencyKey(principal string, ev *ahpv1.Event) (key string, size int) {
	key, size = idempotency.KeyAndSize(ev)
	if principal == "" {
		return key, size
	}
	return key + "\x00" + principal, size
}

// view returns the principal's view of the event's session and agent, under the ids the caller
// named.
//
// A store that can (session.LazyViewer) gives its recent events unconverted: the policy converts
// them only if a rule reads session.recent. The typed deciders read Recent, so for a typed event
// they are converted here.
func (c *Core) view(principal string, ev *ahpv1.Event) *policy.SessionView {
	sid, aid := ev.GetSession().GetId(), agentID(ev)
	var v *policy.SessionView
	if lv, ok := c.cfg.Sessions.(session.LazyViewer); ok {
		v = lv.LazyView(session.Scope(principal, sid), session.Scope(principal, aid))
		if classOf(ev.GetType()) == classTyped {
			v.RecentEvents()
		}
	} else {
		v = c.cfg.Sessions.View(session.Scope(principal, sid), session.Scope(principal, aid))
	}
	v.SessionID, v.AgentID = sid, aid
	return v
}

// scopedEvent returns ev as session memory must see it: with its session and agent ids scoped
// by the principal. It is a shallow copy sharing everything else with ev; ev itself is unchanged.
func scopedEvent(principal string, ev *ahpv1.Event) *ahpv1.Event {
	if principal == "" {
		return ev
	}
	out := shallow(ev)
	if s := ev.GetSession(); s != nil {
		sc := shallow(s)
		sc.Id = session.Scope(principal, s.GetId())
		if a := s.GetAgent(); a != nil {
			ac := shallow(a)
			ac.Id = session.Scope(principal, a.GetId())
			sc.Agent = ac
		}
		out.Session = sc
	}
	if h := ev.GetHarness(); h != nil && h.GetAgentId() != "" {
		hc := shallow(h)
		hc.AgentId = session.Scope(principal, h.GetAgentId())
		out.Harness = hc
	}
	return out
}

// shallow copies the populated fields of m into a new message; message fields are shared.
func shallow[M proto.Message](m M) M {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	return dst.Interface().(M)
}

// undefinedEnum returns the path of the first enum field of m (and its ahp.v1 sub-messages) that
// holds a number its enum does not define, or "". Such a value reaches the core in binary
// protobuf (proto3 keeps unknown numbers); the JSON codec and the dialect codecs refuse unknown
// names, so every protocol refuses an unknown kind alike instead of letting it pass as none.
//
// It runs on every event, so it walks the fields without allocating: the path is built only for
// a field that is wrong (issue 18: building every field's path was a fifth of the core's
// allocations).
func undefinedEnum(m protoreflect.Message, path string) string {
	if rest, bad := findUndefinedEnum(m); bad {
		return path + rest
	}
	return ""
}

// findUndefinedEnum reports whether m holds an undefined enum number and, if so, the path to it
// below m (".tool.kind").
func findUndefinedEnum(m protoreflect.Message) (string, bool) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		isEnum := fd.Kind() == protoreflect.EnumKind
		isOurs := fd.Kind() == protoreflect.MessageKind && !fd.IsMap() && fd.Message().ParentFile().Package() == "ahp.v1"
		if !isEnum && !isOurs || !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case isEnum && fd.IsList():
			l := v.List()
			for j := range l.Len() {
				if fd.Enum().Values().ByNumber(l.Get(j).Enum()) == nil {
					return "." + string(fd.Name()), true
				}
			}
		case isEnum:
			if fd.Enum().Values().ByNumber(v.Enum()) == nil {
				return "." + string(fd.Name()), true
			}
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				if rest, bad := findUndefinedEnum(l.Get(j).Message()); bad {
					return "." + string(fd.Name()) + rest, true
				}
			}
		default:
			if rest, bad := findUndefinedEnum(v.Message()); bad {
				return "." + string(fd.Name()) + rest, true
			}
		}
	}
	return "", false
}
