package bench

import (
	"bytes"
	"fmt"

	"github.com/ahp-gateway/ahp/internal/policy"
)

// PolicyRules is the number of rules in BuiltinPolicy.
const PolicyRules = 50

// BuiltinPolicyName is the name of BuiltinPolicy, as the server logs and reports it.
const BuiltinPolicyName = "ahp-bench-50"

// BuiltinPolicy returns the YAML of the policy ahp-bench serves when no --policy is given: the
// server's embedded default policy (so `ls -la` is allowed and `rm -rf /` denied) followed by
// enough further rules to make PolicyRules. The extra rules look like a real deployment's — shell
// regexes, tool-name globs, path checks, session counters, sources, other event types — and none
// of them matches the benchmark's events, so every event is checked against all of them and the
// verdicts stay those of the default policy.
func BuiltinPolicy() []byte {
	src := policy.DefaultSource()
	src = bytes.Replace(src, []byte("\nname: default\n"), []byte("\nname: "+BuiltinPolicyName+"\n"), 1)
	var b bytes.Buffer
	b.Write(bytes.TrimRight(src, "\n"))
	b.WriteString("\n\n  # Rules added by ahp-bench: none matches the benchmark's events.\n")
	extra := PolicyRules - len(policy.Default().Rules())
	for i := range extra {
		fmt.Fprintf(&b, "  - id: bench-%02d\n", i)
		switch i % 8 {
		case 0:
			fmt.Fprintf(&b, "    on: [tool.before]\n    match: {tool_kinds: [shell]}\n"+
				"    when: 'has(input.command) && input.command.matches(r\"\\bterraform\\s+destroy\\b.*-target=module\\.m%d\\b\")'\n"+
				"    effect: {deny: {reason: \"destroying module m%d needs a change ticket\"}}\n", i, i)
		case 1:
			fmt.Fprintf(&b, "    on: [tool.before]\n    match: {tool_names: [\"mcp__svc%d__delete_*\"]}\n"+
				"    effect: {deny: {reason: \"deletions through svc%d are not allowed\"}}\n", i, i)
		case 2:
			fmt.Fprintf(&b, "    on: [tool.before]\n    match: {tool_kinds: [file_write, file_edit]}\n"+
				"    when: 'has(input.path) && type(input.path) == string && input.path.endsWith(\".lock%d\")'\n"+
				"    effect: {ask: {reason: \"lock file %d is generated\"}}\n", i, i)
		case 3:
			fmt.Fprintf(&b, "    on: [tool.before]\n"+
				"    when: 'session.error_count > %d && tool.name == \"Bash\"'\n"+
				"    effect: {deny: {reason: \"too many errors in this session\"}}\n", 1000+i)
		case 4:
			fmt.Fprintf(&b, "    on: [tool.before]\n    match: {tool_kinds: [shell]}\n"+
				"    when: 'has(input.command) && input.command.startsWith(\"kubectl \") && input.command.contains(\"--namespace=prod%d\")'\n"+
				"    effect: {ask: {reason: \"production namespace %d\"}}\n", i, i)
		case 5:
			fmt.Fprintf(&b, "    on: [tool.before]\n    match: {tool_kinds: [fetch]}\n"+
				"    when: 'has(input.url) && type(input.url) == string && input.url.startsWith(\"http://internal%d.\")'\n"+
				"    effect: {deny: {reason: \"internal host %d\"}}\n", i, i)
		case 6:
			fmt.Fprintf(&b, "    on: [tool.after]\n    match: {tool_kinds: [shell]}\n"+
				"    when: 'has(input.command) && input.command.contains(\"secret%d\")'\n"+
				"    effect: {message: {text: \"output of a command naming secret%d\"}}\n", i, i)
		case 7:
			fmt.Fprintf(&b, "    on: [tool.before]\n    match: {sources: [\"urn:other-harness-%d:*\"]}\n"+
				"    when: 'has(input.command) && size(input.command) > %d'\n"+
				"    effect: {deny: {reason: \"command too long for harness %d\"}}\n", i, 10000+i, i)
		}
	}
	return b.Bytes()
}
