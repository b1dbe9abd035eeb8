package policy

import (
	"regexp"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// matchesRegex plans `s.matches(r'…')` and `matches(s, r'…')` with a constant pattern: the pattern
// is compiled once at load, as cel-go's own optimization does, and a call costs no allocation
// (issue 18: cel-go's planned call builds an argument slice and boxes the string on every call,
// two allocations per regex per rule). The cost tracker is told of every call exactly as for
// cel-go's call, so the cost limit counts the same.
//
// Both overloads are listed by id: the planner looks an optimization up by overload id first,
// so these take the place of cel-go's, which is listed by function name only.
var matchesRegex = cel.OptimizeRegex(
	&interpreter.RegexOptimization{Function: overloads.Matches, OverloadID: overloads.MatchesString, RegexIndex: 1, Factory: newMatchesCall},
	&interpreter.RegexOptimization{Function: overloads.Matches, OverloadID: overloads.Matches, RegexIndex: 1, Factory: newMatchesCall},
)

func newMatchesCall(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	args := call.Args()
	return &matchesCall{id: call.ID(), function: call.Function(), overload: call.OverloadID(), args: args, re: re}, nil
}

// matchesCall is a planned matches call whose pattern (args[1]) is a constant.
type matchesCall struct {
	id                 int64
	function, overload string
	args               []interpreter.InterpretableV2
	re                 *regexp.Regexp
}

var _ interpreter.InterpretableCall = (*matchesCall)(nil)

func (m *matchesCall) ID() int64                           { return m.id }
func (m *matchesCall) Function() string                    { return m.function }
func (m *matchesCall) OverloadID() string                  { return m.overload }
func (m *matchesCall) Args() []interpreter.InterpretableV2 { return m.args }
func (m *matchesCall) Eval(act interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(act, m.Exec)
}

// Exec implements interpreter.InterpretableV2 with the semantics of cel-go's call: an error or
// unknown operand is the result, a non-string operand is "no such overload".
func (m *matchesCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	s := m.args[0].Exec(frame)
	switch s.(type) {
	case *types.Err:
		return s
	case *types.Unknown:
		m.track(frame, s, s)
		return s
	}
	var res ref.Val
	switch str := s.(type) {
	case types.String:
		res = types.Bool(m.re.MatchString(string(str)))
	default:
		if v, ok := s.Value().(string); ok {
			res = types.Bool(m.re.MatchString(v))
		} else {
			res = types.LabelErrNode(m.id, types.NoSuchOverloadErr())
		}
	}
	m.track(frame, s, res)
	return res
}

func (m *matchesCall) track(frame *interpreter.ExecutionFrame, s, res ref.Val) {
	if costs := frame.CostTracker(); costs != nil {
		costs.EvalBinary(frame, m.id, m, s, m.args[1].Exec(frame), res)
	}
}
