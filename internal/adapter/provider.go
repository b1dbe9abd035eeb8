package adapter

import (
	"fmt"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
)

// Provider names a native hook format. Its String form is what events carry in origin.provider
// and native.provider.
type Provider int

const (
	// ClaudeCode is Anthropic's Claude Code (command and http hooks configured in
	// .claude/settings.json).
	ClaudeCode Provider = iota + 1
	// Codex is OpenAI's Codex CLI (command hooks in hooks.json or config.toml). Its hook JSON is
	// Claude Code's, with a stricter output parser: unknown output fields, permissionDecision
	// "ask", and "allow" without updatedInput make the hook count as failed.
	Codex
	// Cursor's agent hooks (.cursor/hooks.json): camelCase event names, answers in "permission".
	Cursor
	// Gemini is Google's Gemini CLI (hooks in .gemini/settings.json): "decision" allow/deny, no ask.
	Gemini
	// Copilot is GitHub Copilot CLI and VS Code agent hooks (.github/hooks/*.json), in both of
	// their payload formats: camelCase events (preToolUse) and the VS Code compatible PascalCase
	// ones (PreToolUse), which answer like Claude Code.
	Copilot
	// Factory is Factory's Droid (.factory/hooks.json): Claude Code's events and answers, with
	// camelCase input fields.
	Factory
	// Windsurf is Windsurf's Cascade hooks (.windsurf/hooks.json): a pre-hook can only block, by
	// exiting with status 2.
	Windsurf
	// Cline runs one executable per hook (.clinerules/hooks/PreToolUse …) and reads {"cancel": …}.
	Cline
)

// providerNames are the String forms, which ParseProvider accepts.
var providerNames = [...]string{
	ClaudeCode: "claude-code", Codex: "codex", Cursor: "cursor", Gemini: "gemini",
	Copilot: "copilot", Factory: "factory", Windsurf: "windsurf", Cline: "cline",
}

// String returns the provider's command-line name ("claude-code", "cursor", …).
func (p Provider) String() string {
	if p >= ClaudeCode && int(p) < len(providerNames) {
		return providerNames[p]
	}
	return fmt.Sprintf("Provider(%d)", int(p))
}

// ParseProvider parses "claude-code" or "codex" (any case, surrounding space ignored).
func ParseProvider(s string) (Provider, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, p := range Providers() {
		if providerNames[p] == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("adapter: unknown provider %q (want %s)", s, ProviderList())
}

// Providers lists every provider, in a stable order.
func Providers() []Provider {
	return []Provider{ClaudeCode, Codex, Cursor, Gemini, Copilot, Factory, Windsurf, Cline}
}

// ProviderList is the providers' names joined for messages: "claude-code, codex, …".
func ProviderList() string {
	names := make([]string, 0, len(providerNames))
	for _, p := range Providers() {
		names = append(names, providerNames[p])
	}
	return strings.Join(names, ", ")
}

// HasHTTPForm reports whether the runtime has http hooks, which Adapter.ServeHTTP serves (Claude
// Code; Codex shares its JSON). The others only run command hooks.
func HasHTTPForm(p Provider) bool { return p == ClaudeCode || p == Codex }

// delivery says which RPC carries an event.
type delivery uint8

const (
	// intercept: InterceptService.Intercept; the decision is rendered in the runtime's terms.
	intercept delivery = iota + 1
	// observe: ObservationService.Observe; the hook has nothing to say back.
	observe
)

// eventSpec is how one native hook event maps onto the canonical API.
type eventSpec struct {
	native    string
	canonical ahpv1.EventType
	delivery  delivery
	// tool events carry tool_name, tool_input and tool_use_id (PostToolUse also tool_response).
	tool bool
	// caps are the effects each provider can act on for this event (intercepted events only).
	caps map[Provider][]ahpv1.EffectKind
	// toolName and kind name the tool of an event that is about one kind of tool and carries no
	// tool name (Cursor's beforeShellExecution, Windsurf's pre_run_command, …).
	toolName string
	kind     ahpv1.ToolKind
	// permission marks an event that fires when the runtime is about to ask the user anyway, where
	// an ask is no decision (Claude Code's PermissionRequest).
	permission bool
}

const (
	effDeny     = ahpv1.EffectKind_EFFECT_KIND_DENY
	effAllow    = ahpv1.EffectKind_EFFECT_KIND_ALLOW
	effAsk      = ahpv1.EffectKind_EFFECT_KIND_ASK
	effModify   = ahpv1.EffectKind_EFFECT_KIND_MODIFY
	effEscalate = ahpv1.EffectKind_EFFECT_KIND_ESCALATE
	effMessage  = ahpv1.EffectKind_EFFECT_KIND_MESSAGE

	// The canonical types and kinds the runtime tables use most.
	evToolBefore = ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE
	evToolAfter  = ahpv1.EventType_EVENT_TYPE_TOOL_AFTER
	kindShell    = ahpv1.ToolKind_TOOL_KIND_SHELL
	kindMCP      = ahpv1.ToolKind_TOOL_KIND_MCP
	kindFileRead = ahpv1.ToolKind_TOOL_KIND_FILE_READ
)

// Native event names, as both runtimes spell them in hook_event_name (SubagentStop, PreCompact
// and Notification are Claude Code's only).
const (
	PreToolUse        = "PreToolUse"
	PermissionRequest = "PermissionRequest"
	UserPromptSubmit  = "UserPromptSubmit"
	PostToolUse       = "PostToolUse"
	SessionStart      = "SessionStart"
	SessionEnd        = "SessionEnd"
	Stop              = "Stop"
	SubagentStop      = "SubagentStop"
	PreCompact        = "PreCompact"
	Notification      = "Notification"
)

const (
	effFlow   = ahpv1.EffectKind_EFFECT_KIND_FLOW
	effInject = ahpv1.EffectKind_EFFECT_KIND_INJECT

	evTurnStart  = ahpv1.EventType_EVENT_TYPE_TURN_START
	evTurnFinish = ahpv1.EventType_EVENT_TYPE_TURN_FINISH_BEFORE
	evCompact    = ahpv1.EventType_EVENT_TYPE_CONTEXT_COMPACT_BEFORE
	evAttention  = ahpv1.EventType_EVENT_TYPE_USER_ATTENTION
	evPermission = ahpv1.EventType_EVENT_TYPE_TOOL_PERMISSION_REQUEST
)

// events is the mapping table (docs/adapters.md, "Events"), onto the Agent Hooks "draft"
// catalogue where the meaning coincides. The effect lists are the documented abilities of each
// runtime's output for that event:
//
//   - PreToolUse: permissionDecision deny/ask/allow and updatedInput (Claude Code); Codex accepts
//     deny, and allow only together with updatedInput.
//   - PermissionRequest: decision.behavior allow/deny, updatedInput with allow (Claude Code only);
//     "ask" is no decision at all, since the runtime is about to ask the user anyway.
//   - UserPromptSubmit (turn.start): decision "block" with a reason (deny), "continue": false with
//     stopReason (flow stop), hookSpecificOutput.additionalContext (inject); nothing can ask or
//     rewrite the prompt.
//   - SessionStart (session.start): hookSpecificOutput.additionalContext (inject).
//   - Stop, SubagentStop (turn.finish.before): decision "block" with a reason keeps the agent
//     working with the reason as its next instruction (flow continue); "continue": false with
//     stopReason ends it (flow stop). There is no deny: the draft has none at this event.
//
// Every intercepted event can carry a systemMessage, which is how message effects are shown.
var events = map[string]*eventSpec{
	PreToolUse: {
		native: PreToolUse, canonical: ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, delivery: intercept, tool: true,
		caps: map[Provider][]ahpv1.EffectKind{
			ClaudeCode: {effDeny, effAllow, effAsk, effEscalate, effModify, effMessage},
			Codex:      {effDeny, effModify, effMessage},
		},
	},
	PermissionRequest: {
		native: PermissionRequest, canonical: evPermission, delivery: intercept, tool: true, permission: true,
		caps: map[Provider][]ahpv1.EffectKind{
			ClaudeCode: {effDeny, effAllow, effAsk, effEscalate, effModify, effMessage},
			Codex:      {effDeny, effAllow, effAsk, effEscalate, effMessage},
		},
	},
	UserPromptSubmit: {
		native: UserPromptSubmit, canonical: evTurnStart, delivery: intercept,
		caps: map[Provider][]ahpv1.EffectKind{
			ClaudeCode: {effDeny, effFlow, effInject, effMessage},
			Codex:      {effDeny, effFlow, effInject, effMessage},
		},
	},
	PostToolUse: {native: PostToolUse, canonical: ahpv1.EventType_EVENT_TYPE_TOOL_AFTER, delivery: observe, tool: true},
	// SessionStart can add context (hookSpecificOutput.additionalContext) and refuse nothing.
	SessionStart: {native: SessionStart, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_START, delivery: intercept,
		caps: map[Provider][]ahpv1.EffectKind{
			ClaudeCode: {effInject, effMessage},
			Codex:      {effInject, effMessage},
		},
	},
	SessionEnd: {native: SessionEnd, canonical: ahpv1.EventType_EVENT_TYPE_SESSION_END, delivery: observe},
	// Stop fires when the agent is about to end its turn, which is the draft catalogue's
	// turn.finish.before; a policy can let it end (no effect), end it for good (flow stop) or keep
	// it working (flow continue).
	Stop: {native: Stop, canonical: evTurnFinish, delivery: intercept,
		caps: map[Provider][]ahpv1.EffectKind{
			ClaudeCode: {effFlow, effMessage},
			Codex:      {effFlow, effMessage},
		},
	},
	SubagentStop: {native: SubagentStop, canonical: evTurnFinish, delivery: intercept,
		caps: capsFor(ClaudeCode, effFlow, effMessage)},
	// PreCompact and Notification have no decision control in Claude Code: recorded.
	PreCompact:   {native: PreCompact, canonical: evCompact, delivery: observe},
	Notification: {native: Notification, canonical: evAttention, delivery: observe},
}

// capsFor gives one provider's effect list for an event of its own table.
func capsFor(p Provider, effects ...ahpv1.EffectKind) map[Provider][]ahpv1.EffectKind {
	return map[Provider][]ahpv1.EffectKind{p: effects}
}

func init() {
	tables := map[Provider][]string{
		ClaudeCode: {PreToolUse, PermissionRequest, UserPromptSubmit, PostToolUse, SessionStart, SessionEnd, Stop, SubagentStop, PreCompact, Notification},
		// Codex has no SubagentStop, PreCompact or Notification hook.
		Codex: {PreToolUse, PermissionRequest, UserPromptSubmit, PostToolUse, SessionStart, SessionEnd, Stop},
	}
	for p, order := range tables {
		table := make(map[string]*eventSpec, len(order))
		for _, name := range order {
			table[name] = events[name]
		}
		formats[p] = &format{
			eventFields: []string{fieldEventName}, events: table, order: order,
			toolNameField: fieldToolName, toolInputField: fieldToolInput,
			read:  readClaude(p, claudeKeys{session: []string{fieldSessionID}, callID: []string{fieldToolUseID}}),
			write: writeClaude,
		}
	}
}

// can reports whether provider p can act on effect k for this event.
func (s *eventSpec) can(p Provider, k ahpv1.EffectKind) bool {
	for _, e := range s.caps[p] {
		if e == k {
			return true
		}
	}
	return false
}

// capabilities returns the Capabilities advertised for this event.
func (s *eventSpec) capabilities(p Provider) *ahpv1.Capabilities {
	return &ahpv1.Capabilities{Effects: append([]ahpv1.EffectKind(nil), s.caps[p]...)}
}

// refuses reports whether some runtime can refuse at this event (it advertises deny): only there
// is a blocking error (exit 2) the safe answer to a hook that cannot run.
func (s *eventSpec) refuses() bool {
	for _, effs := range s.caps {
		for _, e := range effs {
			if e == effDeny {
				return true
			}
		}
	}
	return false
}

// keepsGoingOnExit2 reports whether a blocking error (exit 2) from a hook for this event makes the
// agent go on rather than stop — Stop and SubagentStop (turn.finish.before), where exit 2 is
// never the safe answer.
func (s *eventSpec) keepsGoingOnExit2() bool { return s.canonical == evTurnFinish }

// Decides reports whether the adapter asks the policy for a decision about provider p's native
// event hookEvent (PreToolUse, beforeShellExecution, …), as opposed to only recording it or not
// adapting it at all.
func Decides(p Provider, hookEvent string) bool {
	f := formats[p]
	if f == nil {
		return false
	}
	s := f.events[hookEvent]
	return s != nil && s.delivery == intercept
}

// Refuses reports whether the adapter can refuse something at provider p's native event
// hookEvent (it is decided and advertises deny). Only there is a blocking hook failure — exit 2,
// Claude Code's onFailure "block" — the fail-closed answer: at Stop it would keep the agent
// going, at SessionStart it refuses nothing.
func Refuses(p Provider, hookEvent string) bool {
	f := formats[p]
	if f == nil {
		return false
	}
	s := f.events[hookEvent]
	return s != nil && s.delivery == intercept && s.refuses()
}

// AdaptedEvents lists provider p's native event names the adapter maps, in a stable order.
func AdaptedEvents(p Provider) []string {
	f := formats[p]
	if f == nil {
		return nil
	}
	return append([]string(nil), f.order...)
}
