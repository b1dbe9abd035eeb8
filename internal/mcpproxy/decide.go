package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/bridge"
)

// startDecision decides a tracked tools/call in the background. It waits while
// Config.MaxDeciding calls are being decided, which holds back reading the client.
func (s *session) startDecision(ctx context.Context, req *jsonrpc.Request, p *pending) {
	call, err := parseToolCall(req.Params)
	if err != nil {
		s.log.Warn("refused a tools/call that cannot be read", "error", err.Error())
		if s.untrack(req.ID) != nil {
			s.replyClient(req.ID, jsonrpc.CodeInvalidParams, err.Error())
		}
		return
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		if s.untrack(req.ID) != nil {
			s.replyClient(req.ID, jsonrpc.CodeInternalError, "the MCP gateway is stopping")
		}
		return
	}
	dctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	p.cancel = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.sem }()
		defer cancel()
		s.decide(dctx, req, call, p)
	}()
}

// cancelDecision handles the client's notifications/cancelled: a call still being decided is
// dropped (never forwarded, never answered) and true returned. A request the server already has
// is no longer waited for (the protocol lets the server drop it without an answer; one that still
// comes is passed on, and the client ignores it), and false returned: the notification is the
// server's business.
func (s *session) cancelDecision(params json.RawMessage) bool {
	var in struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &in) != nil {
		return false
	}
	id, err := jsonrpc.MakeID(in.RequestID)
	if err != nil || !id.IsValid() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[id]
	if p == nil {
		return false
	}
	if p.method != methodToolsCall || p.decided {
		delete(s.pending, id)
		return false
	}
	p.cancelled = true
	delete(s.pending, id)
	if p.cancel != nil {
		p.cancel()
	}
	return true
}

// decideCall asks the policy about one call of the session who and reduces the answer to an
// outcome. A non-nil error means no decision arrived: the outcome is then the failure policy's
// (unless the caller knows the call was cancelled and drops it).
func (p *Proxy) decideCall(ctx context.Context, who identity, call *toolCall, id jsonrpc.ID, log *slog.Logger) (*ahpv1.Tool, outcome, string, error) {
	cfg := &p.cfg
	tool := who.newTool(call, id)
	ev := who.newEvent(cfg.NewID(), ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, cfg.Now(), tool)
	d, failure, err := p.intercept(ctx, ev)
	if err != nil {
		decisionID := cfg.NewID()
		if ctx.Err() == nil {
			log.Warn("no decision from the policy backend; answering with the failure policy",
				"tool", tool.GetName(), "event_id", ev.GetId(), "failure", failure, "failure_policy", cfg.FailurePolicy.String(),
				"decision_id", decisionID, "error", err.Error())
		}
		return tool, p.failed(failure), decisionID, err
	}
	log.Debug("decided", "tool", tool.GetName(), "event_id", ev.GetId(), "decision_id", d.GetDecisionId(),
		"verdict", d.GetVerdict().String(), "rule_ids", d.GetMatchedRuleIds())
	return tool, reduce(d, call.arguments), d.GetDecisionId(), nil
}

// rewritten is the request a rewrite outcome sends: the call with the new arguments, within the
// message size limit.
func (p *Proxy) rewritten(req *jsonrpc.Request, call *toolCall, o outcome) (*jsonrpc.Request, error) {
	params, err := call.withArguments(o.input)
	if err == nil && len(params) > p.cfg.MaxMessageBytes {
		err = fmt.Errorf("the rewritten tools/call is over the %d-byte limit", p.cfg.MaxMessageBytes)
	}
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: params}, nil
}

// decide asks the policy about one call and carries the answer out.
func (s *session) decide(ctx context.Context, req *jsonrpc.Request, call *toolCall, p *pending) {
	tool, o, decisionID, err := s.p.decideCall(ctx, s.identity(), call, req.ID, s.log)
	log := s.log.With("tool", tool.GetName())
	if err != nil {
		s.mu.Lock()
		cancelled := p.cancelled
		s.mu.Unlock()
		if cancelled {
			log.Debug("the client cancelled the call while it was being decided")
			return
		}
	}

	out := req
	switch o.verdict {
	case refuse:
		if s.untrack(req.ID) != nil {
			log.Info("tool call refused", "decision_id", decisionID)
			s.writeClient(&jsonrpc.Response{ID: req.ID, Result: refusal(o.reason, o.messages, decisionID, o.approvalID)})
		}
		return
	case rewrite:
		if out, err = s.p.rewritten(req, call, o); err != nil {
			if s.untrack(req.ID) != nil {
				log.Warn("the policy's change cannot be applied; refusing the call", "error", err.Error())
				s.writeClient(&jsonrpc.Response{ID: req.ID, Result: refusal("input must be changed, and the change cannot be applied: "+err.Error(), o.messages, decisionID, o.approvalID)})
			}
			return
		}
		tool.Input = o.input
		log.Info("tool call arguments rewritten by the policy", "decision_id", decisionID)
	}

	s.mu.Lock()
	if s.pending[req.ID] != p { // answered meanwhile (the server went away)
		s.mu.Unlock()
		return
	}
	p.decided, p.tool, p.decisionID, p.messages = true, tool, decisionID, o.messages
	s.mu.Unlock()
	s.forward(context.WithoutCancel(ctx), out)
}

// failed is the failure policy's outcome: fail-closed refuses with the bridge's synthetic
// reason, fail-open forwards; both say so to the model.
func (p *Proxy) failed(failure string) outcome {
	note := "AHP MCP gateway: no decision from the policy backend (" + failure + "); "
	if p.cfg.FailurePolicy == bridge.FailOpen {
		return outcome{verdict: forward, messages: []string{note + "fail-open: not checked by the policy."}}
	}
	return outcome{verdict: refuse, reason: bridge.SyntheticDenyReason, messages: []string{note + "fail-closed: refused."}}
}

func (s *session) writeClient(resp *jsonrpc.Response) {
	if err := s.client.Write(context.Background(), resp); err != nil {
		s.log.Debug("an answer to the MCP client was not delivered", "error", err.Error())
	}
}
