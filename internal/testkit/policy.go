package testkit

// PolicyYAML returns a version 1 policy named name whose first two rules are
//   - deny-rm: shell commands starting with "rm " are denied (reason "no rm", code
//     dev.ahpgateway.test.rm);
//   - ask-push: commands starting with "git push" ask (reason "pushing needs a human");
//
// followed by extraRules, YAML list items indented as "  - id: …".
func PolicyYAML(name, extraRules string) string {
	return `
version: 1
name: ` + name + `
rules:
  - id: deny-rm
    on: [tool.before]
    match: {tool_kinds: [shell]}
    when: 'has(input.command) && input.command.startsWith("rm ")'
    effect: {deny: {reason: "no rm", code: dev.ahpgateway.test.rm}}
  - id: ask-push
    on: [tool.before]
    when: 'has(input.command) && input.command.startsWith("git push")'
    effect: {ask: {reason: "pushing needs a human"}}
` + extraRules
}
