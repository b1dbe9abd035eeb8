package typed

import (
	"fmt"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
)

// idleKind answers idle: allow (unit) or defer{reason?}. Idle has no block, so its refusal is a
// defer with the reason.
var idleKind = &kind{
	name:   "idle",
	refuse: setIdleDefer,
	later: func(d *ahpv1.Decision, _ *input, g generic) {
		setIdleDefer(d, withDetail("deferred by policy", g.reason)+retrySuffix(g.retryAfterMs))
	},
	decide: decideIdle,
}

// decideIdle: a rule's allow or defer wins. Built in, idle work is allowed unless the agent has not
// really been idle for Settings.Idle.MinIdleMs, or (with DeferWhileRunning) the session's run is
// still executing or verifying.
//
// "Really idle" is the shorter of the reported idle_duration_ms and the time since the session's
// last activity the server saw: a sub-agent or another client may still be working in the same
// session while this agent waits. Idle and heartbeat events are not activity.
func decideIdle(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	switch action(ta) {
	case "allow":
		setIdleAllow(d)
		return trace{ruleID: ta.RuleID}
	case "defer":
		setIdleDefer(d, ta.Reason)
		return trace{ruleID: ta.RuleID}
	}
	if reason := idleDeferReason(in); reason != "" {
		setIdleDefer(d, reason)
	} else {
		setIdleAllow(d)
	}
	return trace{}
}

// idleDeferReason says why idle work must wait, or is "" when it may start.
func idleDeferReason(in *input) string {
	p := in.ev.GetIdle()
	minIdle := in.s.Idle.MinIdleMs
	idle, since := p.GetIdleDurationMs(), ""
	if last, typ, ok := lastActivity(in.view); ok && !in.now.IsZero() {
		// An event stamped after now (clock skew) counts as activity just now.
		observed := uint64(max(in.now.Sub(last), 0) / time.Millisecond)
		if observed < idle {
			idle, since = observed, typ
		}
	}
	if idle < minIdle {
		if since != "" {
			return fmt.Sprintf("idle for %dms since the last %s, below the %dms minimum", idle, since, minIdle)
		}
		return fmt.Sprintf("idle for %dms, below the %dms minimum", idle, minIdle)
	}
	if in.s.Idle.DeferWhileRunning {
		switch st := in.view.RunStatus; st {
		case "executing", "verifying":
			return fmt.Sprintf("run is %s; idle work waits until it ends", st)
		}
	}
	return ""
}

// lastActivity finds the most recent event that shows the session working.
func lastActivity(v *policy.SessionView) (time.Time, string, bool) {
	for _, e := range v.Recent {
		if !e.Time.IsZero() && isActivity(e.Type) {
			return e.Time, e.Type, true
		}
	}
	if len(v.Recent) == 0 && !v.LastSeen.IsZero() && isActivity(v.LastEventType) {
		return v.LastSeen, v.LastEventType, true
	}
	return time.Time{}, "", false
}

// isActivity: idle and heartbeat events report waiting, not work.
func isActivity(eventType string) bool {
	return eventType != "" && eventType != "idle" && eventType != "heartbeat"
}

func setIdleAllow(d *ahpv1.Decision) {
	d.Typed = &ahpv1.Decision_Idle{Idle: &ahpv1.IdleDecision{
		Decision: &ahpv1.IdleDecision_Allow_{Allow: &ahpv1.IdleDecision_Allow{}},
	}}
}

// setIdleDefer defers; an empty reason is left out, as on the wire ({"decision":"defer"}).
func setIdleDefer(d *ahpv1.Decision, reason string) {
	def := &ahpv1.IdleDecision_Defer{}
	if reason != "" {
		def.Reason = &reason
	}
	d.Typed = &ahpv1.Decision_Idle{Idle: &ahpv1.IdleDecision{
		Decision: &ahpv1.IdleDecision_Defer_{Defer: def},
	}}
}
