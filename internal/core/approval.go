package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
)

// Approvals holds calls that need a person's decision; *approval.Manager implements it.
type Approvals interface {
	// Resolve runs the hold flow for ev, whose policy result asks for approval a.
	Resolve(ctx context.Context, ev *ahpv1.Event, a *policy.Approval) (approval.Outcome, error)
}

// Deny codes of decisions that approvals made (docs/approvals.md).
const (
	CodeApprovalDenied   = "dev.ahpgateway.approval.denied"
	CodeApprovalTimeout  = "dev.ahpgateway.approval.timeout"
	CodeApprovalPending  = "dev.ahpgateway.approval.pending"
	CodeApprovalUsed     = "dev.ahpgateway.approval.used"
	CodeApprovalFull     = "dev.ahpgateway.approval.full"
	CodeApprovalShutdown = "dev.ahpgateway.approval.shutdown"
	CodeApprovalStore    = "dev.ahpgateway.approval.unavailable"
)

// awaitApproval turns d, whose policy result res asks for approval, into the answer of the hold
// flow, and reports whether that answer may be remembered for retries of the event (a pending
// or shutdown answer must not be: the retry has to find the approval again).
func (c *Core) awaitApproval(ctx context.Context, ev *ahpv1.Event, caps *ahpv1.Capabilities, res *policy.Result, d *ahpv1.Decision) (remember bool, err error) {
	pa := res.Approval
	out, err := c.cfg.Approvals.Resolve(ctx, ev, pa)
	rule := pa.RuleIDs[0]
	switch {
	case errors.Is(err, approval.ErrFull):
		c.cfg.Logger.Warn("approval required but the pending approvals cap is reached; denying", "event_id", ev.GetId(), "rule_id", rule)
		setEffects(res, d, []*ahpv1.Effect{denyEffect(fmt.Sprintf("approval required: %s; too many approvals are pending, retry later", pa.Reason), CodeApprovalFull, rule)})
		d.Synthetic = true
		return false, nil
	case errors.Is(err, approval.ErrUnavailable):
		c.cfg.Logger.Warn("approval required but the approval store is unavailable; denying", "event_id", ev.GetId(), "rule_id", rule)
		setEffects(res, d, []*ahpv1.Effect{denyEffect(fmt.Sprintf("approval required: %s; approvals are unavailable, retry later", pa.Reason), CodeApprovalStore, rule)})
		d.Synthetic = true
		return false, nil
	case err != nil:
		return false, err // the caller went away
	}
	a := out.Approval
	d.ApprovalId = a.ID
	if out.Result != approval.Pending {
		// The approval rules' fallbacks no longer describe the answer.
		d.Fallbacks = slices.DeleteFunc(d.Fallbacks, func(f *ahpv1.Fallback) bool { return slices.Contains(pa.RuleIDs, f.GetRuleId()) })
	}
	deny := func(reason, code string) {
		setEffects(res, d, []*ahpv1.Effect{denyEffect(reason, code, rule)})
		if ev.GetType() == ahpv1.EventType_EVENT_TYPE_CONFIRMATION {
			res.Typed = &policy.TypedAnswer{RuleID: rule, Action: "reject", Reason: reason}
		}
	}
	switch out.Result {
	case approval.Granted:
		effects := cloneEffects(pa.Approved)
		if can(caps, ahpv1.EffectKind_EFFECT_KIND_MESSAGE) {
			effects = append(effects, &ahpv1.Effect{RuleId: rule, Effect: &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: approvedText(a)}}})
		}
		setEffects(res, d, effects)
		if ev.GetType() == ahpv1.EventType_EVENT_TYPE_CONFIRMATION {
			res.Typed = &policy.TypedAnswer{RuleID: rule, Action: "approve"}
		}
		return true, nil
	case approval.Denied:
		reason := "denied by " + principalName(a.DecidedBy)
		if a.Comment != "" {
			reason += ": " + a.Comment
		}
		deny(reason, CodeApprovalDenied)
		return true, nil
	case approval.Used:
		deny(fmt.Sprintf("approval %s was used by another call of the same action; retry to ask again", a.ID), CodeApprovalUsed)
		return false, nil
	case approval.TimedOut, approval.Closing:
		code, reason := CodeApprovalTimeout, "approval timed out"
		if out.Result == approval.Closing {
			code, reason = CodeApprovalShutdown, fmt.Sprintf("the server shut down before approval %s was decided", a.ID)
		}
		if pa.OnTimeoutDeny {
			deny(reason, code)
		} else {
			// on_timeout: no-effect — the approval rules have no effect; the others decide.
			setEffects(res, d, cloneEffects(pa.Approved))
		}
		return out.Result == approval.TimedOut, nil
	}
	// Pending: the caller cannot wait. Name the approval and where to decide; a retry of the same
	// action once approved is let through once.
	reason := fmt.Sprintf("approval required: %s; approval %s is pending (%s), retry the same action once it is approved", pa.Reason, a.ID, c.cfg.ApprovalHint(a.ID))
	if can(caps, ahpv1.EffectKind_EFFECT_KIND_DEFER) {
		wait := min(c.cfg.ApprovalRetryAfter, max(time.Until(a.HoldUntil), time.Millisecond))
		setEffects(res, d, []*ahpv1.Effect{{RuleId: rule, Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{
			RetryAfterMs: uint64(wait.Milliseconds()), Reason: reason,
		}}}})
	} else {
		setEffects(res, d, []*ahpv1.Effect{denyEffect(reason, CodeApprovalPending, rule)})
	}
	return false, nil
}

// setEffects replaces the answer in the decision and in the result the typed deciders read.
func setEffects(res *policy.Result, d *ahpv1.Decision, effects []*ahpv1.Effect) {
	res.Effects = effects
	res.Verdict = policy.VerdictOf(effects)
	d.Effects, d.Verdict = effects, res.Verdict
}

func approvedText(a approval.Approval) string {
	s := "approved by " + principalName(a.DecidedBy)
	if a.Comment != "" {
		s += ": " + a.Comment
	}
	return s
}

func principalName(p string) string {
	if p == "" {
		return "an unauthenticated approver"
	}
	return p
}

// can reports whether a caller with caps can act on kind (nil caps: every canonical effect).
func can(caps *ahpv1.Capabilities, kind ahpv1.EffectKind) bool {
	return caps == nil || slices.Contains(caps.GetEffects(), kind)
}

func cloneEffects(in []*ahpv1.Effect) []*ahpv1.Effect {
	out := make([]*ahpv1.Effect, len(in))
	for i, e := range in {
		out[i] = proto.Clone(e).(*ahpv1.Effect)
	}
	return out
}
