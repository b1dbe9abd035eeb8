package service

import (
	"context"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
)

// eventRequest is every typed request: one event.
type eventRequest interface {
	proto.Message
	GetEvent() *ahpv1.Event
}

// typedRPC answers one TypedDecisionService call: the core's decision for event type t, wrapped
// in the call's response message. The event type may be left out, since
// the call names it: an unspecified type becomes t, as the core would make it, before
// protovalidate runs. The request is the handler's (decoded from the wire, or handed over
// in-process), so it is not copied for that.
func typedRPC[Req any, Res any, PReq interface {
	*Req
	eventRequest
}](ctx context.Context, s *Services, req *connect.Request[Req], t ahpv1.EventType, wrap func(*ahpv1.Decision) *Res) (*connect.Response[Res], error) {
	msg := PReq(req.Msg)
	if ev := msg.GetEvent(); ev != nil && ev.GetType() == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED {
		ev.Type = t
	}
	return answer(s, msg, func() (*Res, error) {
		d, err := s.core.Typed(ctx, msg.GetEvent(), t)
		return wrap(d), err
	})
}

// Idle implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Idle(ctx context.Context, req *connect.Request[ahpv1.IdleRequest]) (*connect.Response[ahpv1.IdleResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_IDLE, func(d *ahpv1.Decision) *ahpv1.IdleResponse { return &ahpv1.IdleResponse{Decision: d} })
}

// DetectIntent implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) DetectIntent(ctx context.Context, req *connect.Request[ahpv1.DetectIntentRequest]) (*connect.Response[ahpv1.DetectIntentResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION, func(d *ahpv1.Decision) *ahpv1.DetectIntentResponse { return &ahpv1.DetectIntentResponse{Decision: d} })
}

// PerceiveContext implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) PerceiveContext(ctx context.Context, req *connect.Request[ahpv1.PerceiveContextRequest]) (*connect.Response[ahpv1.PerceiveContextResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION, func(d *ahpv1.Decision) *ahpv1.PerceiveContextResponse {
		return &ahpv1.PerceiveContextResponse{Decision: d}
	})
}

// RecallMemory implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) RecallMemory(ctx context.Context, req *connect.Request[ahpv1.RecallMemoryRequest]) (*connect.Response[ahpv1.RecallMemoryResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL, func(d *ahpv1.Decision) *ahpv1.RecallMemoryResponse { return &ahpv1.RecallMemoryResponse{Decision: d} })
}

// Plan implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Plan(ctx context.Context, req *connect.Request[ahpv1.PlanRequest]) (*connect.Response[ahpv1.PlanResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_PLANNING, func(d *ahpv1.Decision) *ahpv1.PlanResponse { return &ahpv1.PlanResponse{Decision: d} })
}

// Reason implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Reason(ctx context.Context, req *connect.Request[ahpv1.ReasonRequest]) (*connect.Response[ahpv1.ReasonResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_REASONING, func(d *ahpv1.Decision) *ahpv1.ReasonResponse { return &ahpv1.ReasonResponse{Decision: d} })
}

// HandleRateLimit implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) HandleRateLimit(ctx context.Context, req *connect.Request[ahpv1.HandleRateLimitRequest]) (*connect.Response[ahpv1.HandleRateLimitResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_RATE_LIMIT, func(d *ahpv1.Decision) *ahpv1.HandleRateLimitResponse {
		return &ahpv1.HandleRateLimitResponse{Decision: d}
	})
}

// Confirm implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Confirm(ctx context.Context, req *connect.Request[ahpv1.ConfirmRequest]) (*connect.Response[ahpv1.ConfirmResponse], error) {
	return typedRPC(ctx, s, req, ahpv1.EventType_EVENT_TYPE_CONFIRMATION, func(d *ahpv1.Decision) *ahpv1.ConfirmResponse { return &ahpv1.ConfirmResponse{Decision: d} })
}
