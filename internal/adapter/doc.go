// Package adapter lets agent runtimes that do not speak either AHP protocol — Claude Code and
// Codex — use the policy through their own hook mechanisms. It has three layers:
//
//   - the pure mapping (Map, Render): one native hook input (the JSON the runtime writes on a
//     command hook's stdin or POSTs to an http hook) becomes one canonical ahp.v1 Event, and one
//     canonical Decision becomes the runtime's own hook output JSON. No I/O, no clock, no
//     randomness beyond what Options supplies.
//   - the runner (Adapter.Handle, Adapter.Run): reads one input, calls
//     InterceptService.Intercept or ObservationService.Observe with a deadline, applies the
//     failure policy when no decision arrives, and produces the output, the exit status and the
//     stderr text of a per-event command hook.
//   - the HTTP form (Adapter.ServeHTTP) for Claude Code's "http" hook type: the hook JSON is the
//     POST body, the hook output is the response body.
//
// Which native event becomes which canonical event, and how it is served:
//
//	native             canonical                 served by   runtime can act on
//	PreToolUse         tool.before               Intercept   deny, ask*, modify, allow*, message
//	PermissionRequest  tool.permission.request   Intercept   deny, allow, ask, modify*, message
//	UserPromptSubmit   model.request.before      Intercept   deny, message
//	PostToolUse        tool.after                Observe     –
//	SessionStart       session.start             Observe     –
//	SessionEnd         session.end               Observe     –
//	Stop               turn.finish.before        Observe     –
//
// (* Claude Code only: Codex rejects permissionDecision "ask", and "allow" without updatedInput,
// from PreToolUse, and updatedInput from PermissionRequest.) Each intercepted event advertises
// exactly the effects its runtime can act on, so the policy engine applies its documented
// fallbacks (an ask a runtime cannot show becomes a deny saying approval is required) and records
// them. Any other hook event name is not adapted: the hook says nothing and exits 0.
//
// The answer never grants more than the policy did: no effect, or an allow the runtime cannot
// express, is "no decision" (empty output), which leaves the runtime's own permission flow in
// charge; only an explicit allow effect becomes permissionDecision/behavior "allow", and a modify
// effect becomes "allow" with updatedInput, since both runtimes apply updatedInput only together
// with a decision. Answers are always JSON on stdout with exit status 0; exit status 2 (the
// runtimes' "blocking error") is used only when the input cannot even be read under fail-closed.
// docs/adapters.md has the full tables and the documentation each choice rests on.
package adapter
