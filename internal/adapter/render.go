package adapter

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/mergepatch"
)

// DefaultDenyReason is the reason of a denial whose effect gave none; both runtimes need a
// non-empty one (Codex ignores a deny without it).
const DefaultDenyReason = "Denied by policy."

// defaultAskReason is the reason of an ask whose effect gave none.
const defaultAskReason = "The policy asks for approval."

// verdict is what a decision says, reduced to what a hook can answer.
type verdict uint8

const (
	verdictNone   verdict = iota // no opinion: the runtime's own permission flow decides
	verdictAllow                 // an explicit grant
	verdictDeny                  // refuse
	verdictAsk                   // a human approves first
	verdictModify                // go ahead with a changed input
)

// answer is a decision reduced to one verdict, with its reason, the changed input and the
// messages for the user.
type answer struct {
	verdict  verdict
	reason   string
	input    *structpb.Struct
	messages []string
	// flow is a flow effect's operation ("stop" or "continue"), flowText its reason (stop) or
	// instruction (continue).
	flow, flowText string
	// context are the texts of inject effects, to add to the model's context.
	context []string
}

// defaultContinueReason is what a Stop hook's block says when a flow continue gave no
// instruction (Claude Code needs a reason: it is the agent's next instruction).
const defaultContinueReason = "The policy asks you to continue working before you stop."

// Render writes the runtime's hook output for decision d about an intercepted request, or nil
// when the hook has nothing to say — "no decision", which leaves the runtime's own permission flow
// in charge. notice, when not empty, is shown to the user (systemMessage) ahead of the decision's
// message effects; the runner labels the failure policy's answers with it.
//
// Claude Code (PreToolUse): deny, ask → permissionDecision deny/ask with the reason; modify →
// "allow" with updatedInput; an explicit allow → "allow"; no effect → nothing. PermissionRequest:
// deny → decision {behavior deny, message}; allow → {behavior allow}; modify → {behavior allow,
// updatedInput}; ask → nothing (the permission dialog is the asking). UserPromptSubmit: deny →
// decision "block" with the reason; flow stop → "continue": false with stopReason; inject →
// hookSpecificOutput.additionalContext. Stop, SubagentStop: flow continue → decision "block" with
// the instruction (which keeps the agent working); flow stop, and a deny → "continue": false with
// stopReason. Codex: the same JSON, within what its parser accepts (no ask
// or bare allow from PreToolUse, no updatedInput from PermissionRequest). An effect the event
// cannot express — which the advertised capabilities normally rule out — never turns into more
// than the policy said: an ask or a modify becomes a deny saying why, an allow becomes nothing.
func Render(req *Request, d *ahpv1.Decision, notice string) ([]byte, error) {
	out, err := RenderOutput(req, d, notice)
	return out.Stdout, err
}

var errNotIntercepted = errors.New("adapter: Render needs an intercepted request")

// writeClaude writes Claude Code's hook output (Codex's, Factory's and Copilot's VS Code format
// are the same JSON) for an answer narrowed to what the event can express.
func writeClaude(req *Request, a answer) (Output, error) {
	var err error
	out := hookOutput{SystemMessage: strings.Join(a.messages, "\n")}
	switch req.spec.native {
	case PreToolUse:
		s := &specificOutput{HookEventName: PreToolUse}
		switch a.verdict {
		case verdictDeny:
			s.PermissionDecision, s.PermissionDecisionReason = "deny", a.reason
		case verdictAsk:
			s.PermissionDecision, s.PermissionDecisionReason = "ask", a.reason
		case verdictAllow:
			s.PermissionDecision, s.PermissionDecisionReason = "allow", a.reason
		case verdictModify:
			s.PermissionDecision, s.PermissionDecisionReason = "allow", a.reason
			if s.UpdatedInput, err = encodeInput(req, a.input); err != nil {
				return Output{}, err
			}
		}
		if s.PermissionDecision != "" {
			out.HookSpecificOutput = s
		}
	case PermissionRequest:
		s := &specificOutput{HookEventName: PermissionRequest}
		switch a.verdict {
		case verdictDeny:
			s.Decision = &permissionDecision{Behavior: "deny", Message: a.reason}
		case verdictAllow:
			s.Decision = &permissionDecision{Behavior: "allow"}
		case verdictModify:
			s.Decision = &permissionDecision{Behavior: "allow"}
			if s.Decision.UpdatedInput, err = encodeInput(req, a.input); err != nil {
				return Output{}, err
			}
		}
		if s.Decision != nil {
			out.HookSpecificOutput = s
		}
	case UserPromptSubmit:
		// turn.start: deny blocks the prompt; flow stop ends the agent; inject adds context.
		switch {
		case a.verdict == verdictDeny:
			out.Decision, out.Reason = "block", a.reason
		case a.flow == "stop":
			out.Continue, out.StopReason = new(false), orDefault(a.flowText, DefaultDenyReason)
		case len(a.context) > 0:
			out.HookSpecificOutput = &specificOutput{HookEventName: UserPromptSubmit, AdditionalContext: strings.Join(a.context, "\n\n")}
		}
	case SessionStart:
		// session.start: inject adds context; there is nothing to refuse (a deny — only the
		// failure policy's — leaves its notice in systemMessage).
		if len(a.context) > 0 {
			out.HookSpecificOutput = &specificOutput{HookEventName: SessionStart, AdditionalContext: strings.Join(a.context, "\n\n")}
		}
	case Stop, SubagentStop:
		// turn.finish.before: "block" keeps the agent working (flow continue), with the reason as
		// its next instruction; "continue": false ends it (flow stop). A deny — only the failure
		// policy's, the event advertises none — ends it too: it never makes the agent do more.
		switch {
		case a.verdict == verdictDeny:
			out.Continue, out.StopReason = new(false), a.reason
		case a.flow == "stop":
			out.Continue, out.StopReason = new(false), orDefault(a.flowText, DefaultDenyReason)
		case a.flow == "continue":
			out.Decision, out.Reason = "block", orDefault(a.flowText, defaultContinueReason)
		}
	}
	return jsonOutput(out, out == (hookOutput{}))
}

// jsonOutput is the Output of a JSON answer on exit 0, or of no answer when empty.
func jsonOutput(v any, empty bool) (Output, error) {
	if empty {
		return Output{}, nil
	}
	b, err := marshal(v)
	return Output{Stdout: b}, err
}

// reduce picks the one verdict a hook can give: the first deny; else the first ask or escalate;
// else a defer (which no hook can express, so it refuses, saying when to retry); else the modify;
// else an explicit allow; else none. Message effects are collected whatever wins. The policy
// engine sends at most one of these; the order only matters for an answer from elsewhere.
func reduce(req *Request, d *ahpv1.Decision) answer {
	var deny, ask, deferral, modify, allow *ahpv1.Effect
	var a answer
	for _, e := range d.GetEffects() {
		switch x := e.GetEffect().(type) {
		case *ahpv1.Effect_Deny:
			deny = first(deny, e)
		case *ahpv1.Effect_Ask, *ahpv1.Effect_Escalate:
			ask = first(ask, e)
		case *ahpv1.Effect_Defer:
			deferral = first(deferral, e)
		case *ahpv1.Effect_Modify:
			modify = first(modify, e)
		case *ahpv1.Effect_Allow:
			allow = first(allow, e)
		case *ahpv1.Effect_Message:
			if t := strings.TrimSpace(x.Message.GetText()); t != "" {
				a.messages = append(a.messages, t)
			}
		case *ahpv1.Effect_Flow:
			if a.flow == "" && (x.Flow.GetOperation() == "stop" || x.Flow.GetOperation() == "continue") {
				a.flow, a.flowText = x.Flow.GetOperation(), x.Flow.GetReason()
				if a.flow == "continue" {
					a.flowText = x.Flow.GetInstruction()
				}
			}
		case *ahpv1.Effect_Inject:
			a.context = append(a.context, injectedText(x.Inject.GetValue())...)
		}
	}
	switch {
	case deny != nil:
		a.verdict, a.reason = verdictDeny, orDefault(deny.GetDeny().GetReason(), DefaultDenyReason)
	case ask != nil:
		a.verdict, a.reason = verdictAsk, askReason(ask)
	case deferral != nil:
		a.verdict, a.reason = verdictDeny, deferReason(deferral.GetDefer())
	case modify != nil:
		m := modify.GetModify()
		in, ok := ChangedInput(req.Event.GetTool().GetInput(), m)
		if !ok {
			a.verdict, a.reason = verdictDeny, "input must be changed: "+orDefault(m.GetReason(), "the policy's change")+" (this hook cannot apply it)"
			break
		}
		a.verdict, a.reason, a.input = verdictModify, m.GetReason(), in
	case allow != nil:
		a.verdict, a.reason = verdictAllow, allow.GetAllow().GetReason()
	case d.GetVerdict() == ahpv1.Verdict_VERDICT_DENY:
		// A deny verdict without its effect is a malformed answer; it still means no.
		a.verdict, a.reason = verdictDeny, DefaultDenyReason
	}
	return a
}

// fitTo narrows a to what the runtime can say for this event, never granting more than a says:
// an ask it cannot show becomes a deny saying approval is required (the policy engine's own
// fallback wording), a modify it cannot apply a deny saying the input must change, an allow it
// cannot express no decision. On PermissionRequest an ask is no decision — the runtime is about to
// ask the user — with its reason shown as a message.
func fitTo(req *Request, a answer) answer {
	s, p := req.spec, req.Provider
	switch a.verdict {
	case verdictAsk:
		if s.permission {
			a.messages = append(a.messages, "approval required: "+a.reason)
			a.verdict, a.reason = verdictNone, ""
		} else if !s.can(p, effAsk) {
			a.verdict, a.reason = verdictDeny, "approval required: "+a.reason
		}
	case verdictModify:
		if !s.can(p, effModify) {
			a.verdict, a.reason, a.input = verdictDeny, "input must be changed: "+orDefault(a.reason, "the policy changes this input")+" (this runtime cannot apply the change)", nil
		}
	case verdictAllow:
		if !s.can(p, effAllow) {
			a.verdict, a.reason = verdictNone, ""
		}
	}
	if a.flow != "" && !s.can(p, effFlow) {
		// A stop the event cannot express refuses, like the policy engine's fallback; a continue
		// never refuses anything and is dropped.
		if a.flow == "stop" && a.verdict == verdictNone && s.can(p, effDeny) {
			a.verdict, a.reason = verdictDeny, orDefault(a.flowText, DefaultDenyReason)
		}
		a.flow, a.flowText = "", ""
	}
	if !s.can(p, effInject) {
		a.context = nil
	}
	return a
}

// ChangedInput applies a modify effect to the tool input: its value replaces the input, or with
// operation MERGE is merged into it (RFC 7386). Only the tool input can be changed by a hook.
func ChangedInput(orig *structpb.Struct, m *ahpv1.ModifyEffect) (*structpb.Struct, bool) {
	switch m.GetTarget() {
	case ahpv1.ModifyTarget_MODIFY_TARGET_UNSPECIFIED, ahpv1.ModifyTarget_MODIFY_TARGET_INPUT:
	default:
		return nil, false
	}
	v := m.GetValue().GetStructValue()
	if v == nil {
		return nil, false
	}
	if m.GetOperation() == ahpv1.ModifyOperation_MODIFY_OPERATION_MERGE {
		return mergepatch.Apply(orig, v), true
	}
	return v, true
}

// encodeInput writes a changed tool input as the runtime expects it back (a key the mapping
// renamed gets its native name again).
func encodeInput(req *Request, in *structpb.Struct) (json.RawMessage, error) {
	m := in.AsMap()
	if native, canonical := req.renamed[0], req.renamed[1]; native != "" {
		if renamed := renameKey(m, canonical, native); renamed != nil {
			m = renamed
		}
	}
	return marshal(m)
}

// deferReason says why a deferred action is refused, in the policy engine's fallback wording.
func deferReason(d *ahpv1.DeferEffect) string {
	head := "retry later"
	if ms := d.GetRetryAfterMs(); ms > 0 {
		head = "retry in " + strconv.FormatUint(ms, 10) + "ms"
	}
	return head + ": " + orDefault(d.GetReason(), "the policy defers this action")
}

func askReason(e *ahpv1.Effect) string {
	if esc := e.GetEscalate(); esc != nil {
		reason := orDefault(esc.GetReason(), "the policy escalates this action")
		if t := esc.GetTarget(); t != "" {
			return "Escalated to " + t + ": " + reason
		}
		return reason
	}
	return orDefault(e.GetAsk().GetReason(), defaultAskReason)
}

func first(have, e *ahpv1.Effect) *ahpv1.Effect {
	if have != nil {
		return have
	}
	return e
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// hookOutput is the hook output JSON both runtimes read on stdout (exit 0) or in an http hook's
// response body. Only documented fields are ever written: Codex refuses unknown ones.
type hookOutput struct {
	// Decision "block" with a Reason refuses a UserPromptSubmit, and keeps the agent working at
	// Stop and SubagentStop (the reason is its next instruction).
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Continue false with a StopReason ends the agent's work (the reason is shown to the user).
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SystemMessage is shown to the user.
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput,omitempty"`
}

// specificOutput is hookSpecificOutput for PreToolUse (permissionDecision…), PermissionRequest
// (decision) and UserPromptSubmit (additionalContext).
type specificOutput struct {
	HookEventName            string              `json:"hookEventName"`
	PermissionDecision       string              `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string              `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage     `json:"updatedInput,omitempty"`
	Decision                 *permissionDecision `json:"decision,omitempty"`
	AdditionalContext        string              `json:"additionalContext,omitempty"`
}

// permissionDecision is a PermissionRequest hook's decision.
type permissionDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

// marshal writes compact JSON without HTML escaping and without a trailing newline.
func marshal(v any) ([]byte, error) { return jsonwire.Marshal(v) }
