package approval

import "time"

// Store keeps approvals. It is small on purpose, so that a replicated implementation (a NATS
// JetStream KV bucket with a watch) can stand beside the in-process one: every state change is a
// compare-and-set on one record, and changes reach every subscriber, so a call held on one
// process is released by a decision made through another.
type Store interface {
	// Open returns the pending approval for a.Key, or the approved one whose grant is still
	// usable, or stores a as a new pending approval (created). It fails with ErrFull when the
	// pending caps are reached.
	Open(a Approval, now time.Time) (got Approval, created bool, err error)
	// Get returns one approval (ErrNotFound when unknown or forgotten).
	Get(id string, now time.Time) (Approval, error)
	// List returns the approvals that pass f, newest first.
	List(f Filter, now time.Time) []Approval
	// Decide moves a pending approval to approved or denied: ErrDecided when it already is,
	// ErrExpired when its hold ended first, ErrNotFound when unknown. It does not check who
	// decides (the Manager does).
	Decide(id string, d Decision, now time.Time) (Approval, error)
	// Consume uses the grant of the approved approval for key on behalf of the event eventKey:
	// ok when the grant is within its ttl and unused, or was used by that same event (a retry).
	// Two concurrent calls for different events: exactly one is ok.
	Consume(key, eventKey string, now time.Time) (Approval, bool)
	// Expire moves pending approvals whose hold ended to expired.
	Expire(now time.Time)
	// SetAbandoned records whether every held caller of a pending approval went away.
	SetAbandoned(id string, abandoned bool)
	// Subscribe calls fn with every change, in the order the changes were made, until cancel is
	// called. fn must not block and must not call the store.
	Subscribe(fn func(Change)) (cancel func())
}

// ChangeKind says what happened to an approval.
type ChangeKind uint8

const (
	// Requested: a new pending approval.
	Requested ChangeKind = iota + 1
	// Decided: approved or denied by a person.
	Decided
	// Expired: the hold ended without a decision.
	Expired
	// Consumed: the grant was used.
	Consumed
	// Abandoned: every held caller went away, or one came back (Approval.Abandoned says which).
	Abandoned
)

var changeNames = [...]string{"", "requested", "decided", "expired", "consumed", "abandoned"}

// String is the change's wire name.
func (k ChangeKind) String() string {
	if int(k) < len(changeNames) {
		return changeNames[k]
	}
	return "unknown"
}

// Change is one state change of an approval, as it is after the change.
type Change struct {
	Kind     ChangeKind
	Approval Approval
	// Remote is set by a shared store for a change made by another process: that process
	// records it (audit, metrics, notifiers); this one only wakes its held calls and Watches.
	Remote bool
}

// Decision is a person's answer.
type Decision struct {
	// Approve approves; false denies.
	Approve bool
	// By is the authenticated principal that decided.
	By string
	// Comment is the approver's comment (at most MaxComment bytes).
	Comment string
}

// Filter selects approvals for List; zero fields match everything.
type Filter struct {
	// State, when set, keeps approvals in that state.
	State State
	// Agent, Session and Rule keep approvals of that agent, session, or with that rule id.
	Agent, Session, Rule string
	// Limit caps the result (default 100, at most 1000).
	Limit int
}

// Match reports whether a passes the filter's state, agent, session and rule (Limit aside).
func (f Filter) Match(a Approval) bool {
	if f.State != 0 && a.State != f.State {
		return false
	}
	if f.Agent != "" && a.Agent != f.Agent || f.Session != "" && a.Session != f.Session {
		return false
	}
	if f.Rule != "" {
		for _, r := range a.RuleIDs {
			if r == f.Rule {
				return true
			}
		}
		return false
	}
	return true
}

func (f Filter) limit() int {
	switch {
	case f.Limit <= 0:
		return 100
	case f.Limit > 1000:
		return 1000
	}
	return f.Limit
}
