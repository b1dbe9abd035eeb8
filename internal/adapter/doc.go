// Package adapter lets agent runtimes that speak neither AHP protocol — Claude Code, Codex,
// Cursor, Gemini CLI, GitHub Copilot (CLI and VS Code), Factory Droid, Windsurf Cascade and Cline —
// use the policy through their own hook mechanisms. It has three layers:
//
//   - the pure mapping (Map, Render, RenderOutput): one native hook input (the JSON the runtime
//     writes on a command hook's stdin or POSTs to an http hook) becomes one canonical ahp.v1
//     Event, and one canonical Decision becomes the runtime's own answer — JSON on stdout, and
//     for Windsurf an exit status. No I/O, no clock, no randomness beyond what Options supplies.
//   - the runner (Adapter.Handle, Adapter.Run): reads one input, calls
//     InterceptService.Intercept or ObservationService.Observe with a deadline, applies the
//     failure policy when no decision arrives, and produces the output, the exit status and the
//     stderr text of a per-event command hook.
//   - the HTTP form (Adapter.ServeHTTP) for Claude Code's "http" hook type: the hook JSON is the
//     POST body, the hook output is the response body.
//
// Each runtime is one file (claude-code and codex share provider.go and render.go; cursor.go,
// gemini.go, copilot.go, factory.go, windsurf.go, cline.go) holding its format: the field that
// names the event, its events table (which canonical type, decided or recorded, the effects the
// runtime can act on), the reader of its fields and the writer of its answers. Claude Code's
// table:
//
//	native             canonical (draft)         served by   runtime can act on
//	PreToolUse         tool.before               Intercept   deny, ask*, modify, allow*, message
//	PermissionRequest  tool.permission.request   Intercept   deny, allow, ask, modify*, message
//	UserPromptSubmit   turn.start                Intercept   deny, flow stop, inject, message
//	PostToolUse        tool.after                Observe     –
//	SessionStart       session.start             Intercept   inject, message
//	SessionEnd         session.end               Observe     –
//	Stop               turn.finish.before        Intercept   flow stop, flow continue, message
//	SubagentStop†      turn.finish.before        Intercept   flow stop, flow continue, message
//	PreCompact†        context.compact.before    Observe     –
//	Notification†      user.attention            Observe     –
//
// († Claude Code only.) Events the Agent Hooks "draft" catalogue has get its typed members
// (catalogue.go): a policy rule on turn.start sees a draft harness and a UserPromptSubmit alike.
// At Stop, the runtime's decision "block" keeps the agent working: it is what flow continue
// becomes, while flow stop (and the failure policy's deny) is "continue": false.
// (* Claude Code only: Codex rejects permissionDecision "ask", and "allow" without updatedInput,
// from PreToolUse, and updatedInput from PermissionRequest.) docs/adapters.md has every runtime's
// table. Each intercepted event advertises exactly the effects its runtime can act on, so the
// policy engine applies its documented fallbacks (an ask a runtime cannot show becomes a deny
// saying approval is required) and records them. Any other hook event name is not adapted: the
// hook says nothing (or the little the runtime must read) and exits 0.
//
// The answer never grants more than the policy did: no effect, or an allow the runtime cannot
// express, is "no decision", which leaves the runtime's own permission flow in charge; only an
// explicit allow effect becomes an allow, and a modify effect becomes the runtime's input rewrite
// where it has one. Answers are JSON on stdout with exit status 0, except Windsurf's, whose only
// way to block is exit status 2 with the reason on stderr; exit status 2 is otherwise used only
// when the input cannot even be read under fail-closed.
package adapter
