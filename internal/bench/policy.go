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
		fmt.Fprintf(&b, extraRules[i%len(extraRules)], i, 1000+i, 10000+i)
	}
	return b.Bytes()
}

// extraRules are the bodies of the rules BuiltinPolicy adds, used in turn. In each, %[1]d is the
// rule's number; %[2]d and %[3]d are an error count and a command size above any the benchmark's
// events reach.
var extraRules = [...]string{
	`    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.matches(r"\bterraform\s+destroy\b.*-target=module\.m%[1]d\b")'
    effect: {deny: {reason: "destroying module m%[1]d needs a change ticket"}}
`,
	`    on: [tool.before]
    match: {tool_names: ["mcp__svc%[1]d__delete_*"]}
    effect: {deny: {reason: "deletions through svc%[1]d are not allowed"}}
`,
	`    on: [tool.before]
    match: {tool_kinds: [file_write, file_edit]}
    when: 'has(input.path) && type(input.path) == string && input.path.endsWith(".lock%[1]d")'
    effect: {ask: {reason: "lock file %[1]d is generated"}}
`,
	`    on: [tool.before]
    when: 'session.error_count > %[2]d && tool.name == "Bash"'
    effect: {deny: {reason: "too many errors in this session"}}
`,
	`    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.startsWith("kubectl ") && input.command.contains("--namespace=prod%[1]d")'
    effect: {ask: {reason: "production namespace %[1]d"}}
`,
	`    on: [tool.before]
    match: {tool_kinds: [fetch]}
    when: 'has(input.url) && type(input.url) == string && input.url.startsWith("http://internal%[1]d.")'
    effect: {deny: {reason: "internal host %[1]d"}}
`,
	`    on: [tool.after]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.contains("secret%[1]d")'
    effect: {message: {text: "output of a command naming secret%[1]d"}}
`,
	`    on: [tool.before]
    match: {sources: ["urn:other-harness-%[1]d:*"]}
    when: 'has(input.command) && size(input.command) > %[3]d'
    effect: {deny: {reason: "command too long for harness %[1]d"}}
`,
}
