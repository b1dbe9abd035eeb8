// Package policy is the declarative policy engine: YAML rules with CEL conditions, evaluated
// against one canonical event (ahp.v1) into one canonical decision. It knows nothing of HTTP,
// JSON-RPC or dialects; the decision core calls Evaluate and the bridge renders the Result.
// docs/policy.md is the full reference; this comment is the summary.
//
// # Policy files
//
//	version: 1                      # required
//	name: laptop                    # optional; defaults to the file name
//	settings: {...}                 # optional: typed-decision settings (Settings, snake_case)
//	rules:
//	  - id: deny-destructive-shell  # required, unique, [a-z0-9][a-z0-9._-]*
//	    description: ...
//	    on: [tool.before]           # canonical, Harness (pre_action) or typed (idle) names; empty = all
//	    match:                      # optional pre-filters; OR inside a list, AND across lists
//	      tool_kinds: [shell]       # closed tool taxonomy by wire name
//	      tool_names: ["Bash", "mcp__github__*"]   # path.Match globs, case-sensitive
//	      sources: ["https://harness.example/*"]
//	      sessions: ["sess-*"]
//	      agents: ["agent-1"]
//	    when: 'input.command.matches("rm\\s+-rf")' # optional CEL boolean
//	    mode: enforce               # enforce (default) | dry-run
//	    fallback: deny              # deny (default) | no-effect
//	    effect:                     # exactly one of:
//	      deny:     {reason: ..., code: ...}
//	      allow:    {reason: ...}
//	      ask:      {reason: ...}
//	      modify:   {merge: {...}} | {merge_expr: CEL} | {input: CEL}, reason
//	      defer:    {retry_after_ms: 2000, reason: ...}
//	      escalate: {reason: ..., target: ...}
//	      message:  {text: ...} | {text_expr: CEL}
//	      typed:    {action, reason, strategy, task, hints, intent, confidence, facts,
//	                 knowledge, retry_after_ms, max_backoff_ms}  # no action: built-in answer
//
// Every reason may be given as reason_expr, a CEL string. Decoding is strict: unknown fields,
// duplicate ids, unknown event names, tool kinds and typed actions, bad globs and CEL that does
// not compile or has the wrong type are load errors naming the rule, its line and, for CEL, the
// position in the expression. Parse reports every error at once.
//
// # CEL
//
// Expressions are compiled, type-checked and planned once, at load (cel.OptOptimize, so regular
// expressions are compiled then too). Variables: event (the whole canonical event, snake_case),
// tool (= event.tool), input (the tool input), session (what session memory knows), payload
// (the typed payload in Harness wire names, or the dialect payload of untyped events) and now.
// Beyond standard CEL: optional types (input.?x.orValue(d)), the strings, sets, lists and
// bindings extensions, glob(s, pattern) and path.base/dir/ext/clean. Fixed fields are always
// present (zero when absent); JSON parts hold what the harness sent, so rules test them with
// has(). A run-time error makes that rule not match and is recorded in Result.Errors; whether
// that fails the decision closed is for the caller to decide.
//
// # Combining
//
// Rules run in file order and every matching rule is recorded in Result.MatchedRuleIDs.
// Dry-run rules record what they would have done (Result.DryRuns, Result.TypedDryRuns) and
// change nothing. Effects of enforce rules are first narrowed to the caller's capabilities,
// rule by rule: an effect the caller cannot express becomes a deny (fallback: deny, the default)
// or nothing (fallback: no-effect), and each such replacement is recorded in Result.Fallbacks;
// messages the caller cannot show are dropped and recorded; allow effects the caller did not
// advertise are dropped silently (no effect means the same). The narrowed effects then combine:
//
//   - deny wins over ask and escalate, which win over defer, over modify, over allow;
//   - only one effect of the winning kind is sent: the first deny, the first ask or escalate,
//     the defer with the longest wait, the first allow; modifications combine instead: each
//     applies to the input as the earlier ones left it, and one MODIFY effect (target input,
//     operation replace) carries the final input;
//   - message effects the caller can show accompany the winner, in rule order;
//   - no effect at all is VERDICT_ALLOW with no effects.
//
// Rules with a typed effect answer the eight Harness typed events (idle … confirmation): the
// first enforce match sets Result.Typed; generic effects still apply and the typed deciders
// turn them into the typed decision.
//
// # Operating
//
// A Policy is immutable and safe for concurrent use. Watcher keeps one in step with its file,
// swapping it atomically only for a valid new version. ParseTests and Policy.RunTests run
// policy test suites (YAML cases with expected decisions), the equivalent of `opa test`.
package policy
