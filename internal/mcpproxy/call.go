package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"google.golang.org/protobuf/types/known/structpb"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/adapter"
	"github.com/ahp-gateway/ahp/internal/codec/jsonwire"
	"github.com/ahp-gateway/ahp/internal/names"
)

// Provider is origin.provider of every event the gateway sends.
const Provider = "mcp"

// MCP method names the relay looks at.
const (
	methodInitialize = "initialize"
	methodDiscover   = "server/discover"
	methodToolsCall  = "tools/call"
	methodCancelled  = "notifications/cancelled"
)

// metaDecisionID and metaApprovalID are the _meta keys of a refused call's result that carry
// the decision id and, when the policy backend held the call for a person's approval (or names
// the approval a retry needs), the approval id.
const (
	metaDecisionID = names.Namespace + "/decision_id"
	metaApprovalID = names.Namespace + "/approval_id"
)

// capabilities are the effects an MCP tool call can act on: refuse (with a tool error result),
// rewrite the arguments, an explicit allow, and notes for the model.
var capabilities = []ahpv1.EffectKind{
	ahpv1.EffectKind_EFFECT_KIND_DENY,
	ahpv1.EffectKind_EFFECT_KIND_ALLOW,
	ahpv1.EffectKind_EFFECT_KIND_MODIFY,
	ahpv1.EffectKind_EFFECT_KIND_MESSAGE,
}

// toolCall is a tools/call request as the relay reads it: the name and arguments it decides on,
// and every other params field verbatim so that a rewritten request keeps them.
type toolCall struct {
	name      string
	arguments *structpb.Struct
	params    map[string]json.RawMessage
}

// parseToolCall reads tools/call params. The error names the field, never its value.
func parseToolCall(raw json.RawMessage) (*toolCall, error) {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(raw, &params); err != nil || params == nil {
		return nil, errors.New("tools/call params must be a JSON object")
	}
	var name string
	if err := json.Unmarshal(params["name"], &name); err != nil || name == "" {
		return nil, errors.New("tools/call params.name must be a non-empty string")
	}
	c := &toolCall{name: name, params: params}
	if a, ok := params["arguments"]; ok && !bytes.Equal(bytes.TrimSpace(a), []byte("null")) {
		var args map[string]any
		if err := json.Unmarshal(a, &args); err != nil || args == nil {
			return nil, errors.New("tools/call params.arguments must be a JSON object")
		}
		s, err := structpb.NewStruct(args)
		if err != nil {
			return nil, fmt.Errorf("tools/call params.arguments: %w", err)
		}
		c.arguments = s
	}
	return c, nil
}

// withArguments returns the params with arguments replaced by args, everything else verbatim.
func (c *toolCall) withArguments(args *structpb.Struct) (json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(c.params)+1)
	for k, v := range c.params {
		out[k] = v
	}
	a, err := jsonwire.Marshal(args.AsMap())
	if err != nil {
		return nil, err
	}
	out["arguments"] = a
	return jsonwire.Marshal(out)
}

// identity is what the events say about the two peers of a session.
type identity struct {
	// server is the MCP server name in tool.mcp.server and tool.name.
	server string
	// sessionID is this proxy session's id (session.id of every event).
	sessionID string
	// serverInfo and clientInfo are the peers' own initialize claims ({name, version, …}); they
	// travel in the payload.
	serverInfo, clientInfo *structpb.Value
	protocolVersion        string
}

// callID is the stable tool.call_id of the tools/call with JSON-RPC id id: the same for its
// before and after events and unique within the session.
func callID(sessionID string, id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "mcp-" + sessionID + "-s" + v
	case int64:
		return "mcp-" + sessionID + "-" + strconv.FormatInt(v, 10)
	default:
		return "mcp-" + sessionID + "-" + fmt.Sprint(v)
	}
}

// toolName is tool.name for tool on server: Claude Code's mcp__SERVER__TOOL form, so that one
// rule sees the same MCP tool whether a runtime's hook or the gateway reports it.
func toolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// newTool builds the canonical tool of a call.
func (who *identity) newTool(c *toolCall, id jsonrpc.ID) *ahpv1.Tool {
	return &ahpv1.Tool{
		CallId: callID(who.sessionID, id),
		Name:   toolName(who.server, c.name),
		Kind:   ahpv1.ToolKind_TOOL_KIND_MCP,
		Input:  c.arguments,
		Mcp:    &ahpv1.McpTool{Server: who.server, Tool: c.name},
	}
}

// newEvent builds a canonical event of this session.
func (who *identity) newEvent(id string, typ ahpv1.EventType, now time.Time, tool *ahpv1.Tool) *ahpv1.Event {
	payload := map[string]*structpb.Value{}
	if who.serverInfo != nil {
		payload["mcp_server_info"] = who.serverInfo
	}
	if who.clientInfo != nil {
		payload["mcp_client_info"] = who.clientInfo
	}
	if who.protocolVersion != "" {
		payload["mcp_protocol_version"] = structpb.NewStringValue(who.protocolVersion)
	}
	ev := &ahpv1.Event{
		Id:      id,
		Type:    typ,
		Time:    now.UTC().Format(time.RFC3339Nano),
		Session: &ahpv1.Session{Id: who.sessionID},
		Origin: &ahpv1.Origin{
			Dialect:       ahpv1.Dialect_DIALECT_NATIVE,
			Provider:      Provider,
			EventType:     methodToolsCall,
			SynthesizedId: true,
		},
		Tool: tool,
	}
	if len(payload) > 0 {
		ev.Payload = structpb.NewStructValue(&structpb.Struct{Fields: payload})
	}
	return ev
}

// verdict is a decision reduced to what a tools/call can become.
type verdict uint8

const (
	forward verdict = iota // as sent
	refuse                 // a tool error result, the server never sees the call
	rewrite                // forwarded with changed arguments
)

// outcome is what the relay does with one call.
type outcome struct {
	verdict  verdict
	reason   string           // refuse: the text the model sees
	input    *structpb.Struct // rewrite: the new arguments
	messages []string         // notes for the model, whatever the verdict
	// approvalID is the approval the backend opened for the call (Decision.approval_id): it held
	// the call until a person decided, or its denial names the approval to decide.
	approvalID string
}

// reduce turns a decision into an outcome, never granting more than the decision says: the
// first deny refuses; an ask, escalate or defer (which the gateway does not advertise, so the
// policy engine normally falls back before) refuses saying why; a modify rewrites, or refuses
// when it changes something else than the input; an allow or no effect forwards. An ask with an
// `approval:` block needs no capability: the backend holds the call and answers with what the
// person decided (or a deny naming the approval), and the approval id is kept for the answer.
func reduce(d *ahpv1.Decision, orig *structpb.Struct) outcome {
	o := outcome{approvalID: d.GetApprovalId()}
	var deny, ask, deferral, modify *ahpv1.Effect
	for _, e := range d.GetEffects() {
		switch x := e.GetEffect().(type) {
		case *ahpv1.Effect_Deny:
			deny = firstOf(deny, e)
		case *ahpv1.Effect_Ask, *ahpv1.Effect_Escalate:
			ask = firstOf(ask, e)
		case *ahpv1.Effect_Defer:
			deferral = firstOf(deferral, e)
		case *ahpv1.Effect_Modify:
			modify = firstOf(modify, e)
		case *ahpv1.Effect_Message:
			if t := strings.TrimSpace(x.Message.GetText()); t != "" {
				o.messages = append(o.messages, t)
			}
		}
	}
	switch {
	case deny != nil:
		o.verdict, o.reason = refuse, orDefault(deny.GetDeny().GetReason(), adapter.DefaultDenyReason)
	case ask != nil:
		reason := orDefault(ask.GetAsk().GetReason(), "the policy asks for approval")
		if esc := ask.GetEscalate(); esc != nil {
			reason = orDefault(esc.GetReason(), "the policy escalates this call")
		}
		o.verdict, o.reason = refuse, "approval required: "+reason
	case deferral != nil:
		head := "retry later"
		if ms := deferral.GetDefer().GetRetryAfterMs(); ms > 0 {
			head = "retry in " + strconv.FormatUint(ms, 10) + "ms"
		}
		o.verdict, o.reason = refuse, head+": "+orDefault(deferral.GetDefer().GetReason(), "the policy defers this call")
	case modify != nil:
		in, ok := adapter.ChangedInput(orig, modify.GetModify())
		if !ok {
			o.verdict, o.reason = refuse, "input must be changed: "+orDefault(modify.GetModify().GetReason(), "the policy's change")+" (the MCP gateway can change only the arguments)"
			break
		}
		o.verdict, o.input = rewrite, in
	case d.GetVerdict() == ahpv1.Verdict_VERDICT_DENY:
		// A deny verdict without its effect is a malformed answer; it still means no.
		o.verdict, o.reason = refuse, adapter.DefaultDenyReason
	}
	return o
}

// refusal is the tools/call result of a refused call: a tool error whose text is the reason (the
// model reads it and can change course), then the messages, with the decision id and the
// approval id (when there is one) under _meta.
func refusal(reason string, messages []string, decisionID, approvalID string) json.RawMessage {
	content := make([]textContent, 0, 1+len(messages))
	content = append(content, textContent{Type: "text", Text: reason})
	for _, m := range messages {
		content = append(content, textContent{Type: "text", Text: m})
	}
	res := toolResult{Content: content, IsError: true}
	if decisionID != "" || approvalID != "" {
		res.Meta = map[string]string{}
		if decisionID != "" {
			res.Meta[metaDecisionID] = decisionID
		}
		if approvalID != "" {
			res.Meta[metaApprovalID] = approvalID
		}
	}
	out, err := jsonwire.Marshal(res)
	if err != nil { // cannot happen: strings and a bool
		panic(err)
	}
	return out
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Meta    map[string]string `json:"_meta,omitempty"`
	Content []textContent     `json:"content"`
	IsError bool              `json:"isError"`
}

// withMessages appends the policy's messages to a server's tools/call result as text items, so
// that the model sees them beside the tool's output; a result it cannot read is kept as is.
func withMessages(result json.RawMessage, messages []string) json.RawMessage {
	if len(messages) == 0 {
		return result
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil || obj == nil {
		return result
	}
	var content []json.RawMessage
	if c, ok := obj["content"]; ok && json.Unmarshal(c, &content) != nil {
		return result
	}
	for _, m := range messages {
		item, err := jsonwire.Marshal(textContent{Type: "text", Text: m})
		if err != nil {
			return result
		}
		content = append(content, item)
	}
	c, err := jsonwire.Marshal(content)
	if err != nil {
		return result
	}
	obj["content"] = c
	out, err := jsonwire.Marshal(obj)
	if err != nil {
		return result
	}
	return out
}

func firstOf(have, e *ahpv1.Effect) *ahpv1.Effect {
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
