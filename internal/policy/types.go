package policy

import (
	"errors"
	"time"
	"unique"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// Input is everything a policy may look at for one decision. The decision core builds it; the
// engine never reaches outside it, so evaluation is a pure function of Input and the policy.
type Input struct {
	// Event is the canonical event being decided or observed.
	Event *ahpv1.Event
	// Capabilities are the effects the caller can act on; nil means "all canonical effects".
	Capabilities *ahpv1.Capabilities
	// Session is a snapshot of session memory before this event; never nil when built by the core.
	Session *SessionView
	// Now is the evaluation time (injected so tests are deterministic).
	Now time.Time
	// RequestBytes, when > 0, is the size of Event's protobuf encoding: no string, list or map
	// the policy reads from the event is longer. It lets expressions whose cost estimate stays
	// within the limit for requests of that size run without cost tracking; 0 (unknown) tracks
	// them always.
	RequestBytes int
}

// SessionView is a read-only snapshot of what the server remembers about a session.
type SessionView struct {
	// SessionID is the session id ("" when the event carried none).
	SessionID string
	// AgentID is the last agent id seen in the session.
	AgentID string
	// EventCount is the number of events recorded for the session.
	EventCount uint64
	// ToolCallCount is the number of tool.before events recorded.
	ToolCallCount uint64
	// ErrorCount is the number of tool.error / error events recorded.
	ErrorCount uint64
	// DenyCount is the number of deny decisions given in the session.
	DenyCount uint64
	// FirstSeen and LastSeen bound the session's activity.
	FirstSeen, LastSeen time.Time
	// LastEventType is the canonical name of the last event recorded.
	LastEventType string
	// RunStatus is the last run_lifecycle status ("executing", ...), "" if none.
	RunStatus string
	// VerificationStatus is the last verification status ("passed", ...), "" if none.
	VerificationStatus string
	// Facts are facts derived from observations, most recent first.
	Facts []*ahpv1.Fact
	// AgentFacts are facts remembered for the agent across its sessions, most recent first.
	AgentFacts []*ahpv1.Fact
	// Recent are summaries of the most recent events, most recent first. A view from a store
	// that keeps them compactly may leave it nil and hold them as CompactEvents instead (see
	// SetCompactRecent); read them with RecentEvents.
	Recent []EventSummary

	// compact, when Recent is nil, are the recent events as the store keeps them, shared with
	// it and never written.
	compact []CompactEvent
}

// SetCompactRecent gives v its recent events (most recent first) in a store's compact form, to
// be converted to Recent only if something reads them (RecentEvents): most decisions never do,
// and the store's slice is shared, not copied. events must not be written afterwards.
func (v *SessionView) SetCompactRecent(events []CompactEvent) {
	v.Recent, v.compact = nil, events
}

// RecentEvents returns Recent, first converting the compact form a store gave (SetCompactRecent)
// if that has not been done. It is not safe for concurrent use with itself.
func (v *SessionView) RecentEvents() []EventSummary {
	if v.Recent == nil && v.compact != nil {
		v.Recent = make([]EventSummary, len(v.compact))
		for i, c := range v.compact {
			v.Recent[i] = c.Summary()
		}
		v.compact = nil
	}
	return v.Recent
}

// EventSummary is a compact record of one remembered event.
type EventSummary struct {
	// Type is the canonical event type name.
	Type string
	// ToolName and ToolKind describe the tool, for tool events.
	ToolName, ToolKind string
	// Time is when the server recorded the event.
	Time time.Time
}

// CompactEvent is an EventSummary as session memory keeps it (issue 18: a full store of
// summaries was tens of megabytes the collector scanned at every cycle): 24 bytes with one pointer,
// to the interned tool name, instead of 56 bytes with four. The time keeps its instant and whether
// it was UTC; any other location reads back as local time, and the monotonic reading is dropped.
type CompactEvent struct {
	unixNano int64
	toolName unique.Handle[string] // zero for no tool name
	typ      int32                 // ahpv1.EventType
	kind     int16                 // ahpv1.ToolKind
	utc      bool
}

// NewCompactEvent summarises an event of type t with the tool's name and kind, recorded at.
func NewCompactEvent(t ahpv1.EventType, kind ahpv1.ToolKind, toolName string, at time.Time) CompactEvent {
	c := CompactEvent{unixNano: at.UnixNano(), typ: int32(t), kind: int16(kind), utc: at.Location() == time.UTC}
	if int32(c.kind) != int32(kind) {
		c.kind = -1 // not a defined kind (the core refuses those): reads back as no kind
	}
	if toolName != "" {
		c.toolName = unique.Make(toolName)
	}
	return c
}

// NewCompactEventLike is NewCompactEvent for an event whose tool name is like's: it shares like's
// interned name instead of looking it up again (a decoder of many events of a few tools).
func NewCompactEventLike(like CompactEvent, t ahpv1.EventType, kind ahpv1.ToolKind, at time.Time) CompactEvent {
	c := NewCompactEvent(t, kind, "", at)
	c.toolName = like.toolName
	return c
}

// ToolName is the tool's name ("" for none).
func (c CompactEvent) ToolName() string {
	if c.toolName == (unique.Handle[string]{}) {
		return ""
	}
	return c.toolName.Value()
}

// Type is the event's type (possibly a number this build does not name).
func (c CompactEvent) Type() ahpv1.EventType { return ahpv1.EventType(c.typ) }

// Kind is the tool's kind: unspecified for none, -1 for a number that was not a defined kind.
func (c CompactEvent) Kind() ahpv1.ToolKind { return ahpv1.ToolKind(c.kind) }

// UnixNano is the instant recorded, in nanoseconds since the Unix epoch.
func (c CompactEvent) UnixNano() int64 { return c.unixNano }

// UTC reports whether the time recorded was in UTC (else it reads back as local time).
func (c CompactEvent) UTC() bool { return c.utc }

// Summary is c as an EventSummary.
func (c CompactEvent) Summary() EventSummary {
	at := time.Unix(0, c.unixNano)
	if c.utc {
		at = at.UTC()
	}
	kind := ""
	if c.kind >= 0 {
		kind = names.ToolKindName(ahpv1.ToolKind(c.kind))
	}
	return EventSummary{Type: names.EventTypeName(ahpv1.EventType(c.typ)), ToolName: c.ToolName(), ToolKind: kind, Time: at}
}

// Result is the combined outcome of evaluating a policy for one input.
type Result struct {
	// Effects are the effects the caller receives, already combined, narrowed to the caller's
	// capabilities and with fallbacks applied, in rule order.
	Effects []*ahpv1.Effect
	// Verdict summarises Effects (deny > ask/escalate > defer > modify > allow).
	Verdict ahpv1.Verdict
	// MatchedRuleIDs lists every rule whose match and when held, enforce and dry-run alike, in order.
	MatchedRuleIDs []string
	// Fallbacks records effects the caller could not express and what was sent instead.
	Fallbacks []*ahpv1.Fallback
	// DryRuns records what dry-run rules would have done.
	DryRuns []*ahpv1.DryRun
	// Typed is the answer of the first enforce rule that gave a typed answer, or nil.
	Typed *TypedAnswer
	// Messages are texts from message effects, in rule order (also present in Effects when the
	// caller can show messages).
	Messages []string
	// TypedDryRuns records the typed answers dry-run rules would have given, in rule order.
	TypedDryRuns []*TypedAnswer
	// Approval is set when a person must decide (an ask or escalate rule with an `approval:`
	// block matched and no other rule stops the call); Effects are then what the caller receives
	// when nobody approves, as without approvals. Nil otherwise.
	Approval *Approval
	// Errors lists rules that failed at run time (a CEL error, a modify expression that did not
	// give an object, a recovered panic). A failed rule counts as not matched. An entry with an
	// empty RuleID means the evaluation as a whole failed and the Result carries no effects.
	// The engine never fails closed on its own: the decision core decides, from its
	// configuration, whether a non-empty Errors turns the decision into a denial.
	Errors []RuleError
}

// RuleError is a run-time failure of one rule, or of the whole evaluation when RuleID is empty.
type RuleError struct {
	// RuleID is the failing rule; empty when the failure was not tied to a rule.
	RuleID string
	// DryRun is set when the failing rule is a dry-run rule, whose outcome could not have
	// changed the decision; a caller that fails closed on errors may ignore these.
	DryRun bool
	// Err is what went wrong.
	Err error
}

// Error implements error.
func (e RuleError) Error() string {
	if e.Err == nil {
		e.Err = errUnknown
	}
	if e.RuleID == "" {
		return "policy evaluation: " + e.Err.Error()
	}
	return "rule \"" + e.RuleID + "\": " + e.Err.Error()
}

var errUnknown = errors.New("unknown error")

// Unwrap returns the underlying error.
func (e RuleError) Unwrap() error { return e.Err }

// TypedAnswer is a rule's answer to one of the eight Harness typed events. Which fields matter
// depends on the event type; the typed deciders turn it into the typed decision.
type TypedAnswer struct {
	// RuleID is the rule that gave the answer.
	RuleID string
	// Action is one of allow, block, defer, refine, modify, retry, queue, skip, approve, reject,
	// escalate; each typed event accepts the subset its decision has.
	Action string
	// Reason explains block/defer/skip/reject.
	Reason string
	// Strategy is a planning strategy wire name ("step_by_step") or a custom name.
	Strategy string
	// Task is the rewritten task of a planning modify.
	Task string
	// Hints are reasoning/planning hints, or refine scope hints.
	Hints []string
	// Intent and Confidence override intent detection.
	Intent     string
	Confidence float64
	// Facts and Knowledge are injected by context_perception (and Facts by memory_recall).
	Facts     []string
	Knowledge []string
	// RetryAfterMs is a fixed retry delay; MaxBackoffMs caps computed backoff (rate_limit, idle).
	RetryAfterMs, MaxBackoffMs uint64
}

// Settings configure the built-in behaviour of the typed decisions; a policy file's `settings:`
// block fills them and zero fields take the documented defaults.
type Settings struct {
	// Idle configures idle decisions.
	Idle IdleSettings `yaml:"idle" json:"idle"`
	// Intent configures the keyword intent classifier.
	Intent IntentSettings `yaml:"intent" json:"intent"`
	// Context configures context_perception.
	Context ContextSettings `yaml:"context" json:"context"`
	// Memory configures memory_recall.
	Memory MemorySettings `yaml:"memory" json:"memory"`
	// Planning configures planning.
	Planning PlanningSettings `yaml:"planning" json:"planning"`
	// Reasoning configures reasoning.
	Reasoning ReasoningSettings `yaml:"reasoning" json:"reasoning"`
	// RateLimit configures rate_limit.
	RateLimit RateLimitSettings `yaml:"rate_limit" json:"rate_limit"`
	// Confirmation configures confirmation.
	Confirmation ConfirmationSettings `yaml:"confirmation" json:"confirmation"`
	// CEL bounds the work of the policy's CEL expressions.
	CEL CELSettings `yaml:"cel" json:"cel"`
}

// CELSettings bound the work of CEL expressions (docs/policy.md, "Cost limits").
type CELSettings struct {
	// CostLimit caps the cost, in cel-go cost units, of one evaluation of one expression
	// (default 10,000,000). An expression that reaches it is stopped and its rule fails; at load,
	// an expression whose cost cannot be bounded, or that always costs more, is refused.
	CostLimit uint64 `yaml:"cost_limit" json:"cost_limit"`
}

// IdleSettings configure idle decisions.
type IdleSettings struct {
	// MinIdleMs: idle shorter than this is deferred (default 5000).
	MinIdleMs uint64 `yaml:"min_idle_ms" json:"min_idle_ms"`
	// DeferWhileRunning defers idle work while the session's run is executing (default false).
	DeferWhileRunning bool `yaml:"defer_while_running" json:"defer_while_running"`
}

// IntentSettings configure the keyword intent classifier.
type IntentSettings struct {
	// Keywords adds keywords per intent (locate, understand, ...) to the built-in lists.
	Keywords map[string][]string `yaml:"keywords" json:"keywords"`
	// MinConfidence below which the classifier answers "understand" (default 0.3).
	MinConfidence float64 `yaml:"min_confidence" json:"min_confidence"`
}

// ContextSettings configure context_perception.
type ContextSettings struct {
	// Knowledge is policy-supplied knowledge injected with every allow.
	Knowledge []string `yaml:"knowledge" json:"knowledge"`
	// MaxFacts caps facts taken from session memory (default 10).
	MaxFacts int `yaml:"max_facts" json:"max_facts"`
	// BroadPaths are location paths considered too broad (default ".", "/", "*", "**"); a target
	// on one of them is answered with refine.
	BroadPaths []string `yaml:"broad_paths" json:"broad_paths"`
}

// MemorySettings configure memory_recall.
type MemorySettings struct {
	// MaxResults caps recalled facts whatever the request asks (default 20).
	MaxResults int `yaml:"max_results" json:"max_results"`
}

// PlanningSettings configure planning.
type PlanningSettings struct {
	// Preferred strategies in order; the first offered one is selected (default [step_by_step]).
	Preferred []string `yaml:"preferred" json:"preferred"`
}

// ReasoningSettings configure reasoning.
type ReasoningSettings struct {
	// Hints added to every allow.
	Hints []string `yaml:"hints" json:"hints"`
}

// RateLimitSettings configure rate_limit.
type RateLimitSettings struct {
	// Multiplier applied to retry_after_ms (default 2).
	Multiplier float64 `yaml:"multiplier" json:"multiplier"`
	// MaxBackoffMs caps the computed delay (default 60000).
	MaxBackoffMs uint64 `yaml:"max_backoff_ms" json:"max_backoff_ms"`
	// MinBackoffMs is the smallest delay (default 100).
	MinBackoffMs uint64 `yaml:"min_backoff_ms" json:"min_backoff_ms"`
}

// ConfirmationSettings configure confirmation.
type ConfirmationSettings struct {
	// Default answers per confirmation type wire name (safety_confirm, user_confirm, cost_confirm,
	// or a custom name): approve, reject or escalate. Built-in: safety_confirm -> escalate,
	// everything else -> escalate too (a server never approves on its own unless told to).
	Default map[string]string `yaml:"default" json:"default"`
}
