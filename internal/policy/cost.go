package policy

import (
	"context"
	"errors"
	"fmt"
	"math"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/interpreter"
)

// ErrCostLimit is wrapped by the error of a rule whose expression reached the cost limit
// (Settings.CEL.CostLimit) and was stopped.
var ErrCostLimit = errors.New("CEL cost limit exceeded")

// ErrDeadline is wrapped, together with the context's error, by the error of the rule that was
// running (or next to run) when the evaluation's context ended.
var ErrDeadline = errors.New("evaluation cut off at the request deadline")

// sizeHintBytes bounds every string, list and map a request can carry, for the load-time
// estimate: the server's default request limit (4 MiB), which no value inside a request can
// exceed.
const sizeHintBytes = 4 << 20

// interruptEvery is how many comprehension iterations run between checks of the context.
const interruptEvery = 100

// requestSizeHints tells cel-go's estimator that variable data is at most sizeHintBytes long;
// with request set, that the parts of the variables taken from the request (event, tool, input,
// payload) are at most request bytes long.
type requestSizeHints struct{ request uint64 }

// EstimateSize implements cost.Estimator: every part of a variable is at most the request size.
func (h requestSizeHints) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	limit := uint64(sizeHintBytes)
	if h.request > 0 && fromRequest(path[0]) {
		limit = h.request
	}
	s := cost.RangedSizeEstimate(0, limit)
	return &s
}

// fromRequest reports whether a variable is made from the request alone (session is made from
// memory, now is fixed-size).
func fromRequest(variable string) bool {
	switch variable {
	case varEvent, varTool, varInput, varPayload:
		return true
	}
	return false
}

// fastTiers are the request sizes, largest first, for which a guarded expression is estimated
// again: where the estimate for requests of at most that size stays within the limit, such
// requests run the expression unguarded (see compiledExpr.fastBelow). No string, list or map
// built from a request is longer than its encoding.
var fastTiers = []uint64{1 << 20, 256 << 10, 64 << 10, 16 << 10, 4 << 10}

// fastBelow returns the largest of fastTiers for which the estimated maximum of ast stays
// within min(limit, the default limit), or 0. Estimates grow with the size, so the first tier
// that fits is the largest.
func fastBelow(env *cel.Env, ast *cel.Ast, limit uint64) uint64 {
	for _, tier := range fastTiers {
		est, err := env.EstimateCost(ast, requestSizeHints{request: tier})
		if err == nil && est.Max <= min(limit, defaultCELCostLimit) {
			return tier
		}
	}
	return 0
}

// EstimateCallCost implements cost.Estimator. The environment's cost models price every call;
// only an optional's value() and orValue() are given a size, which their models leave unknown
// although the optional holds part of a variable (`input.?path`) or a constant.
func (requestSizeHints) EstimateCallCost(_, overloadID string, _ *cost.AstNode, _ []cost.AstNode) *cost.CallEstimate {
	if overloadID != "optional_value" && overloadID != "optional_orValue_value" {
		return nil
	}
	size := cost.RangedSizeEstimate(0, sizeHintBytes)
	return cost.NewCallEstimate(cost.FixedCostEstimate(1), &size)
}

// checkCost refuses an expression whose estimated cost has no bound, or whose cheapest
// evaluation already exceeds limit, and reports whether the expression must run guarded (cost
// tracked, context checked): when its estimated maximum exceeds the limit. An estimate whose
// maximum exceeds the limit is accepted because it assumes every value at the request size at
// once (a patch of 4 MiB split into 4 Mi lines of 4 MiB each), far above what a request can
// hold; the run-time limit cuts off what really costs too much. An expression within the limit,
// and within the default limit, for 4 MiB values runs unguarded, at no cost: its work is small
// whatever the configured limit, and it grows at most linearly with the request (anything
// steeper estimates far above that at 4 MiB), so it stays bounded for the larger requests a
// server may be configured to accept.
func checkCost(env *cel.Env, ast *cel.Ast, limit uint64) (guarded bool, err error) {
	est, err := env.EstimateCost(ast, requestSizeHints{})
	if err != nil {
		return false, fmt.Errorf("cost estimate: %w", err)
	}
	switch {
	case est.Max == math.MaxUint64:
		return false, fmt.Errorf("cost cannot be bounded even for requests of at most %d bytes (cost limit %d)", sizeHintBytes, limit)
	case est.Min > limit:
		return false, fmt.Errorf("costs at least %d, above the cost limit %d", est.Min, limit)
	}
	return est.Max > min(limit, defaultCELCostLimit), nil
}

// programOptions plan an expression; a guarded one gets the run-time cost limit and context
// checks.
func programOptions(guarded bool, limit uint64) []cel.ProgramOption {
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), matchesRegex}
	if guarded {
		opts = append(opts, cel.CostLimit(limit), cel.InterruptCheckFrequency(interruptEvery))
	}
	return opts
}

// evalError labels a failed evaluation that was stopped by the cost limit or the context.
func evalError(ctx context.Context, err error) error {
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded {
		return ErrCostLimit
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrDeadline, context.Cause(ctx))
	}
	return err
}
