// Package core is the transport-free decision core of ahp-server. It knows canonical ahp.v1
// events and decisions, the policy engine, the typed deciders, session memory, idempotency and the
// watch hub — and nothing of HTTP, Connect, JSON-RPC or dialects. internal/service adapts it to
// Connect; tests drive it directly.
//
// Validation: the service layer has checked every request against the ahp.v1 schema
// (protovalidate) before it reaches the core, which checks only what no schema can state: an
// event type's class (interceptable, observable, batchable, typed), that the body agrees with the
// type and that a typed event has one, and the configured Harness limits (depth, batch size) and
// protocol version. Of the schema rules it keeps the two it cannot work without, whoever calls
// it: an event at all, and an event id (the idempotency key).
//
// Panics: a Policy must not panic (*policy.Policy records a rule that fails, panics included, in
// Result.Errors, and the core fails closed on those); a Policy that panics anyway fails only that
// call with CodeInternal, and in a batch only that entry, which becomes a labelled block. Any
// other panic below a handler is the server's to catch, once per call path: connect's recover over
// HTTP, server.Local's in-process, both an Internal error for that call.
package core

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/hub"
	"github.com/ahp-gateway/ahp/internal/idempotency"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/ahp-gateway/ahp/internal/session"
	"github.com/google/uuid"
)

// Policy is a compiled policy snapshot; *policy.Policy implements it.
type Policy interface {
	// EvaluateContext decides one input, stopping when ctx ends; it must not panic (the core
	// recovers if it does).
	EvaluateContext(context.Context, policy.Input) policy.Result
	// Settings configure the typed deciders.
	Settings() policy.Settings
}

// policyIdentity is what a Policy may say about itself, for every decision to record which
// policy made it; *policy.Policy does.
type policyIdentity interface {
	Digest() string
	Revision() uint64
}

// TypedDecider fills the typed answer of a typed event; typed.Decide implements it.
type TypedDecider func(d *ahpv1.Decision, ev *ahpv1.Event, res policy.Result, view *policy.SessionView, s policy.Settings, now time.Time) error

// Recorder writes every decision and observation to durable storage (the audit log). When it is
// required and a write fails, decisions fail closed and observations are refused, so nothing is
// decided or accepted without a record.
type Recorder interface {
	// RecordDecision records a decision about ev.
	RecordDecision(ev *ahpv1.Event, d *ahpv1.Decision, at time.Time) error
	// RecordObservation records an observed event.
	RecordObservation(ev *ahpv1.Event, at time.Time) error
	// Required reports whether a failed write must stop the decision.
	Required() bool
}

// Observer is told about every decision and observation, for metrics.
type Observer interface {
	// Decided is called once per decision given (replays included).
	Decided(ev *ahpv1.Event, d *ahpv1.Decision)
	// Observed is called once per accepted (non-duplicate) observation.
	Observed(ev *ahpv1.Event)
}

// HarnessLimits are the Agent Harness Protocol limits the core enforces and advertises.
type HarnessLimits struct {
	// TimeoutMs is advertised in the handshake (default 10000).
	TimeoutMs uint64
	// BatchSize is the maximum events per batch (default 100).
	BatchSize uint64
	// MaxDepth is the maximum event depth (default 10).
	MaxDepth uint32
}

// Config wires the core. Policy and Typed are required; the rest have in-process defaults.
type Config struct {
	// Policy returns the current policy snapshot (hot reload swaps what it returns).
	Policy func() Policy
	// Typed builds typed decisions.
	Typed TypedDecider
	// Sessions is session memory (default: in-process).
	Sessions session.Store
	// Idempotency remembers decisions and observations (default: in-process, 100k entries, 10 min).
	Idempotency idempotency.Store
	// Hub receives every decision and observation for Watch (default: none).
	Hub hub.Publisher
	// Unavailable, when set, is asked before each decision and observation: a non-empty reason
	// (the shared cluster store is down and the cluster fails closed) makes decisions labelled
	// synthetic denials and observations refused (default: never).
	Unavailable func() string
	// Recorder is the audit log (default: none).
	Recorder Recorder
	// Observer receives metrics (default: none).
	Observer Observer
	// Approvals holds calls whose policy result asks a person (default: none — such calls get
	// what the policy says without approvals: the ask, escalate or its fallback).
	Approvals Approvals
	// ApprovalHint says where to decide approval id, for callers that cannot wait (default: the
	// ahp-server approvals command).
	ApprovalHint func(id string) string
	// ApprovalRetryAfter is the longest retry_after_ms suggested to a caller that cannot wait
	// (default 5s).
	ApprovalRetryAfter time.Duration
	// Limits are the Harness limits.
	Limits HarnessLimits
	// ServerName and Version describe the server in handshakes and capabilities.
	ServerName, Version string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewID makes decision ids (default UUIDv7).
	NewID func() string
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
	// Caller names the authenticated principal of a call ("" when unauthenticated; default: none
	// is). Session memory, agent facts and the idempotency store are keyed by it.
	Caller func(context.Context) string
	// Redactor masks secrets in typed answers (memory recall, context perception, …) before they
	// leave (default redact.New with defaults).
	Redactor *redact.Redactor
}

// Core decides events. It is safe for concurrent use.
type Core struct {
	cfg Config
}

// New returns a core; it panics if Policy or Typed is missing, which is a wiring bug.
func New(cfg Config) *Core {
	if cfg.Policy == nil || cfg.Typed == nil {
		panic("core: Config.Policy and Config.Typed are required")
	}
	if cfg.Sessions == nil {
		cfg.Sessions = session.NewMemory(session.Options{})
	}
	if cfg.Idempotency == nil {
		cfg.Idempotency = idempotency.NewMemory(100_000, 10*time.Minute)
	}
	if cfg.Hub == nil {
		cfg.Hub = noHub{}
	}
	if cfg.Limits.TimeoutMs == 0 {
		cfg.Limits.TimeoutMs = 10_000
	}
	if cfg.Limits.BatchSize == 0 {
		cfg.Limits.BatchSize = 100
	}
	if cfg.Limits.MaxDepth == 0 {
		cfg.Limits.MaxDepth = 10
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "ahp-server"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = newUUIDv7
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ApprovalHint == nil {
		cfg.ApprovalHint = func(id string) string { return "decide with: ahp-server approvals approve " + id }
	}
	if cfg.ApprovalRetryAfter <= 0 {
		cfg.ApprovalRetryAfter = 5 * time.Second
	}
	if cfg.Redactor == nil {
		r, err := redact.New(redact.Config{})
		if err != nil {
			panic("core: the default redactor: " + err.Error()) // the defaults always compile
		}
		cfg.Redactor = r
	}
	return &Core{cfg: cfg}
}

type noHub struct{}

func (noHub) Publish(hub.Item) {}

// Limits returns the Harness limits in force.
func (c *Core) Limits() HarnessLimits { return c.cfg.Limits }

// Intercept decides one blocking event. A retried (source, event id) gets the remembered decision,
// marked replayed, without evaluating again.
func (c *Core) Intercept(ctx context.Context, ev *ahpv1.Event, caps *ahpv1.Capabilities) (*ahpv1.Decision, error) {
	if err := c.checkEvent("event", ev, interceptable, "is observe-only; send it with ObservationService.Observe"); err != nil {
		return nil, err
	}
	return c.decide(ctx, ev, caps, true)
}

// Typed decides a Harness typed event of the given type (the event's type may be left unspecified
// when its payload says it).
func (c *Core) Typed(ctx context.Context, ev *ahpv1.Event, want ahpv1.EventType) (*ahpv1.Decision, error) {
	if ev != nil && ev.GetType() == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED {
		ev.Type = want
	}
	if ev.GetType() != want {
		return nil, invalid("event.type", "must be %s for this call, got %s", names.EventTypeName(want), typeName(ev.GetType()))
	}
	if err := c.checkEvent("event", ev, interceptable, ""); err != nil {
		return nil, err
	}
	return c.decide(ctx, ev, nil, true)
}

// Batch decides generic-decision events in order with the Harness ahp/batch rules: the size limit,
// the depth limit and the batchable check apply to the whole batch before anything is evaluated
// (so an invalid batch has no side effects), and an evaluation failure becomes a block for that
// event only (fail closed).
func (c *Core) Batch(ctx context.Context, events []*ahpv1.Event, caps *ahpv1.Capabilities) ([]*ahpv1.Decision, error) {
	if n := uint64(len(events)); n > c.cfg.Limits.BatchSize {
		return nil, invalid("events", "Batch size %d exceeds configured limit %d", n, c.cfg.Limits.BatchSize)
	}
	for i, ev := range events {
		field := fmt.Sprintf("events[%d]", i)
		if err := c.checkEvent(field, ev, func(ahpv1.EventType) bool { return true }, ""); err != nil {
			return nil, err
		}
		if !batchable(ev.GetType()) {
			return nil, invalid(field+".type", "Event type %s cannot be batched because it does not return a generic Decision", names.EventTypeName(ev.GetType()))
		}
	}
	out := make([]*ahpv1.Decision, 0, len(events))
	for _, ev := range events {
		d, err := c.decide(ctx, ev, caps, true)
		if err != nil {
			d = c.synthetic(ev, "Handler error: "+err.Error(), "dev.ahpgateway.batch.handler_error")
		}
		out = append(out, d)
	}
	return out, nil
}

// Observe records a fire-and-forget event. A repeated (source, event id) is reported as a
// duplicate and not counted again.
func (c *Core) Observe(ctx context.Context, ev *ahpv1.Event) (duplicate bool, err error) {
	if err := c.checkEvent("event", ev, observable, "must be sent for a decision, not observed"); err != nil {
		return false, err
	}
	if why := c.unavailable(); why != "" {
		return false, &Error{Code: CodeUnavailable, Reason: why + "; the event was not recorded, retry later"}
	}
	principal := c.caller(ctx)
	key, size := idempotencyKey(principal, ev)
	if !c.cfg.Idempotency.FirstObservation(key) {
		return true, nil
	}
	now := c.cfg.Now()
	if r := c.cfg.Recorder; r != nil {
		if err := r.RecordObservation(ev, now); err != nil {
			c.cfg.Logger.Error("audit write failed for an observation", "event_id", ev.GetId(), "error", err)
			if r.Required() {
				// Not accepted: let a retry through instead of calling it a duplicate.
				c.cfg.Idempotency.ForgetObservation(key)
				return false, &Error{Code: CodeUnavailable, Reason: "audit log unavailable; the event was not recorded, retry later"}
			}
		}
	}
	c.cfg.Sessions.RecordEvent(scopedEvent(principal, ev), now)
	if o := c.cfg.Observer; o != nil {
		o.Observed(ev)
	}
	c.cfg.Hub.Publish(hub.Item{Event: ev, Time: now, EventBytes: max(size, 0)})
	return false, nil
}

// checkEvent validates what protovalidate cannot: the type's class, the payload presence and the
// Harness depth limit, plus the event and its id, without which the core cannot key it.
func (c *Core) checkEvent(field string, ev *ahpv1.Event, allowed func(ahpv1.EventType) bool, why string) error {
	if ev == nil {
		return invalid(field, "required")
	}
	if ev.GetType() == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED {
		ev.Type = bodyType(ev)
	}
	t := ev.GetType()
	if classOf(t) == classUnknown {
		return invalid(field+".type", "unknown event type %d", int32(t))
	}
	if !allowed(t) {
		return invalid(field+".type", "%s %s", names.EventTypeName(t), why)
	}
	if bt := bodyType(ev); bt != ahpv1.EventType_EVENT_TYPE_UNSPECIFIED && bt != t {
		return invalid(field+".body", "carries a %s payload but the event type is %s", names.EventTypeName(bt), names.EventTypeName(t))
	}
	if needsBody(t) && bodyType(ev) == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED {
		return invalid(field+"."+bodyField(t), "required for %s events", names.EventTypeName(t))
	}
	if ev.GetId() == "" {
		return invalid(field+".id", "required")
	}
	if bad := undefinedEnum(ev.ProtoReflect(), field); bad != "" {
		return invalid(bad, "unknown enum value")
	}
	if h := ev.GetHarness(); h != nil && h.GetDepth() > c.cfg.Limits.MaxDepth {
		return invalid(field+".harness.depth", "Event depth %d exceeds configured max depth %d", h.GetDepth(), c.cfg.Limits.MaxDepth)
	}
	return nil
}

// bodyField names the oneof field of a typed or contract payload ("rate_limit").
func bodyField(t ahpv1.EventType) string {
	return strings.ReplaceAll(names.EventTypeName(t), ".", "_")
}

func typeName(t ahpv1.EventType) string {
	if n := names.EventTypeName(t); n != "" {
		return n
	}
	return "unspecified"
}

// decide evaluates one validated event, or replays the remembered decision for it. record=false
// is for hypothetical events (queries): they are decided and published but not remembered as
// something the agent did.
func (c *Core) decide(ctx context.Context, ev *ahpv1.Event, caps *ahpv1.Capabilities, record bool) (*ahpv1.Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if why := c.unavailable(); why != "" {
		d := c.synthetic(ev, why, "dev.ahpgateway.cluster.unavailable")
		if classOf(ev.GetType()) == classTyped {
			res := policy.Result{Effects: d.Effects, Verdict: ahpv1.Verdict_VERDICT_DENY}
			view := &policy.SessionView{SessionID: ev.GetSession().GetId(), AgentID: agentID(ev)}
			if err := c.cfg.Typed(d, ev, res, view, c.cfg.Policy().Settings(), c.cfg.Now()); err != nil {
				return nil, err
			}
		}
		if o := c.cfg.Observer; o != nil {
			o.Decided(ev, d)
		}
		return d, nil
	}
	principal := c.caller(ctx)
	key, size := idempotencyKey(principal, ev)
	if prev, ok := c.cfg.Idempotency.Decision(key); ok {
		replay := cloneDecision(prev)
		replay.Replayed = true
		if o := c.cfg.Observer; o != nil {
			o.Decided(ev, replay)
		}
		return replay, nil
	}
	start := time.Now()
	now := c.cfg.Now()
	view := c.view(principal, ev)
	pol := c.cfg.Policy()
	caps = effectiveCapabilities(ev, caps)

	res, err := evaluate(ctx, pol, policy.Input{Event: ev, Capabilities: caps, Session: view, Now: now, RequestBytes: size})
	if err != nil {
		c.cfg.Logger.Error("policy evaluation failed", "event_id", ev.GetId(), "error", err)
		return nil, &Error{Code: CodeInternal, Reason: "policy evaluation failed: " + err.Error()}
	}
	d := &ahpv1.Decision{
		DecisionId:     c.cfg.NewID(),
		Verdict:        res.Verdict,
		Effects:        res.Effects,
		MatchedRuleIds: res.MatchedRuleIDs,
		Fallbacks:      res.Fallbacks,
		DryRuns:        res.DryRuns,
	}
	if id, ok := pol.(policyIdentity); ok {
		d.PolicyDigest, d.PolicyRevision = id.Digest(), id.Revision()
	}
	if failed, why := enforceErrors(res); failed != "" {
		c.cfg.Logger.Warn("policy rule failed to evaluate; failing closed", "event_id", ev.GetId(), "rule_id", failed, "why", why)
		d.Effects = []*ahpv1.Effect{denyEffect(fmt.Sprintf("policy rule %q could not be evaluated%s; failing closed", failed, why), "dev.ahpgateway.policy.evaluation_error", failed)}
		d.Verdict = ahpv1.Verdict_VERDICT_DENY
		d.Synthetic = true
	}
	remember := record
	if record && res.Approval != nil && c.cfg.Approvals != nil && !d.Synthetic {
		d.LatencyUs = uint64(time.Since(start).Microseconds()) // evaluation only, not the hold
		keep, err := c.awaitApproval(ctx, ev, caps, &res, d)
		if err != nil {
			return nil, err
		}
		remember = remember && keep
		now = c.cfg.Now() // a held call is recorded when it is answered
	}
	if d.Verdict == ahpv1.Verdict_VERDICT_UNSPECIFIED {
		d.Verdict = ahpv1.Verdict_VERDICT_ALLOW
	}
	if classOf(ev.GetType()) == classTyped {
		if err := c.cfg.Typed(d, ev, res, view, pol.Settings(), now); err != nil {
			return nil, err
		}
		// A typed answer can carry remembered text (facts, summaries): never a secret.
		d, _ = c.cfg.Redactor.Decision(d)
	}
	if d.GetApprovalId() == "" {
		d.LatencyUs = uint64(time.Since(start).Microseconds())
	}

	if remember {
		// Claimed before anything records it: when the same event reached another replica at
		// the same moment, the first decision remembered stands and this one is dropped unseen,
		// so the event has one decision id (an answer that must not be remembered —
		// one naming an approval to a caller that cannot wait — is not claimed). The store keeps
		// what d says now, not d (see idempotency.Store), so a caller changing its answer cannot
		// change what a retry replays.
		if stands, stored := c.cfg.Idempotency.RememberDecision(key, d); !stored {
			replay := cloneDecision(stands)
			replay.Replayed = true
			if o := c.cfg.Observer; o != nil {
				o.Decided(ev, replay)
			}
			return replay, nil
		}
	}
	if r := c.cfg.Recorder; r != nil {
		if err := r.RecordDecision(ev, d, now); err != nil {
			c.cfg.Logger.Error("audit write failed for a decision", "event_id", ev.GetId(), "decision_id", d.GetDecisionId(), "error", err)
			if r.Required() {
				if remember {
					c.cfg.Idempotency.ForgetDecision(key) // a retry after the audit recovers is decided afresh
				}
				if err := c.failClosedForAudit(d, ev, view, pol.Settings(), now); err != nil {
					return nil, err
				}
			}
		}
	}
	if record {
		scoped := scopedEvent(principal, ev)
		if both, ok := c.cfg.Sessions.(decidedRecorder); ok {
			both.RecordDecided(scoped, now, d)
		} else {
			c.cfg.Sessions.RecordEvent(scoped, now)
			c.cfg.Sessions.RecordDecision(scoped, d)
		}
	}
	if o := c.cfg.Observer; o != nil {
		o.Decided(ev, d)
	}
	c.cfg.Hub.Publish(hub.Item{Event: ev, Decision: d, Time: now, EventBytes: max(size, 0)})
	return d, nil
}

// decidedRecorder is a session store that takes a decided event and its verdict in one call,
// so that a store writing elsewhere (cluster/sessionkv) stores them in one write.
type decidedRecorder interface {
	RecordDecided(ev *ahpv1.Event, at time.Time, d *ahpv1.Decision)
}

func (c *Core) unavailable() string {
	if c.cfg.Unavailable == nil {
		return ""
	}
	return c.cfg.Unavailable()
}

// failClosedForAudit turns d into a labelled synthetic denial because the required audit log could
// not record it; a typed event gets its own refusal shape.
func (c *Core) failClosedForAudit(d *ahpv1.Decision, ev *ahpv1.Event, view *policy.SessionView, s policy.Settings, now time.Time) error {
	deny := denyEffect("audit log unavailable; failing closed", "dev.ahpgateway.audit.unavailable", "")
	d.Effects = []*ahpv1.Effect{deny}
	d.Verdict = ahpv1.Verdict_VERDICT_DENY
	d.Synthetic = true
	d.Fallbacks, d.DryRuns = nil, nil
	if classOf(ev.GetType()) == classTyped {
		res := policy.Result{Effects: d.Effects, Verdict: ahpv1.Verdict_VERDICT_DENY}
		return c.cfg.Typed(d, ev, res, view, s, now)
	}
	return nil
}

// evaluate runs the policy, turning a panic into an error for this call only.
func evaluate(ctx context.Context, p Policy, in policy.Input) (res policy.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return p.EvaluateContext(ctx, in), nil
}

// synthetic is a system-made denial, labelled so nobody mistakes it for a policy's own.
func (c *Core) synthetic(ev *ahpv1.Event, reason, code string) *ahpv1.Decision {
	return &ahpv1.Decision{
		DecisionId: c.cfg.NewID(),
		Verdict:    ahpv1.Verdict_VERDICT_DENY,
		Effects:    []*ahpv1.Effect{denyEffect(reason, code, "")},
		Synthetic:  true,
	}
}

func denyEffect(reason, code, ruleID string) *ahpv1.Effect {
	return &ahpv1.Effect{RuleId: ruleID, Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason, Code: code}}}
}

func agentID(ev *ahpv1.Event) string {
	if id := ev.GetHarness().GetAgentId(); id != "" {
		return id
	}
	return ev.GetSession().GetAgent().GetId()
}

// effectiveCapabilities fills in the dialect default when the caller advertised nothing: a Hooks
// v0.1 caller can act on deny only; a Harness caller on what its generic Decision can say.
func effectiveCapabilities(ev *ahpv1.Event, caps *ahpv1.Capabilities) *ahpv1.Capabilities {
	if caps != nil && (len(caps.GetEffects()) > 0 || len(caps.GetExtensionEffects()) > 0) {
		return caps
	}
	switch ev.GetOrigin().GetDialect() {
	case ahpv1.Dialect_DIALECT_HOOKS:
		return hooksCapabilities
	case ahpv1.Dialect_DIALECT_HARNESS:
		return harnessCapabilities
	}
	return nil // the typed API: every canonical effect
}

var (
	hooksCapabilities   = &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{ahpv1.EffectKind_EFFECT_KIND_DENY}}
	harnessCapabilities = &ahpv1.Capabilities{Effects: []ahpv1.EffectKind{
		ahpv1.EffectKind_EFFECT_KIND_DENY, ahpv1.EffectKind_EFFECT_KIND_ALLOW, ahpv1.EffectKind_EFFECT_KIND_ASK,
		ahpv1.EffectKind_EFFECT_KIND_MODIFY, ahpv1.EffectKind_EFFECT_KIND_DEFER, ahpv1.EffectKind_EFFECT_KIND_ESCALATE,
		ahpv1.EffectKind_EFFECT_KIND_MESSAGE,
	}}
)

// newUUIDv7 returns a fresh version 7 UUID (time-ordered, increasing within the process) as text.
func newUUIDv7() string {
	id, err := uuid.NewV7()
	if err != nil { // only when the system's random source fails
		return uuid.NewString()
	}
	return id.String()
}
