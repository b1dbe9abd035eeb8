package policy

import (
	"fmt"
	"path"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
)

// Names of the CEL variables; docs/policy.md describes each.
const (
	varEvent   = "event"
	varTool    = "tool"
	varInput   = "input"
	varSession = "session"
	varPayload = "payload"
	varNow     = "now"
)

var (
	baseEnvOnce sync.Once
	baseEnv     *cel.Env
	baseEnvErr  error
)

// celEnv returns the one CEL environment every policy compiles against. cel.Env is safe for
// concurrent use, and building it once keeps Parse cheap for hot reloads.
func celEnv() (*cel.Env, error) {
	baseEnvOnce.Do(func() { baseEnv, baseEnvErr = newCELEnv() })
	return baseEnv, baseEnvErr
}

// newCELEnv builds the environment and, before anyone shares it, the symbol catalog its type
// checker consults for "did you mean" hints.
//
// cel-go (v0.33.2) builds that catalog lazily, under a sync.Once, the first time an expression
// names something undeclared, and writes it into the checker environment every compile shares;
// a concurrent compile entering a comprehension copies the same field without that Once. Two
// policies compiled at once (a file reload beside a policy arriving from the cluster bucket,
// parallel tests) were a data race.
// Compiling one undeclared name here fills the catalog while nothing else holds the env, so
// later compiles only read it.
func newCELEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(envOptions()...)
	if err != nil {
		return nil, err
	}
	if _, iss := env.Compile(catalogWarmup); iss.Err() == nil {
		return nil, fmt.Errorf("%s compiled, want an undeclared reference", catalogWarmup)
	}
	return env, nil
}

// catalogWarmup is a name no policy variable or function has: compiling it fails with an
// undeclared reference, which is what makes the checker build its catalog.
const catalogWarmup = "ahp_catalog_warmup"

func envOptions() []cel.EnvOption {
	// Open JSON-shaped maps: the event's fields are fixed, but tool input, extensions and
	// payloads are whatever the harness sent, so everything is map(string, dyn).
	object := cel.MapType(cel.StringType, cel.DynType)
	return []cel.EnvOption{
		cel.Variable(varEvent, object),
		cel.Variable(varTool, object),
		cel.Variable(varInput, object),
		cel.Variable(varSession, object),
		cel.Variable(varPayload, object),
		cel.Variable(varNow, cel.TimestampType),
		// Harness numbers arrive as doubles (JSON) or ints (typed fields); comparing them
		// across types must just work.
		cel.CrossTypeNumericComparisons(true),
		cel.DefaultUTCTimeZone(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Lists(),
		ext.Bindings(),
		cel.Function("glob",
			cel.Overload("glob_string_string", []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
				cel.BinaryBinding(globMatch))),
		pathFunction("base", path.Base),
		pathFunction("dir", path.Dir),
		pathFunction("ext", path.Ext),
		pathFunction("clean", path.Clean),
		// Cost models of the functions above, for the load-time estimate and the run-time
		// tracker: path.Match compares pattern and name (like contains), the path helpers scan
		// their argument once and never give a longer result (path.Clean("") is ".").
		cel.CostModel(
			cost.Overload("glob_string_string", cost.EvalCost(cost.Mul(
				cost.StringScan(cost.Arg(0)), cost.StringScan(cost.Arg(1))))),
			pathCostModel("base"), pathCostModel("dir"), pathCostModel("ext"), pathCostModel("clean"),
		),
	}
}

func pathCostModel(name string) cost.OverloadModel {
	return cost.Overload("path_"+name+"_string",
		cost.EvalCost(cost.StringScan(cost.Arg(0))),
		cost.ResultSize(cost.AtMost(cost.Sum(cost.Arg(0), cost.Const(1)))))
}

// pathFunction declares the CEL function path.<name>(string) string, overload path_<name>_string.
func pathFunction(name string, f func(string) string) cel.EnvOption {
	return cel.Function("path."+name,
		cel.Overload("path_"+name+"_string", []*cel.Type{cel.StringType}, cel.StringType,
			cel.UnaryBinding(stringFunc(f))))
}

// globMatch implements glob(s, pattern) with path.Match semantics, like match.tool_names.
func globMatch(s, pattern ref.Val) ref.Val {
	str, ok1 := s.(types.String)
	pat, ok2 := pattern.(types.String)
	if !ok1 || !ok2 {
		return types.NewErr("glob: want (string, string)")
	}
	ok, err := path.Match(string(pat), string(str))
	if err != nil {
		return types.NewErr("glob: bad pattern %q", string(pat))
	}
	return types.Bool(ok)
}

// stringFunc lifts a string function into a CEL unary binding.
func stringFunc(f func(string) string) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		s, ok := v.(types.String)
		if !ok {
			return types.NewErr("want a string, got %s", v.Type().TypeName())
		}
		return types.String(f(string(s)))
	}
}

// exprKind says what an expression must produce, for load-time type checks.
type exprKind int

const (
	exprBool   exprKind = iota // when
	exprString                 // reason_expr, text_expr
	exprObject                 // modify input, merge_expr
)

func (k exprKind) String() string {
	switch k {
	case exprBool:
		return "bool"
	case exprString:
		return "string"
	default:
		return "map(string, dyn)"
	}
}

// compiledExpr is a checked, planned CEL program.
type compiledExpr struct {
	prg cel.Program
	// dynamic is set when the checker could only prove the type dyn; the value is then checked
	// at run time.
	dynamic bool
	// guarded is set when the estimate does not keep the expression within the cost limit: it
	// then runs with cost tracking and stops when the evaluation's context ends.
	guarded bool
	// folds is set when the expression has a comprehension (a macro such as exists or map, or
	// cel.bind), the only place where cel-go checks a context while it evaluates.
	folds bool
	// fast, for a guarded expression, is the same expression planned without cost tracking,
	// run for requests of at most fastBelow bytes (Input.RequestBytes): for those the estimate
	// already keeps it within the limit, as for an unguarded expression at any size (issue 18:
	// cel-go's cost tracker costs a dozen allocations per decision for the default policy's two
	// guarded rules).
	fast      cel.Program
	fastBelow uint64
}

// compiler compiles a policy's CEL expressions against one environment. checked, when set,
// holds expressions already parsed and type-checked against that same environment, by source
// text; only the built-in default policy has them (see default.go). Everything after checking
// (the output type test and planning, which compiles constant regexes) runs for every
// expression either way.
type compiler struct {
	env     *cel.Env
	checked map[string]*cel.Ast
	// record, when set, receives every expression compiled from source (to build checked).
	record func(src string, ast *cel.Ast)
	// costLimit is Settings.CEL.CostLimit: checked against the estimate, enforced when run.
	costLimit uint64
}

// compileExpr parses, checks and plans src once, at load (parsing and checking are skipped when
// c.checked has src). dyn is accepted wherever a concrete
// type is expected (tool input is open JSON, so `input.force` is dyn) and checked when evaluated.
func (c *compiler) compileExpr(src string, want exprKind) (*compiledExpr, error) {
	env := c.env
	ast, ok := c.checked[src]
	if !ok {
		var iss *cel.Issues
		ast, iss = env.Compile(src)
		if iss.Err() != nil {
			return nil, iss.Err()
		}
		if c.record != nil {
			c.record(src, ast)
		}
	}
	out := ast.OutputType()
	dynamic := out.IsExactType(cel.DynType)
	if !dynamic {
		var ok bool
		switch want {
		case exprBool:
			ok = out.IsExactType(cel.BoolType)
		case exprString:
			ok = out.IsExactType(cel.StringType)
		case exprObject:
			// Tool input is a JSON object: string keys (or keys only known at run time).
			ok = out.Kind() == types.MapKind && (out.Parameters()[0].IsExactType(cel.StringType) ||
				out.Parameters()[0].IsExactType(cel.DynType))
		}
		if !ok {
			return nil, fmt.Errorf("expression has type %s, want %s", out, want)
		}
	}
	guarded, err := checkCost(env, ast, c.costLimit)
	if err != nil {
		return nil, err
	}
	prg, err := env.Program(ast, programOptions(guarded, c.costLimit)...)
	if err != nil {
		return nil, err
	}
	x := &compiledExpr{prg: prg, dynamic: dynamic, guarded: guarded, folds: hasComprehension(ast)}
	if guarded {
		if below := fastBelow(env, ast, c.costLimit); below > 0 {
			fast, err := env.Program(ast, programOptions(false, c.costLimit)...)
			if err != nil {
				return nil, err
			}
			x.fast, x.fastBelow = fast, below
		}
	}
	return x, nil
}

// hasComprehension reports whether ast has a comprehension anywhere.
func hasComprehension(ast *cel.Ast) bool {
	found := false
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.ComprehensionKind {
			found = true
		}
	}))
	return found
}
