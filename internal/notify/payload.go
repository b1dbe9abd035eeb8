package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ahp-gateway/ahp/internal/approval"
)

// Payload is the JSON body of a webhook notification.
type Payload struct {
	// Type is "approval.requested".
	Type string `json:"type"`
	// ApprovalID identifies the approval.
	ApprovalID string `json:"approval_id"`
	// RuleID is the first approval rule; RuleIDs all of them.
	RuleID  string   `json:"rule_id"`
	RuleIDs []string `json:"rule_ids"`
	// Kind is ask or escalate; Target the escalate target.
	Kind   string `json:"kind"`
	Target string `json:"target,omitempty"`
	// Reason is the rule's reason (redacted).
	Reason string `json:"reason,omitempty"`
	// Agent, Session, Tool and EventType describe the held call.
	Agent     string `json:"agent_id,omitempty"`
	Session   string `json:"session_id,omitempty"`
	Tool      string `json:"tool,omitempty"`
	EventType string `json:"event_type,omitempty"`
	// Input is the redacted summary of the tool input.
	Input string `json:"input_summary,omitempty"`
	// HoldUntil is when the approval expires undecided (RFC 3339).
	HoldUntil string `json:"hold_until"`
	// Link is where to decide.
	Link string `json:"link,omitempty"`
}

// PayloadOf builds the payload of a, with every free-text field through redact.
func PayloadOf(a approval.Approval, link string, redact func(string) string) Payload {
	return Payload{
		Type: "approval.requested", ApprovalID: a.ID, RuleID: firstRule(a.RuleIDs), RuleIDs: a.RuleIDs,
		Kind: a.Kind, Target: redact(a.Target), Reason: redact(a.Reason), Agent: redact(a.Agent), Session: redact(a.Session),
		Tool: redact(a.Tool), EventType: a.EventType, Input: redact(a.Input),
		HoldUntil: a.HoldUntil.UTC().Format(time.RFC3339), Link: link,
	}
}

func (d *Dispatcher) body(n *notifier, a approval.Approval) ([]byte, error) {
	link := ""
	if d.opts.Link != nil {
		link = d.opts.Link(a.ID)
	}
	p := PayloadOf(a, link, d.opts.Redact)
	if n.kind == KindWebhook {
		return json.Marshal(p)
	}
	return json.Marshal(slackMessage(p))
}

// slackMessage is the Slack incoming-webhook shape: a plain-text fallback and a few blocks.
func slackMessage(p Payload) map[string]any {
	head := fmt.Sprintf("Approval needed: %s by %s", dashed(p.Tool), dashed(p.Agent))
	lines := []string{
		"*Reason:* " + slackEscape(dashed(p.Reason)),
		"*Rule:* `" + slackEscape(p.RuleID) + "`   *Session:* `" + slackEscape(dashed(p.Session)) + "`",
		"*Decide before:* " + p.HoldUntil + "   *Approval:* `" + p.ApprovalID + "`",
	}
	if p.Input != "" {
		lines = append(lines, "```"+slackEscape(strings.ReplaceAll(p.Input, "```", "'''"))+"```")
	}
	if p.Link != "" {
		lines = append(lines, "<"+p.Link+"|Decide>")
	} else {
		lines = append(lines, "Decide with `ahp-server approvals approve "+p.ApprovalID+"` or `deny`.")
	}
	return map[string]any{
		"text": slackEscape(head),
		"blocks": []any{
			map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": head}},
			map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": strings.Join(lines, "\n")}},
		},
	}
}

// slackEscape escapes the three characters Slack's mrkdwn gives meaning to.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstRule(r []string) string {
	if len(r) == 0 {
		return ""
	}
	return r[0]
}
