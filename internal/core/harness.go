package core

import (
	"context"
	"errors"
	"strings"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/ahp-gateway/ahp/internal/policy"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// HarnessProtocolVersion is the Agent Harness Protocol version this server speaks.
const HarnessProtocolVersion = "2.4"

// HooksProtocolVersions are the Agent Hooks Protocol versions this server serves.
var HooksProtocolVersions = []string{"0.1", "draft"}

// harnessCapabilityNames are advertised in the handshake: the reference server's list plus the
// typed decisions this server answers.
var harnessCapabilityNames = []string{
	"pre_action", "post_action", "pre_prompt", "query", "batch", "run_lifecycle", "task_list", "verification",
	"idle", "intent_detection", "context_perception", "memory_recall", "planning", "reasoning", "rate_limit", "confirmation",
}

// Handshake checks the major protocol version exactly as the Harness reference does ("2", "2.0",
// "2.99.1" accepted; "3.0", "02.4" and "" refused) and describes the server.
func (c *Core) Handshake(_ context.Context, req *ahpv1.HandshakeRequest) (*ahpv1.HandshakeResponse, error) {
	major, _, _ := strings.Cut(req.GetProtocolVersion(), ".")
	want, _, _ := strings.Cut(HarnessProtocolVersion, ".")
	if major != want {
		return nil, &Error{Code: CodeFailedPrecondition, Field: "protocol_version", Reason: "Unsupported protocol version: " + req.GetProtocolVersion()}
	}
	limits := c.cfg.Limits
	return &ahpv1.HandshakeResponse{
		ProtocolVersion: HarnessProtocolVersion,
		HarnessInfo: &ahpv1.HarnessInfo{
			Name:         c.cfg.ServerName,
			Version:      c.cfg.Version,
			Capabilities: append([]string(nil), harnessCapabilityNames...),
		},
		Config: &ahpv1.HarnessConfig{
			TimeoutMs: proto.Uint64(limits.TimeoutMs),
			BatchSize: proto.Uint64(limits.BatchSize),
			MaxDepth:  proto.Uint32(limits.MaxDepth),
		},
	}, nil
}

// Query answers a Harness query with the same rules that decide events. The query becomes a
// hypothetical canonical event — decided and published to watchers, but not remembered in session
// memory or the idempotency store. When the payload names a tool ({"tool_name", "arguments"}) the
// event is the tool.before that the agent is asking about, so tool rules apply unchanged; when it
// names an action instead ({"action": "rm -rf /"}, the reference's should_i_proceed example) the
// event is a tool.before of a shell tool named "shell" whose input.command is the action, so the
// shell rules judge it; otherwise it is a query event whose payload holds query_type and the query payload (rules with on: [query]). should_i_proceed answers true or false; any other query type answers an object with
// the verdict and the matched rule ids.
func (c *Core) Query(ctx context.Context, req *ahpv1.QueryRequest) (*ahpv1.QueryResponse, error) {
	ev := queryEvent(req, c.cfg.NewID())
	d, err := c.decide(ctx, ev, nil, false)
	if err != nil {
		return nil, err
	}
	proceed := d.GetVerdict() == ahpv1.Verdict_VERDICT_ALLOW || d.GetVerdict() == ahpv1.Verdict_VERDICT_MODIFY
	resp := &ahpv1.QueryResponse{Decision: d}
	if req.GetQueryType() == "should_i_proceed" {
		resp.Answer = structpb.NewBoolValue(proceed)
	} else {
		rules := make([]any, 0, len(d.GetMatchedRuleIds()))
		for _, r := range d.GetMatchedRuleIds() {
			rules = append(rules, r)
		}
		answer, _ := structpb.NewStruct(map[string]any{
			"verdict":  strings.ToLower(strings.TrimPrefix(d.GetVerdict().String(), "VERDICT_")),
			"proceed":  proceed,
			"rule_ids": rules,
		})
		resp.Answer = structpb.NewStructValue(answer)
	}
	if reason := decisionReason(d); reason != "" {
		resp.Reason = proto.String(reason)
	}
	return resp, nil
}

func queryEvent(req *ahpv1.QueryRequest, id string) *ahpv1.Event {
	payload := map[string]*structpb.Value{"query_type": structpb.NewStringValue(req.GetQueryType())}
	if p := req.GetPayload(); p != nil {
		payload["payload"] = p
	}
	ev := &ahpv1.Event{
		Id:      "query-" + id,
		Source:  req.GetSource(),
		Type:    ahpv1.EventType_EVENT_TYPE_QUERY,
		Session: &ahpv1.Session{Id: req.GetSessionId(), Agent: &ahpv1.Agent{Id: req.GetAgentId()}},
		Harness: &ahpv1.HarnessEnvelope{AgentId: req.GetAgentId()},
		Payload: structpb.NewStructValue(&structpb.Struct{Fields: payload}),
		Origin:  &ahpv1.Origin{Dialect: ahpv1.Dialect_DIALECT_HARNESS, ProtocolVersion: HarnessProtocolVersion, EventType: "query"},
	}
	fields := req.GetPayload().GetStructValue().GetFields()
	if name := fields["tool_name"].GetStringValue(); name != "" {
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE
		ev.Tool = &ahpv1.Tool{CallId: ev.GetId(), Name: name, Kind: names.ToolKindFor(name), Input: fields["arguments"].GetStructValue()}
	} else if action := fields["action"].GetStringValue(); action != "" {
		ev.Type = ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE
		ev.Tool = &ahpv1.Tool{CallId: ev.GetId(), Name: "shell", Kind: ahpv1.ToolKind_TOOL_KIND_SHELL, Input: &structpb.Struct{Fields: map[string]*structpb.Value{
			"command": structpb.NewStringValue(action),
		}}}
	}
	return ev
}

// decisionReason is the human reason of the effect that decided the verdict.
func decisionReason(d *ahpv1.Decision) string {
	for _, e := range d.GetEffects() {
		if reason, ok := policy.StopReason(e); ok {
			return reason
		}
	}
	return ""
}

// Capabilities describes what this server supports.
func (c *Core) Capabilities() *ahpv1.GetCapabilitiesResponse {
	resp := &ahpv1.GetCapabilitiesResponse{
		ServerVersion:          c.cfg.Version,
		HooksProtocolVersions:  append([]string(nil), HooksProtocolVersions...),
		HarnessProtocolVersion: HarnessProtocolVersion,
		HarnessConfig: &ahpv1.HarnessConfig{
			TimeoutMs: proto.Uint64(c.cfg.Limits.TimeoutMs),
			BatchSize: proto.Uint64(c.cfg.Limits.BatchSize),
			MaxDepth:  proto.Uint32(c.cfg.Limits.MaxDepth),
		},
	}
	for t := range ahpv1.EventType_name {
		et := ahpv1.EventType(t)
		if interceptable(et) {
			resp.InterceptableEventTypes = append(resp.InterceptableEventTypes, et)
		}
		if observable(et) {
			resp.ObservableEventTypes = append(resp.ObservableEventTypes, et)
		}
	}
	sortTypes(resp.InterceptableEventTypes)
	sortTypes(resp.ObservableEventTypes)
	for k := range ahpv1.EffectKind_name {
		if k != 0 {
			resp.Effects = append(resp.Effects, ahpv1.EffectKind(k))
		}
	}
	sortTypes(resp.Effects)
	return resp
}

func sortTypes[T ~int32](s []T) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func cloneDecision(d *ahpv1.Decision) *ahpv1.Decision { return proto.Clone(d).(*ahpv1.Decision) }

// enforceErrors returns the id of the first enforce rule that failed to evaluate ("(policy)" when
// the whole evaluation failed), or "" when none did, and why when the engine stopped it (" (CEL
// cost limit exceeded)", " (cut off at the request deadline)"). The core fails closed on such
// failures: a rule that cannot be evaluated must not silently let an action through. A failing
// dry-run rule changes nothing, as a matching one would not.
func enforceErrors(res policy.Result) (ruleID, why string) {
	for _, e := range res.Errors {
		if e.DryRun {
			continue
		}
		switch {
		case errors.Is(e.Err, policy.ErrCostLimit):
			why = " (CEL cost limit exceeded)"
		case errors.Is(e.Err, policy.ErrDeadline):
			why = " (cut off at the request deadline)"
		}
		if e.RuleID == "" {
			return "(policy)", why
		}
		return e.RuleID, why
	}
	return "", ""
}
