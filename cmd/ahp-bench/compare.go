package main

import (
	"fmt"
	"io"

	"github.com/ahp-gateway/ahp/internal/bench"
	"github.com/ahp-gateway/ahp/internal/cli"
)

const genPoliciesUsage = `Usage: ahp-bench gen-policies [flags]

Writes one list of shell-command regex rules as two policies: DIR/NAME.yaml for ahp-server (each
rule: on tool.before, match {tool_kinds: [shell]}, when input.command.matches(r"…"), deny) and
DIR/NAME.rego for OPA (v1 syntax; the decision at data.ahp.bench.decision, its input the JSON body
of an ahp.v1 Intercept request). The last rule denies "rm -rf /"; no other rule matches the
benchmark's commands, so every event is checked against every rule. ahp-bench compare generates
the same files itself.

Flags:
`

func runGenPolicies(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := cli.NewFlags("ahp-bench gen-policies", stderr, getenv, genPoliciesUsage)
	rules := fs.Int("rules", bench.PolicyRules, fmt.Sprintf("number of rules (1 to %d)", bench.MaxRules), "")
	dir := fs.String("dir", ".", "directory to write the two files into", "")
	name := fs.String("name", "opa-compare", "base name of the files and name of the ahp policy", "")
	if status, ok := fs.Parse(args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return fs.Failf("unexpected argument %q (see -help)", fs.Arg(0))
	}
	files, err := bench.WritePolicies(*dir, *name, *rules)
	if err != nil {
		return fs.Failf("%v", err)
	}
	fmt.Fprintf(stdout, "%s\n%s\n", files.CEL, files.Rego)
	return 0
}
