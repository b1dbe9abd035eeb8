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

// typedCall validates the request and asks the core for a typed decision of the given type.
func (s *Services) typedCall(ctx context.Context, msg eventRequest, t ahpv1.EventType) (*ahpv1.Decision, error) {
	if err := s.validateTyped(msg, t); err != nil {
		return nil, err
	}
	d, err := s.core.Typed(ctx, msg.GetEvent(), t)
	return d, toConnect(err)
}

// validateTyped lets the event type be left out, since the call names it: an unspecified type
// becomes t, as the core would make it, before protovalidate runs. The request is the handler's
// (decoded from the wire, or handed over in-process), so no copy is needed.
func (s *Services) validateTyped(msg eventRequest, t ahpv1.EventType) error {
	if ev := msg.GetEvent(); ev != nil && ev.GetType() == ahpv1.EventType_EVENT_TYPE_UNSPECIFIED {
		ev.Type = t
	}
	return s.validate(msg)
}

// Idle implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Idle(ctx context.Context, req *connect.Request[ahpv1.IdleRequest]) (*connect.Response[ahpv1.IdleResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_IDLE)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.IdleResponse{Decision: d}), nil
}

// DetectIntent implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) DetectIntent(ctx context.Context, req *connect.Request[ahpv1.DetectIntentRequest]) (*connect.Response[ahpv1.DetectIntentResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_INTENT_DETECTION)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.DetectIntentResponse{Decision: d}), nil
}

// PerceiveContext implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) PerceiveContext(ctx context.Context, req *connect.Request[ahpv1.PerceiveContextRequest]) (*connect.Response[ahpv1.PerceiveContextResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_CONTEXT_PERCEPTION)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.PerceiveContextResponse{Decision: d}), nil
}

// RecallMemory implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) RecallMemory(ctx context.Context, req *connect.Request[ahpv1.RecallMemoryRequest]) (*connect.Response[ahpv1.RecallMemoryResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_MEMORY_RECALL)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.RecallMemoryResponse{Decision: d}), nil
}

// Plan implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Plan(ctx context.Context, req *connect.Request[ahpv1.PlanRequest]) (*connect.Response[ahpv1.PlanResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_PLANNING)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.PlanResponse{Decision: d}), nil
}

// Reason implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Reason(ctx context.Context, req *connect.Request[ahpv1.ReasonRequest]) (*connect.Response[ahpv1.ReasonResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_REASONING)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.ReasonResponse{Decision: d}), nil
}

// HandleRateLimit implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) HandleRateLimit(ctx context.Context, req *connect.Request[ahpv1.HandleRateLimitRequest]) (*connect.Response[ahpv1.HandleRateLimitResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_RATE_LIMIT)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.HandleRateLimitResponse{Decision: d}), nil
}

// Confirm implements ahpv1connect.TypedDecisionServiceHandler.
func (s *Services) Confirm(ctx context.Context, req *connect.Request[ahpv1.ConfirmRequest]) (*connect.Response[ahpv1.ConfirmResponse], error) {
	d, err := s.typedCall(ctx, req.Msg, ahpv1.EventType_EVENT_TYPE_CONFIRMATION)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&ahpv1.ConfirmResponse{Decision: d}), nil
}
