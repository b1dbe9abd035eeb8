package bridge

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"

	"connectrpc.com/connect"
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/names"
	"github.com/google/uuid"
)

// SyntheticDenyReason is the reason of every synthetic denial, the generic local reason the Agent
// Hooks Protocol suggests (base/failure.md).
const SyntheticDenyReason = "Required policy backend unavailable."

// SyntheticDenyCode is the deny code of a synthetic denial in Agent Hooks results.
const SyntheticDenyCode = names.Namespace + ".bridge.backend_unavailable"

// Keys that mark a synthetic answer. Agent Hooks results carry them in
// extensions["dev.ahpgateway"] next to "synthetic": true; Agent Harness decisions carry them in
// metadata, prefixed "dev.ahpgateway/", next to "dev.ahpgateway/synthetic": true.
const (
	// hooksFailureKey / harnessFailureKey hold the Failure kind ("deadline_exceeded").
	hooksFailureKey   = "failure"
	harnessFailureKey = names.Namespace + "/failure"
	// hooksPolicyKey / harnessPolicyKey hold the FailurePolicy that applied ("fail-closed").
	hooksPolicyKey   = "failurePolicy"
	harnessPolicyKey = names.Namespace + "/failure_policy"
)

// Failure classifies an operational upstream failure. Its String form is what synthetic answers
// and logs carry.
type Failure int

const (
	// FailureDeadlineExceeded: no answer within Config.Timeout.
	FailureDeadlineExceeded Failure = iota
	// FailureUnavailable: the upstream could not be reached or dropped the call (connection
	// refused, reset or closed; Unavailable; Aborted).
	FailureUnavailable
	// FailureBadResponse: something answered, but not with a readable ahp.v1 response.
	FailureBadResponse
	// FailureBackendError: the upstream reported a failure of its own (Internal, Unknown,
	// Unimplemented, ResourceExhausted, ...).
	FailureBackendError
	// FailureUnauthenticated: the upstream refused the bridge's credentials.
	FailureUnauthenticated
	// FailureCanceled: the caller gave up (its context ended) before the upstream answered.
	FailureCanceled
	failureKinds
)

var failureNames = [failureKinds]string{
	"deadline_exceeded", "unavailable", "bad_response", "backend_error", "unauthenticated", "canceled",
}

// String returns the snake_case name ("deadline_exceeded").
func (f Failure) String() string {
	if f >= 0 && f < failureKinds {
		return failureNames[f]
	}
	return "unknown"
}

// upstreamError is the outcome of an upstream call that produced no usable answer.
type upstreamError struct {
	// rejected is true when the upstream refused the request itself (InvalidArgument,
	// FailedPrecondition, OutOfRange): the caller's input was wrong, not the upstream.
	rejected bool
	code     connect.Code
	failure  Failure // when !rejected
	message  string  // the upstream's message, for rejections and logs; never sent unredacted
}

func (e *upstreamError) Error() string {
	if e.rejected {
		return "upstream rejected the request: " + e.message
	}
	return "upstream failure (" + e.failure.String() + "): " + e.message
}

// badResponse reports an answer that arrived but cannot be used.
func badResponse(why string) *upstreamError {
	return &upstreamError{failure: FailureBadResponse, code: connect.CodeInternal, message: why}
}

// Classify says what became of an upstream call that failed with err: rejected when the upstream
// refused the request itself (an InvalidArgument, FailedPrecondition or OutOfRange error response:
// the caller's input was wrong), and otherwise the operational Failure, which the failure policy
// answers for. ctx is the call's context, so a deadline that passed is recognised even when the
// transport reports it otherwise. The bridge and the hook adapters classify with it alike.
func Classify(ctx context.Context, err error) (f Failure, rejected bool) {
	ue := classify(ctx, err)
	return ue.failure, ue.rejected
}

// classify turns an upstream call error into an upstreamError. ctx is the per-call context, so a
// deadline that passed is recognised even when the transport reports it otherwise.
func classify(ctx context.Context, err error) *upstreamError {
	var ue *upstreamError
	if errors.As(err, &ue) {
		return ue
	}
	code := connect.CodeOf(err)
	out := &upstreamError{code: code, message: err.Error()}
	var cerr *connect.Error
	if errors.As(err, &cerr) {
		out.message = cerr.Message()
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || code == connect.CodeDeadlineExceeded:
		out.failure = FailureDeadlineExceeded
	case errors.Is(ctx.Err(), context.Canceled):
		out.failure = FailureCanceled
	case code == connect.CodeCanceled, connectionLost(err):
		// With the context alive, "canceled" is connect's word for a call the transport gave up
		// on (a reset connection, for one).
		out.failure = FailureUnavailable
	case code == connect.CodeInvalidArgument, code == connect.CodeFailedPrecondition, code == connect.CodeOutOfRange:
		// Only a real error response from the server says the request was wrong.
		if connect.IsWireError(err) {
			out.rejected = true
		} else {
			out.failure = FailureBadResponse
		}
	case code == connect.CodeUnavailable, code == connect.CodeAborted:
		out.failure = FailureUnavailable
	case code == connect.CodeUnauthenticated, code == connect.CodePermissionDenied:
		out.failure = FailureUnauthenticated
	case cerr != nil && !connect.IsWireError(err) && (code == connect.CodeUnknown || code == connect.CodeInternal):
		// The client could not read what came back: a wrong content type, a truncated or
		// unparsable body, a non-Connect HTTP status.
		out.failure = FailureBadResponse
	default:
		out.failure = FailureBackendError
	}
	return out
}

// connectionLost reports errors of a connection that broke under a call.
func connectionLost(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// counters are the running totals behind Bridge.Counters.
type counters struct {
	failOpen, failClosed, observeFailures, handshakeFallbacks, panics, draftFallbacks atomic.Uint64
	byFailure                                                                         [failureKinds]atomic.Uint64
}

// Counters are totals since the Bridge was made; metrics exporters read them with
// Bridge.Counters.
type Counters struct {
	// FailOpen counts requests answered with the fail-open shape after an upstream failure (an
	// ahp/batch counts once).
	FailOpen uint64
	// FailClosed counts requests answered with a synthetic denial after an upstream failure.
	FailClosed uint64
	// ObserveFailures counts notifications the upstream did not record.
	ObserveFailures uint64
	// HandshakeFallbacks counts ahp/handshake requests answered by the bridge itself because the
	// upstream failed.
	HandshakeFallbacks uint64
	// Panics counts messages whose handling panicked (a bug; the message got an internal error).
	Panics uint64
	// DraftFallbacks counts effects a "draft" caller could not express as themselves (each is
	// labelled in the answer and logged).
	DraftFallbacks uint64
	// ByFailure counts operational upstream failures by Failure name ("deadline_exceeded", ...),
	// whatever became of them.
	ByFailure map[string]uint64
}

// Counters returns a snapshot of the bridge's counters.
func (b *Bridge) Counters() Counters {
	c := Counters{
		FailOpen:           b.count.failOpen.Load(),
		FailClosed:         b.count.failClosed.Load(),
		ObserveFailures:    b.count.observeFailures.Load(),
		HandshakeFallbacks: b.count.handshakeFallbacks.Load(),
		Panics:             b.count.panics.Load(),
		DraftFallbacks:     b.count.draftFallbacks.Load(),
		ByFailure:          make(map[string]uint64, failureKinds),
	}
	for i := range b.count.byFailure {
		c.ByFailure[Failure(i).String()] = b.count.byFailure[i].Load()
	}
	return c
}

// syntheticDecision is the canonical decision the failure policy substitutes for the upstream's:
// a denial under fail-closed, no effect under fail-open. Both are marked synthetic, so they render
// through the same code as real decisions and carry the dialect's synthetic marker.
func (b *Bridge) syntheticDecision() *ahpv1.Decision {
	d := &ahpv1.Decision{DecisionId: newDecisionID(), Synthetic: true, Verdict: ahpv1.Verdict_VERDICT_ALLOW}
	if b.cfg.FailurePolicy == FailClosed {
		d.Verdict = ahpv1.Verdict_VERDICT_DENY
		d.Effects = []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{
			Reason: SyntheticDenyReason,
			Code:   SyntheticDenyCode,
		}}}}
	}
	return d
}

// FailureEvent describes one operational upstream failure, for metrics.
type FailureEvent struct {
	// Dialect is "hooks" or "harness".
	Dialect string
	// Failure is what went wrong.
	Failure Failure
	// Policy is the failure policy that answered, for decisions.
	Policy FailurePolicy
	// Observe is true for a notification the upstream did not record (no policy applies).
	Observe bool
}

// dialectOf finds the "dialect" attribute in a log attribute list.
func dialectOf(attrs []any) string {
	for i := 0; i+1 < len(attrs); i += 2 {
		if k, ok := attrs[i].(string); ok && k == "dialect" {
			if v, ok := attrs[i+1].(string); ok {
				return v
			}
		}
	}
	return ""
}

// newDecisionID gives synthetic decisions an id like the server's (UUIDv7), so a log line and the
// answer the harness got can be matched.
func newDecisionID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// applyPolicy records that the failure policy is about to answer for ue and logs it. The log has
// the method, event type and failure, never payload values.
func (b *Bridge) applyPolicy(ue *upstreamError, decisionID string, attrs ...any) {
	b.count.byFailure[ue.failure].Add(1)
	if b.cfg.FailurePolicy == FailOpen {
		b.count.failOpen.Add(1)
	} else {
		b.count.failClosed.Add(1)
	}
	if b.cfg.OnFailure != nil {
		b.cfg.OnFailure(FailureEvent{Dialect: dialectOf(attrs), Failure: ue.failure, Policy: b.cfg.FailurePolicy})
	}
	attrs = append(attrs,
		"failure", ue.failure.String(),
		"failure_policy", b.cfg.FailurePolicy.String(),
		"decision_id", decisionID,
		"error", redact(ue.message),
	)
	b.log.Warn("upstream failed; answering with the failure policy", attrs...)
}
