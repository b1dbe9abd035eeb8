package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/approval"
	"github.com/ahp-gateway/ahp/internal/audit"
	"github.com/ahp-gateway/ahp/internal/auth"
	"github.com/ahp-gateway/ahp/internal/metrics"
	"github.com/ahp-gateway/ahp/internal/redact"
	"github.com/google/uuid"
)

// Notifier is told about every new approval, off the decision path; notify.Dispatcher implements
// it. Notify must not block.
type Notifier interface {
	Notify(a approval.Approval)
}

// approvalListenBuffer bounds the approval changes waiting for the audit log, metrics and
// notifiers; an approval's size is bounded (approval.MaxInput, MaxComment, MaxReason), so this
// bounds bytes too.
const approvalListenBuffer = 4096

// newApprovals builds the approval manager over the configured store (in-process by default).
func (s *Server) newApprovals() *approval.Manager {
	var store approval.Store = s.cfg.ApprovalStore
	if store == nil {
		store = approval.NewMemory(s.cfg.Approvals)
	}
	return approval.NewManager(approval.Config{
		Store:     store,
		MaxHeld:   s.cfg.MaxHeldCalls,
		Summarize: inputSummary(s.cfg.Redactor),
		Principal: func(ctx context.Context) string {
			p, _ := auth.PrincipalFrom(ctx)
			return p.Name
		},
		NewID: func() string {
			id, err := uuid.NewV7()
			if err != nil {
				return uuid.NewString()
			}
			return id.String()
		},
		Logger: s.log,
	})
}

// approvalHint says where to decide an approval, for callers that cannot wait.
func (s *Server) approvalHint(id string) string {
	if s.cfg.ApprovalURL != "" {
		return "decide at " + strings.ReplaceAll(s.cfg.ApprovalURL, "{id}", id)
	}
	return "decide with: ahp-server approvals approve " + id
}

// inputSummary is what approvers see of the call: the redacted tool input (or payload) as JSON.
func inputSummary(r *redact.Redactor) func(*ahpv1.Event) string {
	return func(ev *ahpv1.Event) string {
		red, _ := r.Event(ev)
		var v any
		switch {
		case red.GetTool().GetInput() != nil:
			v = red.GetTool().GetInput().AsMap()
		case red.GetPayload() != nil:
			v = red.GetPayload().AsInterface()
		default:
			return ""
		}
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(b)
	}
}

// listenApprovals records approval changes (audit, metrics, logs) and notifies, until the
// manager closes; it returns a channel closed when it is done. It subscribes before it returns,
// so no change made after it — the first approval a request opens, however soon — goes
// unrecorded or unnotified.
func (s *Server) listenApprovals() <-chan struct{} {
	done := make(chan struct{})
	w, err := s.approvals.Watch(approvalListenBuffer)
	if err != nil {
		close(done) // the manager is closed
		return done
	}
	go func() {
		defer close(done)
		for {
			for end := false; !end; {
				select {
				case c := <-w.C():
					s.approvalChanged(c)
				case <-w.Done():
					for drained := false; !drained; { // what was queued before the end
						select {
						case c := <-w.C():
							s.approvalChanged(c)
						default:
							drained = true
						}
					}
					end = true
				}
			}
			if !errors.Is(w.Err(), approval.ErrWatchBehind) {
				return
			}
			s.log.Error("approval changes came faster than the audit log took them; some were not recorded", "buffer", approvalListenBuffer)
			if w, err = s.approvals.Watch(approvalListenBuffer); err != nil {
				return // closed
			}
		}
	}()
	return done
}

// approvalChanged is one change: a metric, a log line, an audit record and, for a new approval,
// a notification.
func (s *Server) approvalChanged(c approval.Change) {
	if c.Remote {
		return // the replica that made the change records it, once
	}
	a := c.Approval
	outcome := c.Kind.String()
	switch c.Kind {
	case approval.Decided:
		outcome = metrics.ApprovalApproved
		if a.State == approval.StateDenied {
			outcome = metrics.ApprovalDenied
		}
	case approval.Abandoned:
		if !a.Abandoned {
			outcome = "" // a caller came back
		}
	}
	if outcome != "" {
		s.cfg.Metrics.ApprovalChanged(outcome, a.Latency().Seconds())
	}
	s.log.Info("approval "+c.Kind.String(), "approval_id", a.ID, "state", a.State.String(), "rule_id", first(a.RuleIDs),
		"agent_id", a.Agent, "session_id", a.Session, "decided_by", a.DecidedBy)
	if c.Kind == approval.Requested && s.cfg.Notifier != nil {
		s.cfg.Notifier.Notify(a)
	}
	if s.cfg.Audit == nil {
		return
	}
	at := a.CreatedAt
	switch {
	case c.Kind == approval.Consumed:
		at = a.ConsumedAt
	case !a.DecidedAt.IsZero():
		at = a.DecidedAt
	}
	if c.Kind == approval.Abandoned {
		at = time.Now()
	}
	rec := audit.Record{
		Time: audit.FormatTime(at), Kind: audit.KindApproval, EventID: a.EventID, Source: a.Source,
		SessionID: a.Session, AgentID: a.Agent, EventType: a.EventType, ToolName: a.Tool, ApprovalID: a.ID,
		Approval: &audit.Approval{
			Change: c.Kind.String(), State: a.State.String(), RuleIDs: a.RuleIDs, Principal: a.Principal,
			DecidedBy: a.DecidedBy, Comment: a.Comment, LatencyMs: uint64(a.Latency().Milliseconds()), Abandoned: a.Abandoned,
		},
	}
	if err := s.cfg.Audit.Append(rec); err != nil {
		s.cfg.Metrics.AuditWriteError()
		s.log.Error("audit write failed for an approval change", "approval_id", a.ID, "error", err)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
