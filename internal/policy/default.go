package policy

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"google.golang.org/protobuf/proto"

	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
)

//go:embed default.yaml
var defaultYAML []byte

// defaultChecked holds every CEL expression of default.yaml already parsed and type-checked
// against celEnv, as written by encodeChecked. Parsing CEL is most of what loading the
// built-in policy costs in a fresh process (the parser warms up on its first inputs), and the
// policy is fixed at build time, so that work is done once, when this file is generated:
//
//	go test ./internal/policy -run TestDefaultChecked -update-default-checked
//
// TestDefaultChecked fails when the file does not match what compiling default.yaml gives
// today (a changed policy, environment or cel-go). Only Default uses it: every other policy,
// including a copy of default.yaml given as a file, is parsed and checked from its source.
//
//go:embed default.checked
var defaultCheckedData []byte

var defaultPolicy = sync.OnceValue(func() *Policy {
	// Were the checked expressions unreadable, compiling from source gives the same policy,
	// only slower; TestDefaultChecked keeps that from shipping.
	checked, _ := decodeChecked(defaultCheckedData)
	p, err := parseWith(defaultYAML, "default.yaml", compiler{checked: checked})
	if err != nil {
		// The embedded policy is tested; failing here means the binary was built broken.
		panic("policy: embedded default policy does not load: " + err.Error())
	}
	return p
})

// Default returns the built-in policy used when no policy file is configured: sensible for an
// agent on a laptop (it refuses machine-destroying shell commands, asks before force-pushing to
// main or master and before piping downloads into a shell, and keeps agents from writing secret
// files). The same *Policy is returned on every call; it is immutable.
func Default() *Policy { return defaultPolicy() }

// DefaultSource returns a copy of the built-in policy's YAML, for `policy print-default`-style
// commands and as a starting point for custom policies.
func DefaultSource() []byte { return append([]byte(nil), defaultYAML...) }

// encodeChecked writes checked expressions as a sequence of records, in the order of srcs:
// uvarint length and bytes of the source, then uvarint length and bytes of its CheckedExpr.
func encodeChecked(srcs []string, asts map[string]*cel.Ast) ([]byte, error) {
	var out []byte
	for _, src := range srcs {
		ce, err := cel.AstToCheckedExpr(asts[src])
		if err != nil {
			return nil, err
		}
		pb, err := proto.MarshalOptions{Deterministic: true}.Marshal(ce)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(src)))
		out = append(out, src...)
		out = binary.AppendUvarint(out, uint64(len(pb)))
		out = append(out, pb...)
	}
	return out, nil
}

// decodeChecked reads what encodeChecked wrote, keyed by source text.
func decodeChecked(data []byte) (map[string]*cel.Ast, error) {
	errCorrupt := errors.New("policy: corrupt checked expressions")
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return nil, false
		}
		b := data[k : k+int(n)]
		data = data[k+int(n):]
		return b, true
	}
	out := make(map[string]*cel.Ast)
	for len(data) > 0 {
		src, ok1 := next()
		pb, ok2 := next()
		if !ok1 || !ok2 {
			return nil, errCorrupt
		}
		var ce exprpb.CheckedExpr
		if err := proto.Unmarshal(pb, &ce); err != nil {
			return nil, err
		}
		ast, err := cel.CheckedExprToAstWithSource(&ce, common.NewTextSource(string(src)))
		if err != nil {
			return nil, err
		}
		out[string(src)] = ast
	}
	return out, nil
}
