package bridge

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/codec/harness"
	"github.com/ahp-gateway/ahp/internal/typed"
	"google.golang.org/protobuf/types/known/structpb"
)

// The eight Agent Harness typed events go to TypedDecisionService and are answered with their own
// decision shapes (harness.RenderTyped). Under the failure policy each gets the canonical synthetic
// decision with a typed answer, rendered the same way:
//
//	event               fail-closed (reason "Required policy backend unavailable.")  fail-open
//	idle                defer{reason}                                                allow
//	intent_detection    block{reason}                                                allow{detected_intent "understand", confidence 0.0}
//	context_perception  block{reason, metadata}                                      allow{injected_context {facts []}, metadata}
//	memory_recall       block{reason, metadata}                                      allow{injected_facts [], metadata}
//	planning            block{reason, metadata}                                      allow{selected_strategy "none", metadata}
//	reasoning           block{reason, metadata}                                      allow{metadata}
//	rate_limit          skip{reason}                                                 retry{retry_after_ms: the harness's own, metadata}
//	confirmation        reject{reason}                                               escalate (the user decides, as without AHP)
//
// metadata carries the synthetic marker where the variant has a metadata field; the others are
// unit variants or carry only a reason, and the bridge's log and counters record them instead.

// typedCall calls one TypedDecisionService RPC and returns its decision.
func typedCall[Req, Resp any](
	ctx context.Context,
	rpc func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error),
	req *Req,
) (*ahpv1.Decision, error) {
	resp, err := rpc(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	g, ok := any(resp.Msg).(interface{ GetDecision() *ahpv1.Decision })
	var d *ahpv1.Decision
	if ok {
		d = g.GetDecision()
	}
	if d == nil {
		return nil, badResponse("typed response has no decision")
	}
	return d, nil
}

// decideTyped routes a typed event to its RPC.
func (b *Bridge) decideTyped(ctx context.Context, eventType string, ev *ahpv1.Event) (*ahpv1.Decision, error) {
	t := b.cfg.Clients.Typed
	switch eventType {
	case "idle":
		return typedCall(ctx, t.Idle, &ahpv1.IdleRequest{Event: ev})
	case "intent_detection":
		return typedCall(ctx, t.DetectIntent, &ahpv1.DetectIntentRequest{Event: ev})
	case "context_perception":
		return typedCall(ctx, t.PerceiveContext, &ahpv1.PerceiveContextRequest{Event: ev})
	case "memory_recall":
		return typedCall(ctx, t.RecallMemory, &ahpv1.RecallMemoryRequest{Event: ev})
	case "planning":
		return typedCall(ctx, t.Plan, &ahpv1.PlanRequest{Event: ev})
	case "reasoning":
		return typedCall(ctx, t.Reason, &ahpv1.ReasonRequest{Event: ev})
	case "rate_limit":
		return typedCall(ctx, t.HandleRateLimit, &ahpv1.HandleRateLimitRequest{Event: ev})
	case "confirmation":
		return typedCall(ctx, t.Confirm, &ahpv1.ConfirmRequest{Event: ev})
	}
	return nil, fmt.Errorf("bridge: %q is not a typed event", eventType)
}

// harnessTyped decides a typed ahp/event request and renders the typed decision.
func (b *Bridge) harnessTyped(ctx context.Context, c *call, eventType string, ev *ahpv1.Event) Reply {
	callCtx, cancel := context.WithTimeout(ctx, b.decisionTimeout())
	defer cancel()
	d, err := b.decideTyped(callCtx, eventType, ev)
	var out []byte
	if err == nil {
		out, err = harness.RenderTyped(d, eventType)
		if errors.Is(err, harness.ErrNoTypedAnswer) {
			// The reference's answer for a typed event nobody handles.
			return harnessErrorReply(c.idJSON, harnessCodeInternal, "Handler error: "+errMessage(err))
		}
		if err != nil {
			err = badResponse("typed decision cannot be rendered: " + err.Error())
		}
	}
	if err != nil {
		ue := classify(callCtx, err)
		if ue.rejected {
			return harnessErrorReply(c.idJSON, harnessCodeInvalidParams, "Invalid event: Protocol error: "+ue.message)
		}
		d := b.syntheticTyped(eventType, ev, ue.failure)
		b.applyPolicy(ue, d.GetDecisionId(), "dialect", "harness", "method", c.method, "event_type", eventType)
		if out, err = harness.RenderTyped(d, eventType); err != nil {
			return b.harnessInternal(c, err)
		}
	}
	return harnessResultReply(c.idJSON, out)
}

// syntheticMetadata adds the synthetic marker, the failure and the policy to md (which may be
// nil or already hold the decision id and the marker).
func (b *Bridge) syntheticMetadata(md *structpb.Struct, f Failure) *structpb.Struct {
	if md == nil {
		md = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	if md.Fields == nil {
		md.Fields = map[string]*structpb.Value{}
	}
	md.Fields[harness.MetadataSynthetic] = structpb.NewBoolValue(true)
	md.Fields[harnessFailureKey] = structpb.NewStringValue(f.String())
	md.Fields[harnessPolicyKey] = structpb.NewStringValue(b.cfg.FailurePolicy.String())
	return md
}

// syntheticTyped is the canonical synthetic decision with the typed answer of the table above:
// under fail-closed the type's refusal as internal/typed makes it, under fail-open the answer that
// lets the harness go on as without AHP.
func (b *Bridge) syntheticTyped(eventType string, ev *ahpv1.Event, f Failure) *ahpv1.Decision {
	d := b.syntheticDecision()
	md := b.syntheticMetadata(&structpb.Struct{Fields: map[string]*structpb.Value{
		harness.MetadataDecisionID: structpb.NewStringValue(d.GetDecisionId()),
	}}, f)
	if b.cfg.FailurePolicy == FailClosed {
		// An event whose type does not name its kind keeps no typed answer: rendered from the
		// decision's deny effect, it is refused all the same.
		_ = typed.Refuse(d, ev.GetType(), SyntheticDenyReason, md)
		return d
	}
	switch eventType {
	case "idle":
		d.Typed = &ahpv1.Decision_Idle{Idle: &ahpv1.IdleDecision{Decision: &ahpv1.IdleDecision_Allow_{Allow: &ahpv1.IdleDecision_Allow{}}}}
	case "intent_detection":
		d.Typed = &ahpv1.Decision_IntentDetection{IntentDetection: &ahpv1.IntentDetectionDecision{Decision: &ahpv1.IntentDetectionDecision_Allow_{Allow: &ahpv1.IntentDetectionDecision_Allow{DetectedIntent: "understand"}}}}
	case "context_perception":
		d.Typed = &ahpv1.Decision_ContextPerception{ContextPerception: &ahpv1.ContextPerceptionDecision{Decision: &ahpv1.ContextPerceptionDecision_Allow_{Allow: &ahpv1.ContextPerceptionDecision_Allow{InjectedContext: &ahpv1.InjectedContext{}, Metadata: md}}}}
	case "memory_recall":
		d.Typed = &ahpv1.Decision_MemoryRecall{MemoryRecall: &ahpv1.MemoryRecallDecision{Decision: &ahpv1.MemoryRecallDecision_Allow_{Allow: &ahpv1.MemoryRecallDecision_Allow{Metadata: md}}}}
	case "planning":
		none := &ahpv1.PlanningStrategy{Strategy: &ahpv1.PlanningStrategy_Known{Known: ahpv1.PlanningStrategyKind_PLANNING_STRATEGY_KIND_NONE}}
		d.Typed = &ahpv1.Decision_Planning{Planning: &ahpv1.PlanningDecision{Decision: &ahpv1.PlanningDecision_Allow_{Allow: &ahpv1.PlanningDecision_Allow{SelectedStrategy: none, Metadata: md}}}}
	case "reasoning":
		d.Typed = &ahpv1.Decision_Reasoning{Reasoning: &ahpv1.ReasoningDecision{Decision: &ahpv1.ReasoningDecision_Allow_{Allow: &ahpv1.ReasoningDecision_Allow{Metadata: md}}}}
	case "rate_limit":
		d.Typed = &ahpv1.Decision_RateLimit{RateLimit: &ahpv1.RateLimitDecision{Decision: &ahpv1.RateLimitDecision_Retry_{Retry: &ahpv1.RateLimitDecision_Retry{
			RetryAfterMs: ev.GetRateLimit().GetRetryAfterMs(),
			Metadata:     md,
		}}}}
	case "confirmation":
		d.Typed = &ahpv1.Decision_Confirmation{Confirmation: &ahpv1.ConfirmationDecision{Decision: &ahpv1.ConfirmationDecision_Escalate_{Escalate: &ahpv1.ConfirmationDecision_Escalate{}}}}
	}
	return d
}

// syntheticQueryAnswer answers ahp/query under the failure policy in the server's answer shapes:
// should_i_proceed gets false (fail-closed) or true (fail-open); other query types get the
// server's object {"proceed", "verdict", "rule_ids"} plus the synthetic marker. QueryResponse has
// no metadata, so the reason says what happened.
func (b *Bridge) syntheticQueryAnswer(req *ahpv1.QueryRequest, f Failure) *ahpv1.QueryResponse {
	proceed := b.cfg.FailurePolicy == FailOpen
	reason := SyntheticDenyReason
	verdict := "deny"
	if proceed {
		reason = "Policy backend unavailable; proceeding (fail-open)."
		verdict = "allow"
	}
	resp := &ahpv1.QueryResponse{Reason: &reason}
	if req.GetQueryType() == "should_i_proceed" {
		resp.Answer = structpb.NewBoolValue(proceed)
		return resp
	}
	answer, _ := structpb.NewStruct(map[string]any{ // plain values always convert
		"proceed":                 proceed,
		"verdict":                 verdict,
		"rule_ids":                []any{},
		harness.MetadataSynthetic: true,
		harnessFailureKey:         f.String(),
		harnessPolicyKey:          b.cfg.FailurePolicy.String(),
	})
	resp.Answer = structpb.NewStructValue(answer)
	return resp
}
