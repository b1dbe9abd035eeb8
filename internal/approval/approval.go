// Package approval holds the approvals of ask and escalate rules that have an `approval:` block:
// the record a person decides (Approval), where records live (Store, with a bounded in-process
// implementation) and the hold flow the decision core runs for a call that needs one (Manager).
// It knows canonical ahp.v1 events and policy results and nothing of HTTP, Connect or dialects.
//
// The model (docs/approvals.md): a call that needs approval opens an approval keyed by its action
// — principal, source, agent, session, event type, tool and canonical input — or joins the one
// already open for it, so a retried event never opens a second. The call is held until a person
// decides, the approval's hold ends, the caller's own deadline comes near, the caller goes away or
// the server shuts down. An approved approval is a one-time grant for that action within its ttl:
// the held call, or the first retry of a caller that could not wait, consumes it atomically.
package approval

import (
	"errors"
	"time"
)

// State is where an approval is in its life.
type State uint8

const (
	// StatePending: waiting for a person.
	StatePending State = iota + 1
	// StateApproved: a person approved; the grant is usable once until GrantUntil.
	StateApproved
	// StateDenied: a person denied.
	StateDenied
	// StateExpired: nobody decided before the hold ended.
	StateExpired
)

var stateNames = [...]string{"", "pending", "approved", "denied", "expired"}

// String is the state's wire name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// ParseState parses a wire name.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if i > 0 && n == name {
			return State(i), true
		}
	}
	return 0, false
}

// Approval is one request for a person's decision. Every string field is bounded (see the
// Max* constants), so the record's size is bounded too.
type Approval struct {
	// ID identifies the approval (UUIDv7).
	ID string
	// State is where the approval is.
	State State
	// Key is the action key (hex SHA-256, see ActionKey): the same action gets the same key.
	Key string
	// RuleIDs are the approval rules that matched, the first one decides the reason.
	RuleIDs []string
	// Kind is "ask" or "escalate"; Target is the escalate target.
	Kind, Target string
	// Reason is the rule's reason.
	Reason string
	// Principal is the authenticated caller whose call is held ("" without authentication).
	Principal string
	// Source, Agent, Session, EventID, EventType, Tool describe the held call.
	Source, Agent, Session, EventID, EventType, Tool string
	// Input is a redacted, truncated summary of the tool input (or payload) for approvers.
	Input string
	// Approvers has one list per rule that names approvers; see policy.Approval.MayDecide.
	Approvers [][]string
	// Notifiers are the notifiers to tell.
	Notifiers []string
	// OnTimeoutDeny says that a timeout denies (else the approval rules have no effect).
	OnTimeoutDeny bool
	// TTL is how long a grant stays usable after approval.
	TTL time.Duration
	// CreatedAt and HoldUntil bound the wait for a decision.
	CreatedAt, HoldUntil time.Time
	// DecidedAt, DecidedBy and Comment describe the decision (DecidedAt is also the expiry time).
	DecidedAt time.Time
	DecidedBy string
	Comment   string
	// GrantUntil is when an approved grant stops being usable.
	GrantUntil time.Time
	// ConsumedAt and ConsumedBy (the idempotency key of the event that used it) record the use
	// of the grant.
	ConsumedAt time.Time
	ConsumedBy string
	// Abandoned is set when every held caller went away before a decision.
	Abandoned bool
	// Revision counts changes; Watch consumers use it to order what they see.
	Revision uint64
}

// Latency is the time from request to decision (or expiry); zero while pending.
func (a Approval) Latency() time.Duration {
	if a.DecidedAt.IsZero() {
		return 0
	}
	return a.DecidedAt.Sub(a.CreatedAt)
}

// Granted reports whether the grant can be used at now.
func (a Approval) Granted(now time.Time) bool {
	return a.State == StateApproved && a.ConsumedAt.IsZero() && now.Before(a.GrantUntil)
}

// size is the approximate memory an approval holds, for the store's byte bound.
func (a Approval) size() int {
	n := 256 + len(a.ID) + len(a.Key) + len(a.Kind) + len(a.Target) + len(a.Reason) + len(a.Principal) +
		len(a.Source) + len(a.Agent) + len(a.Session) + len(a.EventID) + len(a.EventType) + len(a.Tool) +
		len(a.Input) + len(a.DecidedBy) + len(a.Comment) + len(a.ConsumedBy)
	for _, r := range a.RuleIDs {
		n += 16 + len(r)
	}
	for _, l := range a.Approvers {
		for _, p := range l {
			n += 16 + len(p)
		}
	}
	for _, p := range a.Notifiers {
		n += 16 + len(p)
	}
	return n
}

// Clone copies the slices, so a caller cannot change a store's copy (every Store returns clones).
func (a Approval) Clone() Approval {
	a.RuleIDs = append([]string(nil), a.RuleIDs...)
	a.Notifiers = append([]string(nil), a.Notifiers...)
	if a.Approvers != nil {
		lists := make([][]string, len(a.Approvers))
		for i, l := range a.Approvers {
			lists[i] = append([]string(nil), l...)
		}
		a.Approvers = lists
	}
	return a
}

// Bounds of the fields a caller or a policy controls.
const (
	// MaxComment is the longest comment a decision may carry, in bytes.
	MaxComment = 1024
	// MaxReason and MaxInput bound the reason and input summary kept (longer ones are cut).
	MaxReason = 1024
	MaxInput  = 2048
	// maxField bounds the identifiers copied from the event (the schema bounds them as well).
	maxField = 1024
)

// Errors of Decide and the store; the service maps them to Connect codes.
var (
	// ErrNotFound: no approval has that id (or it was forgotten after its retention).
	ErrNotFound = errors.New("approval not found")
	// ErrDecided: the approval was already approved or denied; the first decision stands.
	ErrDecided = errors.New("approval already decided")
	// ErrExpired: nobody decided in time; the approval can no longer be decided.
	ErrExpired = errors.New("approval expired")
	// ErrNotApprover: the deciding principal is not listed by the approval's rules.
	ErrNotApprover = errors.New("not an approver of this approval")
	// ErrFull: the pending approvals cap (overall or for the agent) is reached.
	ErrFull = errors.New("too many pending approvals")
	// ErrComment: the comment is too long or not UTF-8.
	ErrComment = errors.New("comment must be valid UTF-8 of at most 1024 bytes")
	// ErrUnavailable: a shared store could not be reached; the call is denied, never allowed.
	ErrUnavailable = errors.New("approval store unavailable")
	// ErrClosed: the manager is shut down.
	ErrClosed = errors.New("approvals are shut down")
)
