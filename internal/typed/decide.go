package typed

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// Metadata keys Decide adds to typed decisions whose variant carries metadata. They use the
// project's reverse-DNS namespace (docs/compatibility.md). Built-in answers carry neither, so their
// wire form matches the reference server's.
const (
	// RuleIDKey names the rule whose answer produced the decision.
	RuleIDKey = "dev.ahpgateway/rule_id"
	// NoteKey explains why part of a rule's typed answer was not used.
	NoteKey = "dev.ahpgateway/note"
)

// Errors returned by Decide, wrapped with the offending field; test them with errors.Is.
var (
	// ErrNotTyped: the event is not one of the eight typed events.
	ErrNotTyped = errors.New("not a typed event")
	// ErrMissingPayload: the event's body does not hold the payload its type needs.
	ErrMissingPayload = errors.New("typed payload missing")
)

// Decide fills d.Typed (the typed oneof of d) for a typed event and sets d.Verdict to match. ev.Body
// must hold the payload of ev.Type. It returns an error naming the field only for an event that is
// not typed or lacks its payload, and for a nil d.
//
// Call it after copying res into d (effects, matched rules, fallbacks): when a policy verdict cannot
// be expressed by the event type (an ask on planning, a defer on reasoning, ...) Decide answers with
// the type's refusal, appends a Fallback to d.Fallbacks and marks d synthetic. The precedence of
// policy verdict, rule answer and built-in behaviour is described in the package documentation.
func Decide(d *ahpv1.Decision, ev *ahpv1.Event, res policy.Result, view *policy.SessionView, s policy.Settings, now time.Time) error {
	if d == nil {
		return errors.New("typed: decision: nil")
	}
	k, err := kindOf(ev)
	if err != nil {
		return err
	}
	if view == nil {
		view = &policy.SessionView{}
	}
	in := &input{ev: ev, view: view, s: withDefaults(s), now: now}

	if k.fromPolicy(d, in, strongest(res)) {
		return nil
	}
	ta, note := k.accept(ev.GetType(), res.Typed)
	var tr trace
	if verb, ok := refusalVerbs[action(ta)]; ok {
		k.refuse(d, reasonOf(ta, verb))
		tr.ruleID = ta.RuleID
	} else {
		tr = k.decide(d, in, ta)
	}
	if note != "" {
		tr.notes = append([]string{note}, tr.notes...)
	}
	d.Verdict = verdictOf(d)
	annotate(d, tr)
	return nil
}

// IsTyped reports whether t is one of the eight Harness typed event types.
func IsTyped(t ahpv1.EventType) bool {
	_, ok := kinds[t]
	return ok
}

// Actions lists the rule actions (policy.TypedAnswer.Action) event type t accepts, in the order of
// its decision variants; nil when t is not typed. They are policy.TypedActions: the actions the
// policy compiler lets a typed rule give.
func Actions(t ahpv1.EventType) []string { return policy.TypedActions(t) }

// input is what the deciders read; s has defaults applied and view is never nil.
type input struct {
	ev   *ahpv1.Event
	view *policy.SessionView
	s    policy.Settings
	now  time.Time
}

// trace says where an answer came from, for the decision's metadata.
type trace struct {
	ruleID string
	notes  []string
}

// kind describes one typed event type.
type kind struct {
	// name is the wire name of the type, also the field name of its payload and decision.
	name string
	// refuse answers with the type's refusal variant.
	refuse func(d *ahpv1.Decision, reason string)
	// escalate hands the decision to a human; nil when the type cannot.
	escalate func(d *ahpv1.Decision)
	// later answers a policy defer with the type's own "not now" variant; nil when it has none.
	later func(d *ahpv1.Decision, in *input, g generic)
	// decide answers from a rule's accepted typed answer (nil when none) and the built-in
	// behaviour.
	decide func(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace
}

// kinds is fixed at init and never changes.
var kinds = map[ahpv1.EventType]*kind{
	ahpv1.EventType_EVENT_TYPE_IDLE:               idleKind,
	ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION:   intentKind,
	ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION: perceptionKind,
	ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL:      memoryKind,
	ahpv1.EventType_EVENT_TYPE_PLANNING:           planningKind,
	ahpv1.EventType_EVENT_TYPE_REASONING:          reasoningKind,
	ahpv1.EventType_EVENT_TYPE_RATE_LIMIT:         rateLimitKind,
	ahpv1.EventType_EVENT_TYPE_CONFIRMATION:       confirmationKind,
}

// kindOf checks that ev is a typed event carrying its payload.
func kindOf(ev *ahpv1.Event) (*kind, error) {
	if ev == nil {
		return nil, fmt.Errorf("typed: event: nil: %w", ErrNotTyped)
	}
	k, ok := kinds[ev.GetType()]
	if !ok {
		return nil, fmt.Errorf("typed: event.type: %s: %w", ev.GetType(), ErrNotTyped)
	}
	if !k.carried(ev) {
		return nil, fmt.Errorf("typed: event.body.%s: %w", k.name, ErrMissingPayload)
	}
	return k, nil
}

// carried reports whether ev's body holds the type's payload: the body field named k.name.
func (k *kind) carried(ev *ahpv1.Event) bool {
	m := ev.ProtoReflect()
	f := m.Descriptor().Fields().ByName(protoreflect.Name(k.name))
	return f != nil && m.Get(f).Message().IsValid()
}

// accept returns the rule's typed answer if event type t accepts its action, else nil and a note.
// An empty action is accepted: it means "the built-in behaviour, with the answer's fields".
func (k *kind) accept(t ahpv1.EventType, ta *policy.TypedAnswer) (*policy.TypedAnswer, string) {
	if ta == nil || ta.Action == "" {
		return ta, ""
	}
	actions := policy.TypedActions(t)
	if slices.Contains(actions, ta.Action) {
		return ta, ""
	}
	return nil, fmt.Sprintf("ignored typed answer %q of rule %s: %s answers %s",
		ta.Action, ta.RuleID, k.name, strings.Join(actions, ", "))
}

// refusalVerbs are the actions that ask for an event type's refusal (block for five types,
// reject for confirmation, skip for rate_limit), with the verb of the reason a rule gives none.
// A rule's refusal always wins, so Decide applies it before the type's decider runs.
var refusalVerbs = map[string]string{"block": "blocked", "reject": "rejected", "skip": "skipped"}

// action is the rule's action, "" when there is no answer.
func action(ta *policy.TypedAnswer) string {
	if ta == nil {
		return ""
	}
	return ta.Action
}

// reasonOf is the rule's reason, or a reason naming the rule when it gave none.
func reasonOf(ta *policy.TypedAnswer, verb string) string {
	switch {
	case ta.Reason != "":
		return ta.Reason
	case ta.RuleID != "":
		return verb + " by rule " + ta.RuleID
	}
	return verb + " by policy"
}

// generic is the strongest generic verdict of a policy result and the effect that carries it.
type generic struct {
	verdict ahpv1.Verdict
	// effect is the first effect with that verdict; nil when only Result.Verdict said so.
	effect *ahpv1.Effect
	reason string
	ruleID string
	// retryAfterMs is the delay of a defer effect.
	retryAfterMs uint64
}

// strongest combines Result.Verdict with the effects. An effect stronger than the summary wins,
// so a deny effect is never lost to an inconsistent summary (fail closed).
func strongest(res policy.Result) generic {
	g := generic{verdict: res.Verdict}
	for _, e := range res.Effects {
		v := policy.EffectVerdict(e)
		s, gs := policy.VerdictRank(v), policy.VerdictRank(g.verdict)
		if s > gs || (s == gs && s >= 0 && g.effect == nil) {
			g = describe(e, v)
		}
	}
	return g
}

func describe(e *ahpv1.Effect, v ahpv1.Verdict) generic {
	g := generic{verdict: v, effect: e, ruleID: e.GetRuleId()}
	g.reason, _ = policy.StopReason(e)
	g.retryAfterMs = e.GetDefer().GetRetryAfterMs()
	return g
}

// fromPolicy applies step 1 of the precedence: a deny, ask/escalate or defer verdict decides. It
// reports whether it answered. Allow and modify have no typed meaning and fall through.
func (k *kind) fromPolicy(d *ahpv1.Decision, in *input, g generic) bool {
	switch g.verdict {
	case ahpv1.Verdict_VERDICT_DENY:
		k.refuse(d, withDetail("denied by policy", g.reason))
		d.Verdict = ahpv1.Verdict_VERDICT_DENY
	case ahpv1.Verdict_VERDICT_ASK, ahpv1.Verdict_VERDICT_ESCALATE:
		if k.escalate != nil {
			k.escalate(d)
			d.Verdict = g.verdict
			break
		}
		k.fallBack(d, g, withDetail("approval required", g.reason), "cannot ask for approval")
	case ahpv1.Verdict_VERDICT_DEFER:
		if k.later != nil {
			k.later(d, in, g)
			d.Verdict = ahpv1.Verdict_VERDICT_DEFER
			break
		}
		k.fallBack(d, g, withDetail("deferred by policy", g.reason)+retrySuffix(g.retryAfterMs), "cannot be deferred")
	default:
		return false
	}
	annotate(d, trace{ruleID: g.ruleID})
	return true
}

// fallBack refuses in place of a verdict the type cannot express, and records it as a fallback to
// deny, as the design requires for any effect a caller cannot express.
func (k *kind) fallBack(d *ahpv1.Decision, g generic, reason, why string) {
	k.refuse(d, reason)
	d.Verdict = ahpv1.Verdict_VERDICT_DENY
	d.Synthetic = true
	wanted := g.effect
	if wanted == nil {
		wanted = &ahpv1.Effect{Effect: &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{}}}
		if g.verdict == ahpv1.Verdict_VERDICT_DEFER {
			wanted = &ahpv1.Effect{Effect: &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{}}}
		}
	} else {
		wanted = proto.CloneOf(wanted)
	}
	d.Fallbacks = append(d.Fallbacks, &ahpv1.Fallback{
		RuleId: g.ruleID,
		Wanted: wanted,
		Sent:   &ahpv1.Effect{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason}}, RuleId: g.ruleID},
		Reason: k.name + " " + why + "; answered with its refusal",
	})
}

// withDetail appends a detail after a colon when there is one.
func withDetail(base, detail string) string {
	if detail == "" {
		return base
	}
	return base + ": " + detail
}

func retrySuffix(ms uint64) string {
	if ms == 0 {
		return ""
	}
	return fmt.Sprintf(" (retry after %dms)", ms)
}

// variantVerdicts is the generic verdict of each typed decision variant, by its field name: what
// the agent was told to do. The eight types share these names.
var variantVerdicts = map[protoreflect.Name]ahpv1.Verdict{
	"allow":    ahpv1.Verdict_VERDICT_ALLOW,
	"approve":  ahpv1.Verdict_VERDICT_ALLOW,
	"block":    ahpv1.Verdict_VERDICT_DENY,
	"skip":     ahpv1.Verdict_VERDICT_DENY,
	"reject":   ahpv1.Verdict_VERDICT_DENY,
	"defer":    ahpv1.Verdict_VERDICT_DEFER,
	"retry":    ahpv1.Verdict_VERDICT_DEFER,
	"queue":    ahpv1.Verdict_VERDICT_DEFER,
	"refine":   ahpv1.Verdict_VERDICT_MODIFY,
	"modify":   ahpv1.Verdict_VERDICT_MODIFY,
	"escalate": ahpv1.Verdict_VERDICT_ESCALATE,
}

// verdictOf is the generic verdict of the typed answer in d (unspecified when d has none).
func verdictOf(d *ahpv1.Decision) ahpv1.Verdict {
	m := d.ProtoReflect()
	f := m.WhichOneof(m.Descriptor().Oneofs().ByName("typed"))
	if f == nil {
		return ahpv1.Verdict_VERDICT_UNSPECIFIED
	}
	m = m.Get(f).Message()
	f = m.WhichOneof(m.Descriptor().Oneofs().ByName("decision"))
	if f == nil {
		return ahpv1.Verdict_VERDICT_UNSPECIFIED
	}
	return variantVerdicts[f.Name()]
}

// setMetadata sets one metadata key on the variant in d, if the variant has a metadata field
// (idle, intent allow, refine, planning modify, queue, skip and every confirmation variant have
// none). Every typed decision is a oneof "typed" of messages with a oneof "decision" of variants,
// so one walk serves the eight types.
func setMetadata(d *ahpv1.Decision, key string, v *structpb.Value) {
	variant, f, ok := metadataField(d)
	if !ok {
		return
	}
	md := variant.Mutable(f).Message().Interface().(*structpb.Struct)
	if md.Fields == nil {
		md.Fields = map[string]*structpb.Value{}
	}
	md.Fields[key] = v
}

// metadataField returns the variant set in d and its metadata field; ok is false when d has no
// typed answer or its variant has no metadata field.
func metadataField(d *ahpv1.Decision) (variant protoreflect.Message, f protoreflect.FieldDescriptor, ok bool) {
	variant, ok = populated(d.ProtoReflect(), "typed")
	if ok {
		variant, ok = populated(variant, "decision")
	}
	if !ok {
		return nil, nil, false
	}
	f = variant.Descriptor().Fields().ByName("metadata")
	return variant, f, f != nil
}

// populated returns the message set in m's oneof of that name; ok is false when none is set.
func populated(m protoreflect.Message, oneof protoreflect.Name) (_ protoreflect.Message, ok bool) {
	f := m.WhichOneof(m.Descriptor().Oneofs().ByName(oneof))
	if f == nil || !m.Get(f).Message().IsValid() {
		return nil, false
	}
	return m.Mutable(f).Message(), true
}

// annotate records the rule and notes of tr in the decision's metadata.
func annotate(d *ahpv1.Decision, tr trace) {
	if tr.ruleID != "" {
		setMetadata(d, RuleIDKey, structpb.NewStringValue(tr.ruleID))
	}
	if len(tr.notes) > 0 {
		setMetadata(d, NoteKey, structpb.NewStringValue(strings.Join(tr.notes, "; ")))
	}
}

// block builds a TypedBlock.
func block(reason string) *ahpv1.TypedBlock { return &ahpv1.TypedBlock{Reason: reason} }

// stringList is an optional list: nil (absent on the wire) when empty.
func stringList(values []string) *ahpv1.StringList {
	if len(values) == 0 {
		return nil
	}
	return &ahpv1.StringList{Values: values}
}

// appendUnique appends the non-empty values not already in dst, keeping order.
func appendUnique(dst []string, values ...string) []string {
	for _, v := range values {
		if v != "" && !slices.Contains(dst, v) {
			dst = append(dst, v)
		}
	}
	return dst
}
