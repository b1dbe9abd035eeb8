package policy

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/mergepatch"
)

// errNoEvent is reported when Evaluate is called without an event.
var errNoEvent = errors.New("input has no event")

// Evaluate is EvaluateContext without a deadline: only the cost limit bounds it.
func (p *Policy) Evaluate(in Input) Result {
	return p.EvaluateContext(context.Background(), in)
}

// EvaluateContext decides one input: it runs the rules that apply to the event's type in file
// order, then combines the effects of the matching enforce rules and narrows them to what the
// caller can express (see the package documentation for the exact rules). It never panics: a
// failure inside a rule is recorded in Result.Errors against that rule, which then counts as not
// matched, and a failure outside any rule gives a Result with no effects and an Errors entry
// without a rule id. An expression that reaches the cost limit fails its rule with ErrCostLimit.
// When ctx ends, evaluation stops: the Result has no effects and one error, wrapping ErrDeadline,
// against the rule that was running or next to run, with DryRun unset even for a dry-run rule,
// because the rules after it did not run. Whether errors make the decision fail closed is the
// caller's choice.
func (p *Policy) EvaluateContext(ctx context.Context, in Input) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{
				Verdict: ahpv1.Verdict_VERDICT_ALLOW,
				Errors:  []RuleError{{Err: fmt.Errorf("internal error: %v", r)}},
			}
		}
	}()
	if in.Event == nil {
		return Result{Verdict: ahpv1.Verdict_VERDICT_ALLOW, Errors: []RuleError{{Err: errNoEvent}}}
	}
	ev := in.Event
	rules := p.anyType
	if t := int(ev.GetType()); t >= 0 && t < len(p.byType) && p.byType[t] != nil {
		rules = p.byType[t]
	}
	act := newActivation(ctx, &in, p.adapter)
	done := ctx.Done()
	agent := agentOf(&in)
	c := combiner{caps: capsOf(in.Capabilities), keep: p.approvals, draftTargets: acceptsDraftTargets(in.Event)}
	// Without approval rules: what the caller receives once a person approves (only built when
	// one matches).
	var others *combiner
	var approvals []candidate
	// input is the tool input as changed so far by enforce modify rules.
	input := ev.GetTool().GetInput()

	for _, r := range rules {
		if !r.matchesStatic(ev, agent) {
			continue
		}
		var m match
		var err error
		select {
		case <-done:
			err = evalError(ctx, nil)
		default:
			m, err = r.evaluate(act, input)
		}
		if errors.Is(err, ErrDeadline) {
			return Result{
				Verdict: ahpv1.Verdict_VERDICT_ALLOW,
				Errors:  append(res.Errors, RuleError{RuleID: r.info.ID, Err: err}),
			}
		}
		if err != nil {
			res.Errors = append(res.Errors, RuleError{RuleID: r.info.ID, DryRun: r.dryRun, Err: err})
			continue
		}
		if !m.matched {
			continue
		}
		res.MatchedRuleIDs = append(res.MatchedRuleIDs, r.info.ID)
		switch {
		case r.typed != nil && r.dryRun:
			res.TypedDryRuns = append(res.TypedDryRuns, r.typedAnswer())
		case r.typed != nil:
			if res.Typed == nil {
				res.Typed = r.typedAnswer()
			}
		case m.effect == nil:
			// A message whose text expression gave "": nothing to show.
		case r.dryRun:
			res.DryRuns = append(res.DryRuns, &ahpv1.DryRun{RuleId: r.info.ID, WouldBe: cloneModify(m.effect)})
		default:
			if m.input != nil {
				input = m.input
			}
			if r.approval != nil && others == nil {
				// The rules before this one, replayed without it: none was an approval rule.
				others = &combiner{caps: c.caps, draftTargets: c.draftTargets}
				for _, prev := range c.added {
					others.add(prev.rule, prev.effect, prev.input)
				}
			}
			c.add(r, m.effect, input)
			switch {
			case r.approval != nil:
				approvals = append(approvals, candidate{rule: r, effect: m.effect})
			case others != nil:
				others.add(r, m.effect, input)
			}
		}
	}
	c.finish()
	res.Messages, res.Fallbacks, res.Effects, res.Verdict = c.res.Messages, c.res.Fallbacks, c.res.Effects, c.res.Verdict
	if len(approvals) > 0 {
		others.finish()
		// A person can only lift what the approval rules say: when the other rules deny, ask
		// or escalate anyway, there is nothing to approve and the decision stays as it is.
		if VerdictRank(others.res.Verdict) < VerdictRank(ahpv1.Verdict_VERDICT_ASK) {
			res.Approval = approvalOf(approvals, &others.res)
		}
	}
	return res
}

// agentOf is the agent a rule's match.agents sees: the event's session agent, else the Harness
// envelope's agent id, else the one session memory last saw.
func agentOf(in *Input) string {
	if id := in.Event.GetSession().GetAgent().GetId(); id != "" {
		return id
	}
	if id := in.Event.GetHarness().GetAgentId(); id != "" {
		return id
	}
	if in.Session != nil {
		return in.Session.AgentID
	}
	return ""
}

func (r *rule) matchesStatic(ev *ahpv1.Event, agent string) bool {
	if r.kinds != 0 && r.kinds&(1<<uint(ev.GetTool().GetKind())) == 0 {
		return false
	}
	return r.names.match(ev.GetTool().GetName()) &&
		r.sources.match(ev.GetSource()) &&
		r.sessions.match(ev.GetSession().GetId()) &&
		r.agents.match(agent)
}

// match is the outcome of one rule.
type match struct {
	matched bool
	effect  *ahpv1.Effect    // nil for typed rules and empty messages
	input   *structpb.Struct // the changed input, for modify rules
}

// evaluate runs the rule's condition and builds its effect. A panic (from CEL or from this
// package) becomes an error for this rule only.
func (r *rule) evaluate(act *activation, input *structpb.Struct) (m match, err error) {
	defer func() {
		if x := recover(); x != nil {
			m, err = match{}, fmt.Errorf("internal error: %v", x)
		}
	}()
	if r.when != nil {
		ok, err := evalBool(act.ctx, r.when, act)
		if err != nil {
			return match{}, fmt.Errorf("when: %w", err)
		}
		if !ok {
			return match{}, nil
		}
	}
	if r.typed != nil {
		return match{matched: true}, nil
	}
	effect, newInput, err := r.buildEffect(act, input)
	if err != nil {
		return match{}, err
	}
	return match{matched: true, effect: effect, input: newInput}, nil
}

func (r *rule) typedAnswer() *TypedAnswer {
	t := *r.typed
	t.Hints = slices.Clone(t.Hints)
	t.Facts = slices.Clone(t.Facts)
	t.Knowledge = slices.Clone(t.Knowledge)
	return &t
}

// buildEffect builds the canonical effect of a matched rule; for modify it also returns the input
// as the rule changes it.
func (r *rule) buildEffect(act *activation, input *structpb.Struct) (*ahpv1.Effect, *structpb.Struct, error) {
	reason := r.reason
	if r.reasonExpr != nil {
		s, err := evalString(act.ctx, r.reasonExpr, act)
		if err != nil {
			if r.effect == ahpv1.EffectKind_EFFECT_KIND_MESSAGE {
				return nil, nil, fmt.Errorf("text_expr: %w", err)
			}
			return nil, nil, fmt.Errorf("reason_expr: %w", err)
		}
		reason = s
	}
	e := &ahpv1.Effect{RuleId: r.info.ID}
	if r.buildDraftEffect(e, reason) {
		return e, nil, nil
	}
	switch r.effect {
	case ahpv1.EffectKind_EFFECT_KIND_DENY:
		if reason == "" {
			reason = fmt.Sprintf("denied by policy rule %q", r.info.ID)
		}
		e.Effect = &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason, Code: r.code}}
	case ahpv1.EffectKind_EFFECT_KIND_ALLOW:
		e.Effect = &ahpv1.Effect_Allow{Allow: &ahpv1.AllowEffect{Reason: reason}}
	case ahpv1.EffectKind_EFFECT_KIND_ASK:
		e.Effect = &ahpv1.Effect_Ask{Ask: &ahpv1.AskEffect{Reason: reason}}
	case ahpv1.EffectKind_EFFECT_KIND_DEFER:
		e.Effect = &ahpv1.Effect_Defer{Defer: &ahpv1.DeferEffect{RetryAfterMs: r.retryAfter, Reason: reason}}
	case ahpv1.EffectKind_EFFECT_KIND_ESCALATE:
		e.Effect = &ahpv1.Effect_Escalate{Escalate: &ahpv1.EscalateEffect{Reason: reason, Target: r.target}}
	case ahpv1.EffectKind_EFFECT_KIND_MESSAGE:
		if reason == "" {
			return nil, nil, nil
		}
		e.Effect = &ahpv1.Effect_Message{Message: &ahpv1.MessageEffect{Text: reason}}
	case ahpv1.EffectKind_EFFECT_KIND_MODIFY:
		changed, err := r.modify(act, input)
		if err != nil {
			return nil, nil, err
		}
		e.Effect = &ahpv1.Effect_Modify{Modify: &ahpv1.ModifyEffect{
			Target:    ahpv1.ModifyTarget_MODIFY_TARGET_INPUT,
			Operation: ahpv1.ModifyOperation_MODIFY_OPERATION_REPLACE,
			Value:     structpb.NewStructValue(changed),
			Reason:    reason,
		}}
		return e, changed, nil
	default:
		return nil, nil, fmt.Errorf("effect %s cannot be built", r.effect)
	}
	return e, nil, nil
}

// modify applies the rule's change to input (never in place).
func (r *rule) modify(act *activation, input *structpb.Struct) (*structpb.Struct, error) {
	switch {
	case r.merge != nil:
		return mergepatch.Apply(input, r.merge), nil
	case r.mergeExpr != nil:
		patch, err := evalObject(act.ctx, r.mergeExpr, &inputOverride{parent: act, input: structVal(act.adapter, input)})
		if err != nil {
			return nil, fmt.Errorf("merge_expr: %w", err)
		}
		return mergepatch.Apply(input, patch), nil
	default:
		out, err := evalObject(act.ctx, r.inputExpr, &inputOverride{parent: act, input: structVal(act.adapter, input)})
		if err != nil {
			return nil, fmt.Errorf("modify input: %w", err)
		}
		return out, nil
	}
}

// cloneModify gives dry-run records their own copy of a modify value, which may share parts with
// the event's input.
func cloneModify(e *ahpv1.Effect) *ahpv1.Effect {
	if e.GetModify() != nil {
		return proto.Clone(e).(*ahpv1.Effect)
	}
	return e
}

// ---- CEL evaluation helpers ----

// eval runs x; a guarded expression with a comprehension, under a context that can end, runs with
// ContextEval, so it stops at the deadline (the others are bounded, and the context is checked
// between rules). cel-go checks the context only in comprehensions, so ContextEval would change
// nothing for an expression without one but cost a cancel context and its bookkeeping on each run
// (issue 18: three allocations per guarded regex rule under the server's unary deadline).
//
// A guarded expression whose estimate stays within the limit for requests of the size of this
// one (compiledExpr.fastBelow) runs unguarded, like an expression that is within it at any size.
func (x *compiledExpr) eval(ctx context.Context, act interpreter.Activation) (ref.Val, error) {
	var v ref.Val
	var err error
	switch {
	case x.fast != nil && smallRequest(act, x.fastBelow):
		v, _, err = x.fast.Eval(act)
	case !x.guarded || !x.folds || ctx.Done() == nil:
		v, _, err = x.prg.Eval(act)
	default:
		v, _, err = x.prg.ContextEval(ctx, act)
	}
	if err != nil {
		return nil, evalError(ctx, err)
	}
	return v, nil
}

// smallRequest reports whether the evaluation's request is known to be small enough for below:
// its encoding at most a third of it, as the policy shows some encoded values as longer text (bytes
// as base64, 64-bit integers as decimal strings: at most about twice their encoding). Modify
// expressions see a changed input (inputOverride), which may be larger: they are never taken as
// small.
func smallRequest(act interpreter.Activation, below uint64) bool {
	a, ok := act.(*activation)
	return ok && a.in.RequestBytes > 0 && uint64(a.in.RequestBytes)*3 <= below
}

func evalBool(ctx context.Context, x *compiledExpr, act interpreter.Activation) (bool, error) {
	v, err := x.eval(ctx, act)
	if err != nil {
		return false, err
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("gave %s, want bool", typeName(v))
	}
	return bool(b), nil
}

func evalString(ctx context.Context, x *compiledExpr, act interpreter.Activation) (string, error) {
	v, err := x.eval(ctx, act)
	if err != nil {
		return "", err
	}
	s, ok := v.(types.String)
	if !ok {
		return "", fmt.Errorf("gave %s, want string", typeName(v))
	}
	return string(s), nil
}

var structType = reflect.TypeFor[*structpb.Struct]()

func evalObject(ctx context.Context, x *compiledExpr, act interpreter.Activation) (*structpb.Struct, error) {
	v, err := x.eval(ctx, act)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(traits.Mapper); !ok {
		return nil, fmt.Errorf("gave %s, want map", typeName(v))
	}
	native, err := v.ConvertToNative(structType)
	if err != nil {
		return nil, err
	}
	return native.(*structpb.Struct), nil
}

func typeName(v ref.Val) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().TypeName()
}
