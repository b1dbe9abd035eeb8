package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"

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
// dropped (never forwarded, never answered) and true returned; anything else is the server's
// business and false returned.
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
	if p == nil || p.method != methodToolsCall || p.decided {
		return false
	}
	p.cancelled = true
	delete(s.pending, id)
	if p.cancel != nil {
		p.cancel()
	}
	return true
}

// decide asks the policy about one call and carries the answer out.
func (s *session) decide(ctx context.Context, req *jsonrpc.Request, call *toolCall, p *pending) {
	cfg := &s.p.cfg
	who := s.identity()
	tool := who.newTool(call, req.ID)
	ev := who.newEvent(cfg.NewID(), ahpv1.EventType_EVENT_TYPE_TOOL_BEFORE, cfg.Now(), tool)
	log := s.log.With("tool", tool.GetName(), "event_id", ev.GetId())

	var o outcome
	var decisionID string
	d, failure, err := s.intercept(ctx, ev)
	if err != nil {
		s.mu.Lock()
		cancelled := p.cancelled
		s.mu.Unlock()
		if cancelled {
			log.Debug("the client cancelled the call while it was being decided")
			return
		}
		decisionID = cfg.NewID()
		o = s.failed(failure)
		log.Warn("no decision from the policy backend; answering with the failure policy",
			"failure", failure, "failure_policy", cfg.FailurePolicy.String(), "decision_id", decisionID, "error", err.Error())
	} else {
		decisionID = d.GetDecisionId()
		o = reduce(d, call.arguments)
		log.Debug("decided", "decision_id", decisionID, "verdict", d.GetVerdict().String(), "rule_ids", d.GetMatchedRuleIds())
	}

	out := req
	switch o.verdict {
	case refuse:
		if s.untrack(req.ID) != nil {
			log.Info("tool call refused", "decision_id", decisionID)
			s.writeClient(&jsonrpc.Response{ID: req.ID, Result: refusal(o.reason, o.messages, decisionID)})
		}
		return
	case rewrite:
		params, err := call.withArguments(o.input)
		if err == nil && len(params) > cfg.MaxMessageBytes {
			err = fmt.Errorf("the rewritten tools/call is over the %d-byte limit", cfg.MaxMessageBytes)
		}
		if err != nil {
			if s.untrack(req.ID) != nil {
				log.Warn("the policy's change cannot be applied; refusing the call", "error", err.Error())
				s.writeClient(&jsonrpc.Response{ID: req.ID, Result: refusal("input must be changed, and the change cannot be applied: "+err.Error(), o.messages, decisionID)})
			}
			return
		}
		out = &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: params}
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
func (s *session) failed(failure string) outcome {
	note := "AHP MCP gateway: no decision from the policy backend (" + failure + "); "
	if s.p.cfg.FailurePolicy == bridge.FailOpen {
		return outcome{verdict: forward, messages: []string{note + "fail-open: not checked by the policy."}}
	}
	return outcome{verdict: refuse, reason: bridge.SyntheticDenyReason, messages: []string{note + "fail-closed: refused."}}
}

func (s *session) writeClient(resp *jsonrpc.Response) {
	if err := s.client.Write(context.Background(), resp); err != nil {
		s.log.Debug("an answer to the MCP client was not delivered", "error", err.Error())
	}
}
