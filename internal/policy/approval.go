package policy

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Approval limits and defaults (docs/approvals.md).
const (
	// DefaultApprovalHold is how long an approval waits for a decision when `hold` is not given.
	DefaultApprovalHold = 5 * time.Minute
	// DefaultApprovalTTL is how long a granted approval stays usable when `ttl` is not given.
	DefaultApprovalTTL = 15 * time.Minute
	// MaxApprovalHold and MaxApprovalTTL bound what a policy may ask for.
	MaxApprovalHold = 24 * time.Hour
	MaxApprovalTTL  = 24 * time.Hour
	// maxApprovers and maxNotifiers bound the lists of one approval block.
	maxApprovers = 64
	maxNotifiers = 16
)

// approverPattern is a principal name (auth's credential names) or "group:<name>".
var approverPattern = regexp.MustCompile(`^(group:)?[A-Za-z0-9][A-Za-z0-9._@:-]{0,63}$`)

// notifierPattern is the name of a configured notifier.
var notifierPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// approvalRule is a compiled `approval:` block.
type approvalRule struct {
	hold, ttl     time.Duration
	approvers     []string
	notifiers     []string
	onTimeoutDeny bool
}

// Approval says that a person must decide the call: a matched enforce ask or escalate rule has an
// `approval:` block, and nothing else the policy says stops the call anyway. The decision core
// holds the call, or answers at once and grants the same action later, as docs/approvals.md says.
type Approval struct {
	// RuleIDs are the matched rules with an approval block, in rule order; the first one's reason
	// is shown to approvers.
	RuleIDs []string
	// Kind is ask or escalate (the first rule's effect).
	Kind ahpv1.EffectKind
	// Reason is the first rule's reason (or escalate target's reason).
	Reason string
	// Target is the escalate target, if any.
	Target string
	// Hold is how long the approval waits for a decision (the shortest of the matched rules').
	Hold time.Duration
	// TTL is how long a granted approval stays usable (the shortest of the matched rules').
	TTL time.Duration
	// Approvers has one list per matched rule that names approvers: a deciding principal must be
	// in every list (by name, or by "group:<g>" for one of its groups). No list: anyone holding
	// the approve scope.
	Approvers [][]string
	// Notifiers are the notifier names of every matched rule, without duplicates.
	Notifiers []string
	// OnTimeoutDeny is set unless every matched rule says `on_timeout: no-effect`.
	OnTimeoutDeny bool
	// Approved are the effects the caller receives once approved: what the policy says without
	// the approval rules (messages, modify, defer or allow of the other rules).
	Approved []*ahpv1.Effect
	// ApprovedVerdict summarises Approved.
	ApprovedVerdict ahpv1.Verdict
}

// compileApproval checks an `approval:` block; at names it for errors ("effect.ask.approval").
func compileApproval(spec *approvalSpec, at string, add func(string, ...any)) *approvalRule {
	a := &approvalRule{hold: DefaultApprovalHold, ttl: DefaultApprovalTTL, onTimeoutDeny: true}
	duration := func(field, v string, max time.Duration, dst *time.Duration) {
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			add("%s.%s: want a duration such as 90s or 5m", at, field)
		case d <= 0:
			add("%s.%s: must be positive", at, field)
		case d > max:
			add("%s.%s: must be at most %s", at, field, max)
		default:
			*dst = d
		}
	}
	duration("hold", spec.Hold, MaxApprovalHold, &a.hold)
	duration("ttl", spec.TTL, MaxApprovalTTL, &a.ttl)
	if len(spec.Approvers) > maxApprovers {
		add("%s.approvers: at most %d entries", at, maxApprovers)
	}
	for i, p := range spec.Approvers {
		if !approverPattern.MatchString(p) {
			// Not echoed: a pasted secret would end up in a log.
			add("%s.approvers[%d]: want a principal name or group:<name> (1 to 64 letters, digits or . _ @ : -)", at, i)
			continue
		}
		if !slices.Contains(a.approvers, p) {
			a.approvers = append(a.approvers, p)
		}
	}
	if len(spec.Notifiers) > maxNotifiers {
		add("%s.notifiers: at most %d entries", at, maxNotifiers)
	}
	for i, n := range spec.Notifiers {
		if !notifierPattern.MatchString(n) {
			add("%s.notifiers[%d]: want a notifier name (lower-case letters, digits, . _ -)", at, i)
			continue
		}
		if !slices.Contains(a.notifiers, n) {
			a.notifiers = append(a.notifiers, n)
		}
	}
	switch spec.OnTimeout {
	case "", fallbackDeny:
	case fallbackNoEffect:
		a.onTimeoutDeny = false
	default:
		add("%s.on_timeout: want %s or %s, got %q", at, fallbackDeny, fallbackNoEffect, spec.OnTimeout)
	}
	return a
}

// approvalOf builds the Approval of the matched approval rules, given what the other rules say.
func approvalOf(rules []candidate, approved *Result) *Approval {
	first := rules[0]
	a := &Approval{
		Kind:            first.rule.effect,
		Hold:            first.rule.approval.hold,
		TTL:             first.rule.approval.ttl,
		OnTimeoutDeny:   false,
		Approved:        approved.Effects,
		ApprovedVerdict: approved.Verdict,
	}
	a.Reason, _ = StopReason(first.effect)
	a.Target = first.effect.GetEscalate().GetTarget()
	if a.Reason == "" {
		a.Reason = fmt.Sprintf("rule %q asks for approval", first.rule.info.ID)
	}
	for _, c := range rules {
		ar := c.rule.approval
		a.RuleIDs = append(a.RuleIDs, c.rule.info.ID)
		a.Hold = min(a.Hold, ar.hold)
		a.TTL = min(a.TTL, ar.ttl)
		a.OnTimeoutDeny = a.OnTimeoutDeny || ar.onTimeoutDeny
		if len(ar.approvers) > 0 {
			a.Approvers = append(a.Approvers, slices.Clone(ar.approvers))
		}
		for _, n := range ar.notifiers {
			if !slices.Contains(a.Notifiers, n) {
				a.Notifiers = append(a.Notifiers, n)
			}
		}
	}
	return a
}

// MayDecide reports whether a principal with the given name and groups may decide: it must be
// listed (by name or group) in every approver list.
func (a *Approval) MayDecide(name string, groups []string) bool {
	return MayDecide(a.Approvers, name, groups)
}

// MayDecide reports whether a principal with the given name and groups is listed, by name or as
// "group:<g>", in every one of approvers (no lists: anyone may decide).
func MayDecide(approvers [][]string, name string, groups []string) bool {
	for _, list := range approvers {
		if !listed(list, name, groups) {
			return false
		}
	}
	return true
}

func listed(list []string, name string, groups []string) bool {
	for _, p := range list {
		if p == name {
			return true
		}
		if g, ok := cutGroup(p); ok && slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

func cutGroup(p string) (string, bool) {
	const prefix = "group:"
	if len(p) > len(prefix) && p[:len(prefix)] == prefix {
		return p[len(prefix):], true
	}
	return "", false
}
