package typed

import (
	"path"
	"slices"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
)

// perceptionKind answers context_perception: allow{injected_context, metadata?}, block or
// refine{refined_intent, refined_target, scope_hints}.
var perceptionKind = &kind{
	name:   "context_perception",
	refuse: setPerceptionBlock,
	decide: decidePerception,
}

// policySource is the Fact.source of facts a policy injects.
const policySource = "policy"

// decidePerception (a rule's block is applied by Decide): a rule's refine or allow wins (an allow
// injects context even for a broad target). Built in, a target too broad to answer is refined;
// anything else is allowed with context from session memory and the policy.
func decidePerception(d *ahpv1.Decision, in *input, ta *policy.TypedAnswer) trace {
	p := in.ev.GetContextPerception()
	switch action(ta) {
	case "refine":
		setPerception(d, refine(p, in, ta))
		return trace{ruleID: ta.RuleID}
	case "":
		if isBroad(p, in.s.Context.BroadPaths) {
			setPerception(d, refine(p, in, nil))
			return trace{}
		}
	}
	setPerception(d, &ahpv1.ContextPerceptionDecision{
		Decision: &ahpv1.ContextPerceptionDecision_Allow_{Allow: &ahpv1.ContextPerceptionDecision_Allow{
			InjectedContext: injectedContext(p, in, ta),
		}},
	})
	if ta != nil && (ta.Action == "allow" || len(ta.Facts) > 0 || len(ta.Knowledge) > 0) {
		return trace{ruleID: ta.RuleID}
	}
	return trace{}
}

func setPerception(d *ahpv1.Decision, c *ahpv1.ContextPerceptionDecision) {
	d.Typed = &ahpv1.Decision_ContextPerception{ContextPerception: c}
}

func setPerceptionBlock(d *ahpv1.Decision, reason string) {
	setPerception(d, &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Block{Block: block(reason)}})
}

// isBroad reports a target too broad to answer: a location whose path is a broad path or the
// workspace root itself, a pattern of wildcards only, or a target without a name.
func isBroad(p *ahpv1.ContextPerceptionPayload, broad []string) bool {
	t := p.GetTarget()
	switch x := t.GetTarget().(type) {
	case *ahpv1.PerceptionTarget_Location:
		loc := cleanPath(x.Location.GetPath())
		if ws := p.GetContext().GetWorkspace(); ws != "" && loc == cleanPath(ws) {
			return true
		}
		return slices.ContainsFunc(broad, func(b string) bool { return cleanPath(b) == loc })
	case *ahpv1.PerceptionTarget_Pattern:
		pat := strings.TrimSpace(x.Pattern.GetPattern())
		return slices.Contains(broad, pat) || strings.Trim(pat, "*?/.") == ""
	}
	return targetLabel(t) == ""
}

// cleanPath normalises a path for comparison; "" stays "" and "./" is ".".
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// targetLabel is the name a target goes by, "" when it has none.
func targetLabel(t *ahpv1.PerceptionTarget) string {
	switch x := t.GetTarget().(type) {
	case *ahpv1.PerceptionTarget_Entity:
		return x.Entity.GetName()
	case *ahpv1.PerceptionTarget_Location:
		return x.Location.GetPath()
	case *ahpv1.PerceptionTarget_Event:
		return x.Event.GetDescription()
	case *ahpv1.PerceptionTarget_Relation:
		return strings.Join(x.Relation.GetEntities(), " and ")
	case *ahpv1.PerceptionTarget_Rule:
		return x.Rule.GetName()
	case *ahpv1.PerceptionTarget_State:
		return x.State.GetTarget()
	case *ahpv1.PerceptionTarget_Resource:
		return x.Resource.GetName()
	case *ahpv1.PerceptionTarget_Pattern:
		return x.Pattern.GetPattern()
	}
	return ""
}

// targetQuery is the text facts are ranked against: the target, the query and the task.
func targetQuery(p *ahpv1.ContextPerceptionPayload) string {
	parts := []string{targetLabel(p.GetTarget())}
	if e := p.GetTarget().GetEntity(); e != nil {
		parts = append(parts, e.GetIdentifier())
	}
	return strings.Join(append(parts, p.GetContext().GetQuery(), p.GetContext().GetCurrentTask()), " ")
}

// refine asks the agent to narrow its request. Scope hints come from the rule when it gives
// some, else they are built from the target, the workspace, the task and paths named in session
// facts. refined_intent and refined_target are set only when the agent's own query or task names
// something better; otherwise they stay unset (null on the wire).
func refine(p *ahpv1.ContextPerceptionPayload, in *input, ta *policy.TypedAnswer) *ahpv1.ContextPerceptionDecision {
	r := &ahpv1.ContextPerceptionDecision_Refine{}
	if ta != nil && len(ta.Hints) > 0 {
		r.ScopeHints = appendUnique(nil, ta.Hints...)
	} else {
		r.ScopeHints = scopeHints(p, in)
	}
	if ta != nil {
		if intent, ok := parseIntent(ta.Intent); ok {
			r.RefinedIntent = intent
		}
	}
	ctx := p.GetContext()
	for _, text := range []string{ctx.GetQuery(), ctx.GetCurrentTask()} {
		if r.RefinedIntent == ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNSPECIFIED && text != "" {
			c := Classify(text, ctx.GetWorkspace(), in.s.Intent)
			if intent, ok := parseIntent(c.Intent); ok && intent != p.GetIntent() &&
				c.Confidence >= max(in.s.Intent.MinConfidence, refineConfidence) {
				r.RefinedIntent = intent
			}
		}
		if r.RefinedTarget == nil {
			r.RefinedTarget = targetFrom(text, p)
		}
	}
	return &ahpv1.ContextPerceptionDecision{
		Decision: &ahpv1.ContextPerceptionDecision_Refine_{Refine: r},
	}
}

// refineConfidence is the least classifier confidence that replaces the agent's own intent.
const refineConfidence = 0.5

// targetFrom turns a target named in text into a perception target, unless it is as broad as the
// one asked about.
func targetFrom(text string, p *ahpv1.ContextPerceptionPayload) *ahpv1.PerceptionTarget {
	t, ok := findTarget(text)
	if !ok || cleanPath(t.name) == cleanPath(targetLabel(p.GetTarget())) {
		return nil
	}
	switch t.typ {
	case "file", "directory":
		return &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Location{
			Location: &ahpv1.LocationTarget{Path: t.name, LocationType: t.typ},
		}}
	}
	return &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Entity{
		Entity: &ahpv1.EntityTarget{Name: t.name, EntityType: t.typ},
	}}
}

// maxPathHints caps the "consider <path>" hints taken from session facts.
const maxPathHints = 3

// scopeHints says how to narrow a broad request.
func scopeHints(p *ahpv1.ContextPerceptionPayload, in *input) []string {
	var hints []string
	ws := p.GetContext().GetWorkspace()
	t := p.GetTarget()
	switch t.GetTarget().(type) {
	case *ahpv1.PerceptionTarget_Location, nil:
		if ws != "" && cleanPath(ws) != "/" {
			hints = append(hints, "narrow the path below "+ws)
		}
		hints = append(hints, "name a file or directory")
	case *ahpv1.PerceptionTarget_Pattern:
		if ws != "" && cleanPath(ws) != "/" {
			hints = append(hints, "narrow the path below "+ws)
		}
		hints = append(hints, "use a pattern with a literal part, such as a file name or extension")
	default:
		hints = append(hints, "name the "+targetKind(t)+" the request is about")
	}
	if task := p.GetContext().GetCurrentTask(); task != "" {
		hints = append(hints, "keep to what the current task needs: "+task)
	}
	for _, f := range factPaths(in.view.Facts, p.GetContext().GetQuery()+" "+p.GetContext().GetCurrentTask()) {
		hints = append(hints, "consider "+f)
	}
	return appendUnique(nil, hints...)
}

// targetKind is the wire name of the target's variant ("entity", "rule", ...).
func targetKind(t *ahpv1.PerceptionTarget) string {
	if f := t.ProtoReflect().WhichOneof(t.ProtoReflect().Descriptor().Oneofs().ByName("target")); f != nil {
		return string(f.Name())
	}
	return "target"
}

// factPaths lists up to maxPathHints file paths named in session facts, from facts relevant to
// text first, then from the most recent facts.
func factPaths(facts []*ahpv1.Fact, text string) []string {
	ordered := make([]*ahpv1.Fact, 0, len(facts))
	for _, m := range Rank(text, facts) {
		ordered = append(ordered, m.Fact)
	}
	ordered = append(ordered, facts...)
	var out []string
	for _, f := range ordered {
		for _, t := range tokens(f.GetContent()) {
			if pathKind(t.text) == "file" && !slices.Contains(out, t.text) {
				out = append(out, t.text)
				if len(out) == maxPathHints {
					return out
				}
			}
		}
	}
	return out
}

// injectedContext gathers what an allow hands the agent:
//   - facts: the rule's facts (source "policy", confidence 1), then session facts relevant to the
//     target, query and task, then the most recent other session facts, at most
//     Settings.Context.MaxFacts of those;
//   - knowledge: Settings.Context.Knowledge, then the rule's knowledge;
//   - one suggestion for working on the target with the requested intent.
//
// The payload's constraints apply to the whole: max_results caps the facts, max_context_length
// caps the characters of facts and knowledge, and include_sources false blanks the sources.
func injectedContext(p *ahpv1.ContextPerceptionPayload, in *input, ta *policy.TypedAnswer) *ahpv1.InjectedContext {
	c := p.GetConstraints()
	budget := newBudget(c)
	ctx := &ahpv1.InjectedContext{Facts: []*ahpv1.Fact{}}
	var ruleFacts, knowledge []string
	if ta != nil {
		ruleFacts, knowledge = ta.Facts, ta.Knowledge
	}
	for _, f := range appendUnique(nil, ruleFacts...) {
		if budget.takeFact(len(ctx.Facts), f) {
			ctx.Facts = append(ctx.Facts, &ahpv1.Fact{Content: f, Source: policySource, Confidence: 1})
		}
	}
	sessionFacts := 0
	for _, f := range relevantFirst(in.view.Facts, targetQuery(p)) {
		if sessionFacts == in.s.Context.MaxFacts {
			break
		}
		if budget.takeFact(len(ctx.Facts), f.GetContent()) {
			ctx.Facts = append(ctx.Facts, proto.CloneOf(f))
			sessionFacts++
		}
	}
	if c != nil && c.IncludeSources != nil && !c.GetIncludeSources() {
		for _, f := range ctx.Facts {
			f.Source = ""
		}
	}
	var kept []string
	for _, k := range appendUnique(slices.Clone(in.s.Context.Knowledge), knowledge...) {
		if budget.take(k) {
			kept = append(kept, k)
		}
	}
	ctx.Knowledge = stringList(kept)
	ctx.Suggestions = stringList(suggestions(p))
	return ctx
}

// relevantFirst orders facts: those relevant to query by rank, then the rest as given (most
// recent first).
func relevantFirst(facts []*ahpv1.Fact, query string) []*ahpv1.Fact {
	out := make([]*ahpv1.Fact, 0, len(facts))
	used := make([]bool, len(facts))
	for _, m := range Rank(query, facts) {
		out = append(out, m.Fact)
		used[m.Index] = true
	}
	for i, f := range facts {
		if !used[i] && f != nil {
			out = append(out, f)
		}
	}
	return out
}

// budget enforces the payload's max_results and max_context_length.
type budget struct {
	maxResults, maxChars uint64
	hasResults, hasChars bool
	chars                uint64
}

func newBudget(c *ahpv1.PerceptionConstraints) *budget {
	return &budget{
		maxResults: c.GetMaxResults(), hasResults: c != nil && c.MaxResults != nil,
		maxChars: c.GetMaxContextLength(), hasChars: c != nil && c.MaxContextLength != nil,
	}
}

// takeFact reports whether one more fact fits after n facts.
func (b *budget) takeFact(n int, content string) bool {
	if b.hasResults && uint64(n) >= b.maxResults {
		return false
	}
	return b.take(content)
}

// take reports whether text fits in the remaining characters, and spends them if so. A text that
// does not fit is skipped; a shorter one after it may still fit.
func (b *budget) take(text string) bool {
	n := uint64(len([]rune(text)))
	if b.hasChars && b.chars+n > b.maxChars {
		return false
	}
	b.chars += n
	return true
}

// suggestionTemplates suggest how to work on a target for each intent; %s is the target.
var suggestionTemplates = map[ahpv1.PerceptionIntent]string{
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_RECOGNIZE:  "look at how %s is declared before naming what it is",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNDERSTAND: "read %s and its callers before changing it",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_LOCATE:     "search for %s by name before browsing directories",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_RETRIEVE:   "fetch only the parts of %s the task needs",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_EXPLORE:    "start from the top-level files around %s",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_REASON:     "list what you assume about %s before concluding",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_VALIDATE:   "run the checks that cover %s",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_COMPARE:    "compare %s on the same criteria, side by side",
	ahpv1.PerceptionIntent_PERCEPTION_INTENT_TRACK:      "check the history of %s",
}

// suggestions gives the one suggestion for the payload's intent and target, if both are known.
func suggestions(p *ahpv1.ContextPerceptionPayload) []string {
	label := targetLabel(p.GetTarget())
	tmpl, ok := suggestionTemplates[p.GetIntent()]
	if !ok || label == "" {
		return nil
	}
	return []string{strings.Replace(tmpl, "%s", label, 1)}
}
