package policy

import (
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types/ref"
)

func TestLoadRefusesARuleWhoseCostHasNoBound(t *testing.T) {
	t.Parallel()
	// A function without a cost model gives a result of unknown size; scanning it has no bound.
	opaque := cel.Function("opaque", cel.Overload("opaque_string", []*cel.Type{cel.StringType}, cel.StringType,
		cel.UnaryBinding(func(v ref.Val) ref.Val { return v })))
	_, err := parse([]byte(`version: 1
rules:
  - id: unbounded
    when: 'opaque(input.command).matches("x")'
    effect: {deny: {reason: r}}
`), "t.yaml", opaque)
	if err == nil || !strings.Contains(err.Error(), `rule "unbounded": when: cost cannot be bounded`) {
		t.Fatalf("error %v, want the rule refused for an unbounded cost", err)
	}
}
