package policy

import (
	"context"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// TestMatchesCallAgreesWithCEL plans each expression twice, with matchesRegex and with cel-go's
// own matches optimization, and requires the same value or error and the same tracked cost from
// both, for strings, non-strings, missing keys and both call forms.
func TestMatchesCallAgreesWithCEL(t *testing.T) {
	t.Parallel()
	env, err := celEnv()
	if err != nil {
		t.Fatal(err)
	}
	input, err := structpb.NewStruct(map[string]any{
		"command": "git push --force origin main", "n": 42.0, "long": strings.Repeat("ab", 5000) + "c",
	})
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Event: &ahpv1.Event{Id: "e", Type: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, Tool: &ahpv1.Tool{Input: input}}}
	for _, src := range []string{
		`input.command.matches(r'\bgit\s+push\b')`,
		`input.command.matches('^rm')`,
		`matches(input.command, 'force')`,
		`input.long.matches('(ab)+c$')`,
		`input.n.matches('4')`,
		`input.missing.matches('x')`,
		`"abc".matches("b") && input.command.matches("main$")`,
		`["a", "push"].exists(w, input.command.matches(w))`,
	} {
		ast, iss := env.Compile(src)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", src, iss.Err())
		}
		var got [2]string
		var costs [2]uint64
		for i, opts := range [][]cel.ProgramOption{
			{cel.EvalOptions(cel.OptOptimize), matchesRegex, cel.CostLimit(1 << 40)},
			{cel.EvalOptions(cel.OptOptimize), cel.CostLimit(1 << 40)},
		} {
			prg, err := env.Program(ast, opts...)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			v, det, err := prg.Eval(newActivation(context.Background(), in, jsonAdapter{env.CELTypeAdapter()}))
			switch {
			case err != nil:
				got[i] = "error: " + err.Error()
			default:
				got[i] = v.Type().TypeName() + " " + strings.TrimSpace(strings.ReplaceAll(stringOf(v), "\n", " "))
			}
			if det != nil && det.ActualCost() != nil {
				costs[i] = *det.ActualCost()
			}
		}
		if got[0] != got[1] || costs[0] != costs[1] {
			t.Errorf("%s: got %q (cost %d), cel-go gives %q (cost %d)", src, got[0], costs[0], got[1], costs[1])
		}
		if costs[0] == 0 {
			t.Errorf("%s: no cost tracked", src)
		}
	}
}

func stringOf(v interface{ Value() any }) string {
	if s, ok := v.Value().(bool); ok {
		if s {
			return "true"
		}
		return "false"
	}
	return "?"
}

// TestFoldsAreFound: only expressions with a comprehension run under ContextEval, so every kind
// of comprehension must be found.
func TestFoldsAreFound(t *testing.T) {
	t.Parallel()
	env, err := celEnv()
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]bool{
		`input.command.matches('x') && has(input.y)`:                   false,
		`tool.name == "Bash" || session.deny_count > 3`:                false,
		`input.items.exists(x, x == 1)`:                                true,
		`has(input.a) && [1, 2].map(x, x * 2).size() > 1`:              true,
		`cel.bind(n, path.base(input.command), n.matches('^\\.env$'))`: true,
		`["a"].all(k, k in input)`:                                     true,
	} {
		ast, iss := env.Compile(src)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", src, iss.Err())
		}
		if got := hasComprehension(ast); got != want {
			t.Errorf("%s: hasComprehension %v, want %v", src, got, want)
		}
	}
}
