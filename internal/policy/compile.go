package policy

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
)

// Rule modes and fallbacks as written in policy files.
const (
	modeEnforce = "enforce"
	modeDryRun  = "dry-run"

	fallbackDeny     = "deny"
	fallbackNoEffect = "no-effect"
)

// rule is a compiled rule. Everything that can be decided at load is: event types are an index,
// globs are parsed, CEL is checked and planned, static effect parts are built.
type rule struct {
	info  Rule
	index int // position in the file; effects are ordered by it

	onAll bool
	on    []ahpv1.EventType

	kinds    uint64 // bit per ahpv1.ToolKind; 0 = any
	names    globSet
	sources  globSet
	sessions globSet
	agents   globSet

	when *compiledExpr // nil = always

	dryRun       bool
	fallbackDeny bool

	effect ahpv1.EffectKind // UNSPECIFIED for typed rules
	typed  *TypedAnswer

	reason     string
	reasonExpr *compiledExpr
	code       string
	target     string
	retryAfter uint64
	merge      *structpb.Struct
	mergeExpr  *compiledExpr
	inputExpr  *compiledExpr
	approval   *approvalRule // ask and escalate with an `approval:` block
	draft      draftRule     // return, flow, inject and modify of a draft target
}

func (r *rule) appliesTo(t ahpv1.EventType) bool {
	return r.onAll || slices.Contains(r.on, t)
}

// compileRule validates one rule spec and compiles it. The error names the rule and its line.
func compileRule(c *compiler, spec ruleSpec, index, line int) (*rule, error) {
	label := fmt.Sprintf("rule %q", spec.ID)
	if spec.ID == "" {
		label = fmt.Sprintf("rule #%d", index+1)
	}
	if line > 0 {
		label = fmt.Sprintf("line %d: %s", line, label)
	}
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, errors.New(label+": "+fmt.Sprintf(format, args...)))
	}

	r := &rule{index: index}
	r.info = Rule{ID: spec.ID, Description: spec.Description, Line: line}
	switch {
	case spec.ID == "":
		add("id is required")
	case !ruleIDPattern.MatchString(spec.ID):
		add("id must match %s", ruleIDPattern)
	}

	// on
	r.onAll = len(spec.On) == 0
	for _, name := range spec.On {
		t, err := parseEventName(name)
		if err != nil {
			add("on: %v", err)
			continue
		}
		if !slices.Contains(r.on, t) {
			r.on = append(r.on, t)
			r.info.On = append(r.info.On, names.EventTypeName(t))
		}
	}

	// match
	for _, k := range spec.Match.ToolKinds {
		kind, ok := names.ParseToolKind(k)
		if !ok {
			add("match.tool_kinds: unknown tool kind %q (known: %s)", k,
				strings.Join(names.EnumWireNames(ahpv1.ToolKind(0).Descriptor()), ", "))
			continue
		}
		r.kinds |= 1 << uint(kind)
	}
	for _, g := range []struct {
		field    string
		patterns []string
		dst      *globSet
	}{
		{"tool_names", spec.Match.ToolNames, &r.names},
		{"sources", spec.Match.Sources, &r.sources},
		{"sessions", spec.Match.Sessions, &r.sessions},
		{"agents", spec.Match.Agents, &r.agents},
	} {
		set, err := newGlobSet(g.patterns)
		if err != nil {
			add("match.%s: %v", g.field, err)
		}
		*g.dst = set
	}

	// when
	if strings.TrimSpace(spec.When) != "" {
		expr, err := c.compileExpr(spec.When, exprBool)
		if err != nil {
			add("when: %v", err)
		}
		r.when = expr
	}

	// mode
	switch spec.Mode {
	case "", modeEnforce:
	case modeDryRun:
		r.dryRun = true
	default:
		add("mode: want %s or %s, got %q", modeEnforce, modeDryRun, spec.Mode)
	}
	r.info.DryRun = r.dryRun

	// effect (and, since it depends on the effect, fallback)
	r.compileEffect(c, spec.Effect, add)
	switch spec.Fallback {
	case "", fallbackDeny:
		r.fallbackDeny = true
		r.info.Fallback = fallbackDeny
	case fallbackNoEffect:
		r.info.Fallback = fallbackNoEffect
	default:
		add("fallback: want %s or %s, got %q", fallbackDeny, fallbackNoEffect, spec.Fallback)
	}
	switch r.info.Effect {
	case "deny", "allow", "message", "typed", "inject":
		if spec.Fallback != "" {
			// Nothing to fall back from: deny is the floor, allow and message degrade to
			// nothing, typed answers are not generic effects.
			add("fallback does not apply to %s effects", r.info.Effect)
		}
		r.fallbackDeny = false
		r.info.Fallback = ""
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// compileEffect checks that exactly one effect is given and compiles it.
func (r *rule) compileEffect(c *compiler, e effectSpec, add func(string, ...any)) {
	var given []string
	for name, set := range map[string]bool{
		"deny": e.Deny != nil, "allow": e.Allow != nil, "ask": e.Ask != nil, "modify": e.Modify != nil,
		"defer": e.Defer != nil, "escalate": e.Escalate != nil, "message": e.Message != nil, "typed": e.Typed != nil,
		"return": e.Return != nil, "flow": e.Flow != nil, "inject": e.Inject != nil,
	} {
		if set {
			given = append(given, name)
		}
	}
	slices.Sort(given)
	if len(given) != 1 {
		const all = "deny, allow, ask, modify, defer, escalate, message, typed, return, flow, inject"
		if len(given) == 0 {
			add("effect: give exactly one of %s (write `allow: {}` for one without fields)", all)
		} else {
			add("effect: give exactly one of %s, not %s", all, strings.Join(given, " and "))
		}
		return
	}
	r.info.Effect = given[0]

	reason := func(rs reasonSpec, required bool) {
		switch {
		case rs.Reason != "" && rs.ReasonExpr != "":
			add("effect.%s: give reason or reason_expr, not both", r.info.Effect)
		case rs.ReasonExpr != "":
			expr, err := c.compileExpr(rs.ReasonExpr, exprString)
			if err != nil {
				add("effect.%s.reason_expr: %v", r.info.Effect, err)
			}
			r.reasonExpr = expr
		case rs.Reason == "" && required:
			add("effect.%s: reason is required", r.info.Effect)
		}
		r.reason = rs.Reason
	}

	switch {
	case e.Deny != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_DENY
		reason(e.Deny.reasonSpec, true)
		r.code = e.Deny.Code
	case e.Allow != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_ALLOW
		reason(*e.Allow, false)
	case e.Ask != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_ASK
		reason(e.Ask.reasonSpec, false)
		if e.Ask.Approval != nil {
			r.approval = compileApproval(e.Ask.Approval, "effect.ask.approval", add)
		}
	case e.Defer != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_DEFER
		reason(e.Defer.reasonSpec, false)
		r.retryAfter = e.Defer.RetryAfterMs
	case e.Escalate != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_ESCALATE
		reason(e.Escalate.reasonSpec, false)
		r.target = e.Escalate.Target
		if e.Escalate.Approval != nil {
			r.approval = compileApproval(e.Escalate.Approval, "effect.escalate.approval", add)
		}
	case e.Message != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_MESSAGE
		// The message text reuses the reason slots.
		reason(reasonSpec{Reason: e.Message.Text, ReasonExpr: e.Message.TextExpr}, false)
		if e.Message.Text == "" && e.Message.TextExpr == "" {
			add("effect.message: text or text_expr is required")
		}
	case e.Modify != nil && isTargetModify(e.Modify):
		r.effect = ahpv1.EffectKind_EFFECT_KIND_MODIFY
		reason(e.Modify.reasonSpec, false)
		r.compileTargetModify(e.Modify, add)
	case e.Modify != nil:
		r.effect = ahpv1.EffectKind_EFFECT_KIND_MODIFY
		reason(e.Modify.reasonSpec, false)
		r.compileModify(c, e.Modify, add)
	case r.compileDraftEffect(e, add):
	case e.Typed != nil:
		r.compileTyped(e.Typed, add)
	}
}

func (r *rule) compileModify(c *compiler, m *modifySpec, add func(string, ...any)) {
	n := 0
	if m.Merge != nil {
		n++
		s, err := jsonObject(m.Merge, "effect.modify.merge")
		if err != nil {
			add("%v", err)
		}
		r.merge = s
	}
	for _, x := range []struct {
		field string
		src   string
		dst   **compiledExpr
	}{{"merge_expr", m.MergeExpr, &r.mergeExpr}, {"input", m.Input, &r.inputExpr}} {
		if x.src == "" {
			continue
		}
		n++
		expr, err := c.compileExpr(x.src, exprObject)
		if err != nil {
			add("effect.modify.%s: %v", x.field, err)
		}
		*x.dst = expr
	}
	if n != 1 {
		add("effect.modify: give exactly one of merge, merge_expr, input")
	}
	if r.onAll || slices.ContainsFunc(r.on, func(t ahpv1.EventType) bool { return !slices.Contains(modifiableEvents, t) }) {
		add("effect.modify changes tool input, so `on:` must list only %s", typeNames(modifiableEvents))
	}
}

func (r *rule) compileTyped(t *typedSpec, add func(string, ...any)) {
	r.typed = &TypedAnswer{
		RuleID:       r.info.ID,
		Action:       t.Action,
		Reason:       t.Reason,
		Strategy:     t.Strategy,
		Task:         t.Task,
		Hints:        t.Hints,
		Intent:       t.Intent,
		Confidence:   t.Confidence,
		Facts:        t.Facts,
		Knowledge:    t.Knowledge,
		RetryAfterMs: t.RetryAfterMs,
		MaxBackoffMs: t.MaxBackoffMs,
	}
	if r.onAll || slices.ContainsFunc(r.on, func(t ahpv1.EventType) bool { return !isTyped(t) }) {
		add("effect.typed answers a typed event, so `on:` must list only typed events (idle, intent_detection, context_perception, memory_recall, planning, reasoning, rate_limit, confirmation)")
		return
	}
	if t.Action == "" {
		// No action: the typed decider's built-in answer, using the fields given (hints,
		// facts, knowledge, intent, strategy, max_backoff_ms). Without any, the rule says nothing.
		if reflect.ValueOf(*t).IsZero() {
			add("effect.typed: give an action or at least one answer field")
		}
		return
	}
	for _, et := range r.on {
		if !slices.Contains(typedActions[et], t.Action) {
			add("effect.typed: action %q is not an answer to %s (want one of %s)", t.Action,
				names.EventTypeName(et), strings.Join(typedActions[et], ", "))
		}
	}
	if t.Confidence < 0 || t.Confidence > 1 {
		add("effect.typed: confidence must be within [0, 1]")
	}
}

// globSet matches a string against any of its patterns (path.Match syntax); empty matches all.
type globSet []glob

// glob is one pattern. The two shapes that cover most policies are matched without path.Match:
// a literal name, and a literal prefix followed by one trailing `*`.
type glob struct {
	pattern string
	kind    globKind
	prefix  string
}

type globKind int

const (
	globGeneral globKind = iota
	globLiteral
	globPrefix
)

const globMeta = `*?[\`

func newGlobSet(patterns []string) (globSet, error) {
	var set globSet
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %v", p, err)
		}
		g := glob{pattern: p}
		switch prefix, star := strings.CutSuffix(p, "*"); {
		case !strings.ContainsAny(p, globMeta):
			g.kind = globLiteral
		case star && !strings.ContainsAny(prefix, globMeta):
			g.kind, g.prefix = globPrefix, prefix
		}
		set = append(set, g)
	}
	return set, nil
}

func (s globSet) match(v string) bool {
	if len(s) == 0 {
		return true
	}
	for _, g := range s {
		if g.match(v) {
			return true
		}
	}
	return false
}

func (g glob) match(v string) bool {
	switch g.kind {
	case globLiteral:
		return v == g.pattern
	case globPrefix:
		// path.Match's `*` does not cross `/`; keep that meaning.
		rest, ok := strings.CutPrefix(v, g.prefix)
		return ok && !strings.Contains(rest, "/")
	}
	ok, _ := path.Match(g.pattern, v)
	return ok
}
