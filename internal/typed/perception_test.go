package typed_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/policy"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/proto"
)

func entityTarget(name, typ string) *ahpv1.PerceptionTarget {
	return &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Entity{Entity: &ahpv1.EntityTarget{Name: name, EntityType: typ}}}
}

func locationTarget(path string) *ahpv1.PerceptionTarget {
	return &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Location{Location: &ahpv1.LocationTarget{Path: path, LocationType: "workspace"}}}
}

func patternTarget(p string) *ahpv1.PerceptionTarget {
	return &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Pattern{Pattern: &ahpv1.PatternTarget{Pattern: p, PatternType: "glob"}}}
}

func perception(intent ahpv1.PerceptionIntent, target *ahpv1.PerceptionTarget, ctx *ahpv1.PerceptionContext, c *ahpv1.PerceptionConstraints) *ahpv1.Event {
	if ctx == nil {
		ctx = &ahpv1.PerceptionContext{Workspace: "/repo"}
	}
	return perceptionEvent(&ahpv1.ContextPerceptionPayload{SessionId: "s", Intent: intent, Target: target, Context: ctx, Constraints: c})
}

const understand = ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNDERSTAND

// sessionFacts are facts as session memory keeps them, most recent first.
func sessionFacts() []*ahpv1.Fact {
	return []*ahpv1.Fact{
		fact("the build uses go 1.26", 0.9),
		fact("AhpServer dispatches requests in src/server.rs", 0.8),
		fact("tests run with make test", 0.7),
		fact("AhpServer keeps one handler per connection", 0.6),
	}
}

func factContents(facts []*ahpv1.Fact) []string {
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.GetContent()
	}
	return out
}

func TestPerceptionAllowInjectsRelevantFactsFirst(t *testing.T) {
	t.Parallel()
	view := &policy.SessionView{Facts: sessionFacts()}
	s := policy.Settings{Context: policy.ContextSettings{Knowledge: []string{"the repo is a Go module"}}}
	ev := perception(understand, entityTarget("AhpServer", "struct"), nil, nil)
	d := decide(t, ev, policy.Result{}, view, s)
	ctx := d.GetContextPerception().GetAllow().GetInjectedContext()
	want := []string{
		"AhpServer dispatches requests in src/server.rs",
		"AhpServer keeps one handler per connection",
		"the build uses go 1.26",
		"tests run with make test",
	}
	if got := factContents(ctx.GetFacts()); !slices.Equal(got, want) {
		t.Errorf("facts = %q, want %q", got, want)
	}
	equal(t, ctx.GetFacts()[0].GetConfidence(), float32(0.8), "session facts keep their confidence")
	equal(t, ctx.GetFacts()[0].GetSource(), "session", "session facts keep their source")
	if got := ctx.GetKnowledge().GetValues(); !slices.Equal(got, []string{"the repo is a Go module"}) {
		t.Errorf("knowledge = %q", got)
	}
	if got := ctx.GetSuggestions().GetValues(); !slices.Equal(got, []string{"read AhpServer and its callers before changing it"}) {
		t.Errorf("suggestions = %q", got)
	}
	equal(t, d.GetVerdict(), ahpv1.Verdict_VERDICT_ALLOW, "verdict")
	// The decision owns its facts: changing them leaves session memory alone.
	ctx.GetFacts()[0].Content = "changed"
	equal(t, view.Facts[1].GetContent(), "AhpServer dispatches requests in src/server.rs", "view fact")
}

func TestPerceptionAllowLimits(t *testing.T) {
	t.Parallel()
	many := make([]*ahpv1.Fact, 30)
	for i := range many {
		many[i] = fact(fmt.Sprintf("fact number %d", i), 0.5)
	}
	u64 := func(v uint64) *uint64 { return &v }
	no := false
	tests := []struct {
		name      string
		s         policy.Settings
		c         *ahpv1.PerceptionConstraints
		answer    *policy.TypedAnswer
		wantFacts int
		check     func(t *testing.T, ctx *ahpv1.InjectedContext)
	}{
		{name: "MaxFacts default caps session facts", wantFacts: 10},
		{name: "MaxFacts setting", s: policy.Settings{Context: policy.ContextSettings{MaxFacts: 3}}, wantFacts: 3},
		{name: "max_results constraint", c: &ahpv1.PerceptionConstraints{MaxResults: u64(2)}, wantFacts: 2},
		{name: "max_results zero", c: &ahpv1.PerceptionConstraints{MaxResults: u64(0)}, wantFacts: 0},
		{name: "max_context_length counts characters", c: &ahpv1.PerceptionConstraints{MaxContextLength: u64(30)}, wantFacts: 2},
		{name: "rule facts come first and count towards max_results",
			c:         &ahpv1.PerceptionConstraints{MaxResults: u64(3)},
			answer:    &policy.TypedAnswer{RuleID: "r", Facts: []string{"policy says hi"}, Knowledge: []string{"k2"}},
			s:         policy.Settings{Context: policy.ContextSettings{Knowledge: []string{"k1"}}},
			wantFacts: 3,
			check: func(t *testing.T, ctx *ahpv1.InjectedContext) {
				f := ctx.GetFacts()[0]
				equal(t, f.GetContent(), "policy says hi", "first fact")
				equal(t, f.GetSource(), "policy", "source")
				equal(t, f.GetConfidence(), float32(1), "confidence")
				if got := ctx.GetKnowledge().GetValues(); !slices.Equal(got, []string{"k1", "k2"}) {
					t.Errorf("knowledge = %q", got)
				}
			}},
		{name: "include_sources false blanks sources", c: &ahpv1.PerceptionConstraints{IncludeSources: &no}, wantFacts: 10,
			check: func(t *testing.T, ctx *ahpv1.InjectedContext) {
				for _, f := range ctx.GetFacts() {
					equal(t, f.GetSource(), "", "source")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := resultOf(tt.answer)
			ev := perception(understand, entityTarget("parser", "module"), nil, tt.c)
			d := decide(t, ev, res, &policy.SessionView{Facts: many}, tt.s)
			ctx := d.GetContextPerception().GetAllow().GetInjectedContext()
			if ctx == nil {
				t.Fatalf("no allow: %s", js(d))
			}
			equal(t, len(ctx.GetFacts()), tt.wantFacts, "facts")
			if tt.check != nil {
				tt.check(t, ctx)
			}
		})
	}
}

func TestPerceptionAllowWithoutAnything(t *testing.T) {
	t.Parallel()
	ev := perception(ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNSPECIFIED, entityTarget("x", "symbol"), nil, nil)
	d := decide(t, ev, policy.Result{}, nil, policy.Settings{})
	want := &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Allow_{
		Allow: &ahpv1.ContextPerceptionDecision_Allow{InjectedContext: &ahpv1.InjectedContext{Facts: []*ahpv1.Fact{}}},
	}}
	protoEqual(t, d.GetContextPerception(), want, "decision")
	if d.GetContextPerception().GetAllow().GetInjectedContext().GetFacts() == nil {
		t.Error("facts is nil; the wire requires a list")
	}
}

func TestPerceptionRefinesBroadTargets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target *ahpv1.PerceptionTarget
		s      policy.Settings
		broad  bool
	}{
		{"dot", locationTarget("."), policy.Settings{}, true},
		{"dot slash", locationTarget("./"), policy.Settings{}, true},
		{"root", locationTarget("/"), policy.Settings{}, true},
		{"star", locationTarget("*"), policy.Settings{}, true},
		{"the workspace itself", locationTarget("/repo/"), policy.Settings{}, true},
		{"a directory", locationTarget("src/protocol"), policy.Settings{}, false},
		{"custom broad path", locationTarget("src"), policy.Settings{Context: policy.ContextSettings{BroadPaths: []string{"src"}}}, true},
		{"custom list replaces the defaults", locationTarget("."), policy.Settings{Context: policy.ContextSettings{BroadPaths: []string{"src"}}}, false},
		{"an empty list turns location refine off", locationTarget("/"), policy.Settings{Context: policy.ContextSettings{BroadPaths: []string{}}}, false},
		{"the workspace root stays broad", locationTarget("/repo"), policy.Settings{Context: policy.ContextSettings{BroadPaths: []string{}}}, true},
		{"star pattern", patternTarget("*"), policy.Settings{}, true},
		{"wildcard-only pattern", patternTarget("**/*"), policy.Settings{}, true},
		{"pattern with a literal", patternTarget("**/*.go"), policy.Settings{}, false},
		{"entity without a name", entityTarget("", "function"), policy.Settings{}, true},
		{"no target", nil, policy.Settings{}, true},
		{"named entity", entityTarget("auth", "function"), policy.Settings{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := decide(t, perception(understand, tt.target, nil, nil), policy.Result{}, nil, tt.s)
			want := "context_perception.allow"
			if tt.broad {
				want = "context_perception.refine"
			}
			equal(t, arm(d), want, "arm")
		})
	}
}

func TestPerceptionRefineContents(t *testing.T) {
	t.Parallel()
	t.Run("hints from workspace, task and facts; nothing better to offer", func(t *testing.T) {
		t.Parallel()
		view := &policy.SessionView{Facts: []*ahpv1.Fact{
			fact("nothing to see", 1),
			fact("the router lives in src/router.go and src/routes.go", 1),
			fact("tests are in src/router_test.go", 1),
			fact("docs in docs/a.md", 1),
		}}
		ctx := &ahpv1.PerceptionContext{Workspace: "/repo", CurrentTask: proto.String("speed up the router")}
		d := decide(t, perception(understand, locationTarget("."), ctx, nil), policy.Result{}, view, policy.Settings{})
		r := d.GetContextPerception().GetRefine()
		want := []string{
			"narrow the path below /repo",
			"name a file or directory",
			"keep to what the current task needs: speed up the router",
			"consider src/router.go",
			"consider src/routes.go",
			"consider src/router_test.go",
		}
		if !slices.Equal(r.GetScopeHints(), want) {
			t.Errorf("scope_hints = %q\nwant %q", r.GetScopeHints(), want)
		}
		equal(t, r.GetRefinedIntent(), ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNSPECIFIED, "refined_intent")
		equal(t, r.GetRefinedTarget() == nil, true, "refined_target unset")
	})
	t.Run("the agent's query names something better", func(t *testing.T) {
		t.Parallel()
		ctx := &ahpv1.PerceptionContext{Workspace: "/repo", Query: proto.String("where is the `Authenticate` function defined?")}
		d := decide(t, perception(understand, locationTarget("."), ctx, nil), policy.Result{}, nil, policy.Settings{})
		r := d.GetContextPerception().GetRefine()
		equal(t, r.GetRefinedIntent(), ahpv1.PerceptionIntent_PERCEPTION_INTENT_LOCATE, "refined_intent")
		protoEqual(t, r.GetRefinedTarget(), entityTarget("Authenticate", "function"), "refined_target")
	})
	t.Run("a path in the task becomes a location", func(t *testing.T) {
		t.Parallel()
		ctx := &ahpv1.PerceptionContext{Workspace: "/repo", CurrentTask: proto.String("tidy internal/convert/")}
		d := decide(t, perception(understand, patternTarget("*"), ctx, nil), policy.Result{}, nil, policy.Settings{})
		r := d.GetContextPerception().GetRefine()
		want := &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Location{
			Location: &ahpv1.LocationTarget{Path: "internal/convert/", LocationType: "directory"}}}
		protoEqual(t, r.GetRefinedTarget(), want, "refined_target")
		if !slices.Contains(r.GetScopeHints(), "use a pattern with a literal part, such as a file name or extension") {
			t.Errorf("scope_hints = %q", r.GetScopeHints())
		}
	})
	t.Run("a nameless entity asks for its name", func(t *testing.T) {
		t.Parallel()
		d := decide(t, perception(understand, entityTarget("", "function"), &ahpv1.PerceptionContext{}, nil), policy.Result{}, nil, policy.Settings{})
		want := []string{"name the entity the request is about"}
		if got := d.GetContextPerception().GetRefine().GetScopeHints(); !slices.Equal(got, want) {
			t.Errorf("scope_hints = %q", got)
		}
	})
}

func TestPerceptionRuleAnswers(t *testing.T) {
	t.Parallel()
	broad := perception(understand, locationTarget("."), nil, nil)
	t.Run("allow answers even a broad target", func(t *testing.T) {
		t.Parallel()
		d := decide(t, broad, typedResult(policy.TypedAnswer{RuleID: "r", Action: "allow", Knowledge: []string{"k"}}), nil, policy.Settings{})
		equal(t, arm(d), "context_perception.allow", "arm")
		equal(t, metaString(d, typed.RuleIDKey), "r", "rule id")
	})
	t.Run("refine with the rule's hints and intent", func(t *testing.T) {
		t.Parallel()
		d := decide(t, perception(understand, entityTarget("auth", "function"), nil, nil),
			typedResult(policy.TypedAnswer{RuleID: "r", Action: "refine", Hints: []string{"src/"}, Intent: "locate"}), nil, policy.Settings{})
		r := d.GetContextPerception().GetRefine()
		if !slices.Equal(r.GetScopeHints(), []string{"src/"}) {
			t.Errorf("scope_hints = %q", r.GetScopeHints())
		}
		equal(t, r.GetRefinedIntent(), ahpv1.PerceptionIntent_PERCEPTION_INTENT_LOCATE, "refined_intent")
	})
	t.Run("refine without hints builds them", func(t *testing.T) {
		t.Parallel()
		d := decide(t, perception(understand, entityTarget("auth", "function"), nil, nil),
			typedResult(policy.TypedAnswer{RuleID: "r", Action: "refine", Intent: "not-an-intent"}), nil, policy.Settings{})
		r := d.GetContextPerception().GetRefine()
		if len(r.GetScopeHints()) == 0 || !strings.HasPrefix(r.GetScopeHints()[0], "name the entity") {
			t.Errorf("scope_hints = %q", r.GetScopeHints())
		}
		equal(t, r.GetRefinedIntent(), ahpv1.PerceptionIntent_PERCEPTION_INTENT_UNSPECIFIED, "refined_intent")
	})
}

func TestPerceptionTargetVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target *ahpv1.PerceptionTarget
		label  string // "" means the target is nameless and gets refined
		kind   string
	}{
		{"event", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Event{Event: &ahpv1.EventTarget{Description: "the last deploy", EventType: "deploy"}}}, "the last deploy", "event"},
		{"relation", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Relation{Relation: &ahpv1.RelationTarget{Entities: []string{"A", "B"}, RelationType: "calls"}}}, "A and B", "relation"},
		{"rule", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Rule{Rule: &ahpv1.RuleTarget{Name: "no-panics", RuleType: "lint"}}}, "no-panics", "rule"},
		{"state", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_State{State: &ahpv1.StateTarget{Target: "the queue", Aspect: "depth"}}}, "the queue", "state"},
		{"resource", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Resource{Resource: &ahpv1.ResourceTarget{Name: "pg-main", ResourceType: "database"}}}, "pg-main", "resource"},
		{"nameless event", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Event{Event: &ahpv1.EventTarget{}}}, "", "event"},
		{"nameless resource", &ahpv1.PerceptionTarget{Target: &ahpv1.PerceptionTarget_Resource{Resource: &ahpv1.ResourceTarget{}}}, "", "resource"},
		{"empty target", &ahpv1.PerceptionTarget{}, "", "target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := decide(t, perception(ahpv1.PerceptionIntent_PERCEPTION_INTENT_TRACK, tt.target, &ahpv1.PerceptionContext{}, nil), policy.Result{}, nil, policy.Settings{})
			if tt.label == "" {
				hints := d.GetContextPerception().GetRefine().GetScopeHints()
				want := "name the " + tt.kind + " the request is about"
				if tt.kind == "target" {
					want = "name a file or directory"
				}
				if !slices.Contains(hints, want) {
					t.Errorf("scope_hints = %q, want %q", hints, want)
				}
				return
			}
			got := d.GetContextPerception().GetAllow().GetInjectedContext().GetSuggestions().GetValues()
			if !slices.Equal(got, []string{"check the history of " + tt.label}) {
				t.Errorf("suggestions = %q", got)
			}
		})
	}
}
