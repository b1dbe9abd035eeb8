package service

import (
	"context"
	"errors"
	"net/http"
	"time"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/auth"
)

// Approvals implements ahp.v1.ApprovalService over an approval manager. The deciding principal
// and its groups come from authentication (auth.PrincipalFrom), never from the request.
type Approvals struct {
	s *Services
	m *approval.Manager
}

var _ ahpv1connect.ApprovalServiceHandler = (*Approvals)(nil)

// RegisterApprovals mounts ApprovalService over m on mux and returns its name.
func (s *Services) RegisterApprovals(mux *http.ServeMux, m *approval.Manager, opts ...connect.HandlerOption) string {
	mux.Handle(ahpv1connect.NewApprovalServiceHandler(&Approvals{s: s, m: m}, opts...))
	return ahpv1connect.ApprovalServiceName
}

// List implements ApprovalService.List.
func (a *Approvals) List(_ context.Context, req *connect.Request[ahpv1.ApprovalServiceListRequest]) (*connect.Response[ahpv1.ApprovalServiceListResponse], error) {
	if err := a.s.validate(req.Msg); err != nil {
		return nil, err
	}
	list := a.m.List(approval.Filter{
		State:   approval.State(req.Msg.GetState()),
		Agent:   req.Msg.GetAgentId(),
		Session: req.Msg.GetSessionId(),
		Rule:    req.Msg.GetRuleId(),
		Limit:   int(req.Msg.GetLimit()),
	})
	out := &ahpv1.ApprovalServiceListResponse{Approvals: make([]*ahpv1.Approval, len(list))}
	for i, ap := range list {
		out.Approvals[i] = ApprovalProto(ap)
	}
	return connect.NewResponse(out), nil
}

// Get implements ApprovalService.Get.
func (a *Approvals) Get(_ context.Context, req *connect.Request[ahpv1.ApprovalServiceGetRequest]) (*connect.Response[ahpv1.ApprovalServiceGetResponse], error) {
	if err := a.s.validate(req.Msg); err != nil {
		return nil, err
	}
	ap, err := a.m.Get(req.Msg.GetId())
	if err != nil {
		return nil, approvalError(err)
	}
	return connect.NewResponse(&ahpv1.ApprovalServiceGetResponse{Approval: ApprovalProto(ap)}), nil
}

// Decide implements ApprovalService.Decide.
func (a *Approvals) Decide(ctx context.Context, req *connect.Request[ahpv1.ApprovalServiceDecideRequest]) (*connect.Response[ahpv1.ApprovalServiceDecideResponse], error) {
	if err := a.s.validate(req.Msg); err != nil {
		return nil, err
	}
	p, _ := auth.PrincipalFrom(ctx) // the zero Principal without authentication
	ap, err := a.m.Decide(req.Msg.GetId(), req.Msg.GetApprove(), p.Name, p.Groups, req.Msg.GetComment())
	if err != nil {
		return nil, approvalError(err)
	}
	return connect.NewResponse(&ahpv1.ApprovalServiceDecideResponse{Approval: ApprovalProto(ap)}), nil
}

// Watch implements ApprovalService.Watch: the pending approvals first (as requested changes),
// then every change as it happens.
func (a *Approvals) Watch(ctx context.Context, req *connect.Request[ahpv1.ApprovalServiceWatchRequest], stream *connect.ServerStream[ahpv1.ApprovalServiceWatchResponse]) error {
	if err := a.s.validate(req.Msg); err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := a.s.streamContext(ctx)
	defer cancel()
	f := approval.Filter{Agent: req.Msg.GetAgentId(), Session: req.Msg.GetSessionId(), Rule: req.Msg.GetRuleId()}
	w, err := a.m.Watch(a.s.opts.WatchBuffer)
	if err != nil {
		return approvalError(err)
	}
	defer w.Stop()
	if err := stream.Send(nil); err != nil { // headers: the client knows it is subscribed
		return err
	}
	pending := f
	pending.State, pending.Limit = approval.StatePending, 1000
	for _, ap := range a.m.List(pending) {
		if err := stream.Send(&ahpv1.ApprovalServiceWatchResponse{Change: ahpv1.ApprovalChange_APPROVAL_CHANGE_REQUESTED, Approval: ApprovalProto(ap)}); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			if parent.Err() == nil {
				return connect.NewError(connect.CodeDeadlineExceeded, errors.New("watch reached the maximum stream duration; reconnect to resume"))
			}
			return parent.Err()
		case c := <-w.C():
			if !f.Match(c.Approval) {
				continue
			}
			if err := stream.Send(&ahpv1.ApprovalServiceWatchResponse{Change: ahpv1.ApprovalChange(c.Kind), Approval: ApprovalProto(c.Approval)}); err != nil {
				return err
			}
		case <-w.Done():
			if err := w.Err(); errors.Is(err, approval.ErrWatchBehind) {
				return connect.NewError(connect.CodeResourceExhausted, err)
			} else if err != nil {
				return connect.NewError(connect.CodeUnavailable, err)
			}
			return nil
		}
	}
}

// approvalError maps the approval package's errors to Connect codes.
func approvalError(err error) error {
	code := connect.CodeInternal
	switch {
	case errors.Is(err, approval.ErrNotFound):
		code = connect.CodeNotFound
	case errors.Is(err, approval.ErrDecided), errors.Is(err, approval.ErrExpired):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, approval.ErrNotApprover):
		code = connect.CodePermissionDenied
	case errors.Is(err, approval.ErrComment):
		code = connect.CodeInvalidArgument
	case errors.Is(err, approval.ErrClosed):
		code = connect.CodeUnavailable
	case errors.Is(err, approval.ErrUnavailable):
		return connect.NewError(connect.CodeUnavailable, approval.ErrUnavailable) // no NATS detail
	}
	return connect.NewError(code, err)
}

// ApprovalProto converts an approval to its ahp.v1 message.
func ApprovalProto(a approval.Approval) *ahpv1.Approval {
	out := &ahpv1.Approval{
		Id: a.ID, State: ahpv1.ApprovalState(a.State), RuleIds: a.RuleIDs, Kind: a.Kind, Reason: a.Reason,
		Target: a.Target, Principal: a.Principal, Source: a.Source, AgentId: a.Agent, SessionId: a.Session,
		EventId: a.EventID, EventType: a.EventType, Tool: a.Tool, InputSummary: a.Input,
		CreatedAt: stamp(a.CreatedAt), HoldUntil: stamp(a.HoldUntil), DecidedAt: stamp(a.DecidedAt),
		DecidedBy: a.DecidedBy, Comment: a.Comment, LatencyMs: uint64(a.Latency().Milliseconds()),
		GrantExpiresAt: stamp(a.GrantUntil), ConsumedAt: stamp(a.ConsumedAt), Abandoned: a.Abandoned,
		OnTimeoutDeny: a.OnTimeoutDeny, Notifiers: a.Notifiers, Revision: a.Revision,
	}
	for _, l := range a.Approvers {
		out.Approvers = append(out.Approvers, &ahpv1.ApproverList{Approvers: l})
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// approvalsView is ApprovalService for people who may look but not decide: List, Get and Watch
// as Approvals serves them, Decide refused.
type approvalsView struct{ *Approvals }

// Decide refuses: a view cannot decide.
func (approvalsView) Decide(context.Context, *connect.Request[ahpv1.ApprovalServiceDecideRequest]) (*connect.Response[ahpv1.ApprovalServiceDecideResponse], error) {
	return nil, connect.NewError(connect.CodePermissionDenied, errors.New("this read-only view cannot decide: call ahp.v1.ApprovalService/Decide with a credential that has the approve scope"))
}

// ApprovalsView returns an ApprovalService handler over m that lists, gets and watches
// approvals but refuses Decide, with the path prefix it serves. It carries no authorization of
// its own: whoever mounts it decides who may look (the console requires the watch scope, which
// already shows the same redacted calls through Watch).
func (s *Services) ApprovalsView(m *approval.Manager, opts ...connect.HandlerOption) (string, http.Handler) {
	return ahpv1connect.NewApprovalServiceHandler(approvalsView{&Approvals{s: s, m: m}}, opts...)
}
