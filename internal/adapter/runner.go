package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"connectrpc.com/connect"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/internal/bridge"
	"github.com/ahp-gateway/ahp/internal/names"
)

// DefaultMaxInputBytes bounds one hook input (4 MiB, the bridge's message limit).
const DefaultMaxInputBytes = 4 << 20

// UnreadableInputReason is the reason of the failure policy's denial of an event whose input
// could not be mapped (fail-closed).
const UnreadableInputReason = "The policy hook could not read this event."

// Failure kinds beyond bridge.Failure's, as labels and logs carry them.
const (
	// failureRejected: the server refused the event itself (InvalidArgument, FailedPrecondition,
	// OutOfRange). A hook has no error channel to hand that back, so it is a failure like any
	// other here, and logged at error level: it means the adapter built a bad event.
	failureRejected = "rejected"
	// failureBadInput: the hook input could not be mapped.
	failureBadInput = "bad_input"
	// failureNotStarted: the clients could not be made (Config.StartErr).
	failureNotStarted = "not_started"
	// failureInternal: the adapter itself failed (a recovered panic: a bug).
	failureInternal = "internal"
)

// Config configures an Adapter. Provider and Clients (or StartErr) are required.
type Config struct {
	// Provider is the runtime whose hooks are served.
	Provider Provider
	// Clients reach the ahp-server (bridge.NewUpstream) or the decision core in-process
	// (bridge.NewEmbedded). Only Intercept and Observation are called.
	Clients bridge.Clients
	// StartErr, when not nil, is why Clients could not be made (an embedded policy that does not
	// load, an upstream token variable that is unset, …). Every event then meets the failure
	// policy, as if the backend were down, instead of the hook failing in a way the runtime would
	// ignore.
	StartErr error
	// Timeout is the deadline of each call, connection setup included (default
	// bridge.DefaultTimeout; at most bridge.MaxTimeout).
	Timeout time.Duration
	// ApprovalWait, when longer than Timeout, is the deadline of interceptions instead: how long
	// a call held for a person's approval may wait (see bridge.Config.ApprovalWait). The
	// runtime's own hook timeout must be longer still.
	ApprovalWait time.Duration
	// FailurePolicy applies when no decision arrives (default bridge.FailClosed).
	FailurePolicy bridge.FailurePolicy
	// IncludeNative copies the hook input into Event.native.
	IncludeNative bool
	// MaxInputBytes bounds one hook input (default DefaultMaxInputBytes).
	MaxInputBytes int
	// Logger receives operational logs, never payload values (default: discarded). The command
	// form logs to stderr, which both runtimes show to the user or keep in their debug logs.
	Logger *slog.Logger
	// Event names the hook event for inputs that do not (Options.Event).
	Event string
	// MCP is what the runtime's MCP configuration says about its servers (Options.MCP).
	MCP MCPConfig
	// Now and NewID give event times and ids (default time.Now and UUIDv7); tests fix them.
	Now   func() time.Time
	NewID func() string
}

// Adapter serves one provider's hooks. It is safe for concurrent use (the HTTP form calls Handle
// from many goroutines).
type Adapter struct {
	cfg Config
	log *slog.Logger
}

// New checks cfg and fills in its defaults.
func New(cfg Config) (*Adapter, error) {
	if formats[cfg.Provider] == nil {
		return nil, fmt.Errorf("adapter: Config.Provider must be one of %s, got %v", ProviderList(), cfg.Provider)
	}
	timeout, err := bridge.CheckBackend(cfg.Clients, cfg.StartErr, cfg.FailurePolicy, cfg.Timeout, cfg.ApprovalWait)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	cfg.Timeout = timeout
	if cfg.MaxInputBytes <= 0 {
		cfg.MaxInputBytes = DefaultMaxInputBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = newEventID
	}
	return &Adapter{cfg: cfg, log: cfg.Logger.With("provider", cfg.Provider.String())}, nil
}

// Result is the outcome of one hook invocation, for either form.
type Result struct {
	// Output is the hook output JSON (compact, no newline), or nil when the hook says nothing.
	Output []byte
	// Exit is the command hook's exit status: 0 whenever there is an answer (a denial too);
	// 1 for an event that could not be recorded or read (both runtimes: a non-blocking error);
	// 2 for an input that could not be read at all under fail-closed (a blocking error).
	Exit int
	// Stderr is the command hook's diagnostic for stderr; with Exit 2 the runtimes feed it back
	// as the blocking reason.
	Stderr string
	// Status is the HTTP form's status: 200 with Output, 204 without; 400 for an unreadable
	// input, 503 for an event that could not be recorded (Claude Code treats any non-2xx answer
	// as a non-blocking error).
	Status int
}

// Handle maps one hook input, asks the server and renders the answer. It returns within the
// configured timeout plus local work, and never panics: a bug caught on the way is answered like a
// backend failure (the failure policy, for a decided event), not with Go's crash exit status 2,
// which the runtimes would read as a blocking error.
func (a *Adapter) Handle(ctx context.Context, body []byte) (res Result) {
	var req *Request
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("panic: %v", v)
			a.log.Error("handling a hook event panicked", "error", err.Error())
			if req.Intercepted() {
				res = a.failed(req, failureInternal, err, a.log)
				return
			}
			res = Result{Exit: 1, Stderr: "ahp-jsonrpc-bridge hook: internal error", Status: http.StatusInternalServerError}
		}
	}()
	req, err := Map(a.cfg.Provider, body, Options{ID: a.cfg.NewID(), Now: a.cfg.Now(), IncludeNative: a.cfg.IncludeNative, Event: a.cfg.Event, MCP: a.cfg.MCP})
	if err != nil {
		return a.unreadable(err)
	}
	log := a.log.With("hook_event", req.HookEvent)
	if !req.Adapted() {
		log.Warn("hook event not adapted; no opinion (register the hook only for the events in docs/adapters.md)")
		return a.quiet()
	}
	log = log.With("event_type", names.EventTypeName(req.Event.GetType()), "event_id", req.Event.GetId())
	if req.Intercepted() {
		return a.intercept(ctx, req, log)
	}
	return a.observe(ctx, req, log)
}

func (a *Adapter) intercept(ctx context.Context, req *Request, log *slog.Logger) Result {
	if a.cfg.StartErr != nil {
		return a.failed(req, failureNotStarted, a.cfg.StartErr, log)
	}
	ctx, cancel := context.WithTimeout(ctx, max(a.cfg.Timeout, a.cfg.ApprovalWait))
	defer cancel()
	resp, err := a.cfg.Clients.Intercept.Intercept(ctx, connect.NewRequest(&ahpv1.InterceptRequest{
		Event:        req.Event,
		Capabilities: req.Capabilities,
	}))
	if err != nil {
		return a.failed(req, classify(ctx, err), err, log)
	}
	d := resp.Msg.GetDecision()
	if d == nil {
		return a.failed(req, bridge.FailureBadResponse.String(), errors.New("InterceptResponse has no decision"), log)
	}
	out, err := RenderOutput(req, d, "")
	if err != nil {
		return a.failed(req, bridge.FailureBadResponse.String(), fmt.Errorf("rendering the decision: %w", err), log)
	}
	log.Debug("decided", "decision_id", d.GetDecisionId(), "verdict", d.GetVerdict().String(), "rule_ids", d.GetMatchedRuleIds(), "replayed", d.GetReplayed())
	return answered(out)
}

func (a *Adapter) observe(ctx context.Context, req *Request, log *slog.Logger) Result {
	err := a.cfg.StartErr
	failure := failureNotStarted
	if err == nil {
		cctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
		defer cancel()
		if _, err = a.cfg.Clients.Observation.Observe(cctx, connect.NewRequest(&ahpv1.ObserveRequest{Event: req.Event})); err != nil {
			failure = classify(cctx, err)
		}
	}
	if err != nil {
		// Nothing was to be decided, so the failure policy has nothing to say; the runtime is told
		// the hook failed, which it reports without stopping the agent.
		log.Warn("event not recorded", "failure", failure, "error", err.Error())
		return Result{
			Exit:   1,
			Stderr: fmt.Sprintf("ahp-jsonrpc-bridge hook: %s not recorded by the policy backend (%s)", req.HookEvent, failure),
			Status: http.StatusServiceUnavailable,
		}
	}
	log.Debug("recorded")
	return a.quiet()
}

// quiet is the answer of a hook with nothing to say: no output, or the little the runtime needs
// to read (Cline: {"cancel": false}).
func (a *Adapter) quiet() Result {
	return answered(Output{Stdout: formats[a.cfg.Provider].observed})
}

// failed answers an intercepted event with the failure policy: fail-closed, a denial with the
// bridge's synthetic reason ("Required policy backend unavailable."); fail-open, no decision. Both
// carry a notice for the user saying that the policy did not decide, and why.
func (a *Adapter) failed(req *Request, failure string, err error, log *slog.Logger) Result {
	d := a.synthetic(SyntheticReason(failure))
	attrs := []any{"failure", failure, "failure_policy", a.cfg.FailurePolicy.String(), "decision_id", d.GetDecisionId(), "error", err.Error()}
	if failure == failureRejected {
		log.Error("the policy backend refused the event; answering with the failure policy", attrs...)
	} else {
		log.Warn("no decision from the policy backend; answering with the failure policy", attrs...)
	}
	out, rerr := RenderOutput(req, d, a.notice(failure))
	if rerr != nil { // cannot happen: a synthetic decision always renders
		log.Error("rendering the failure policy's answer", "error", rerr.Error())
		return Result{Exit: 1, Stderr: "ahp-jsonrpc-bridge hook: internal error", Status: http.StatusInternalServerError}
	}
	return answered(out)
}

// unreadable answers an input that could not be mapped. When the event is known to be decided,
// the failure policy answers in the runtime's terms (fail-closed: a denial saying the input was
// unreadable). Otherwise the hook can only fail: with exit 2, the runtimes' blocking error, under
// fail-closed — the one way to refuse without knowing the event — and exit 1 (non-blocking)
// under fail-open or for events that are only recorded, where exit 2 would have side effects
// (a Stop hook's exit 2 keeps the agent going). The HTTP form answers 400 then, which Claude Code
// treats as a non-blocking error.
func (a *Adapter) unreadable(err error) Result {
	var ie *InputError
	name := ""
	if errors.As(err, &ie) {
		name = ie.HookEvent
	}
	if name == "" {
		name = a.cfg.Event
	}
	log := a.log.With("hook_event", name)
	spec := formats[a.cfg.Provider].events[name]
	if spec != nil && spec.delivery == intercept {
		req := &Request{Provider: a.cfg.Provider, HookEvent: name, spec: spec, Event: &ahpv1.Event{}}
		return a.failed(req, failureBadInput, err, log)
	}
	exit := 1
	if a.cfg.FailurePolicy == bridge.FailClosed && spec == nil {
		exit = 2
	}
	return Result{
		Exit:   exit,
		Stderr: "ahp-jsonrpc-bridge hook: unreadable " + a.cfg.Provider.String() + " " + err.Error(),
		Status: http.StatusBadRequest,
	}
}

// SyntheticReason is the reason of a fail-closed denial for a failure kind.
func SyntheticReason(failure string) string {
	if failure == failureBadInput {
		return UnreadableInputReason
	}
	return bridge.SyntheticDenyReason
}

// synthetic is the failure policy's decision: a labelled denial under fail-closed, no effect
// under fail-open.
func (a *Adapter) synthetic(reason string) *ahpv1.Decision {
	d := &ahpv1.Decision{DecisionId: newEventID(), Synthetic: true, Verdict: ahpv1.Verdict_VERDICT_ALLOW}
	if a.cfg.FailurePolicy == bridge.FailClosed {
		d.Verdict = ahpv1.Verdict_VERDICT_DENY
		d.Effects = []*ahpv1.Effect{{Effect: &ahpv1.Effect_Deny{Deny: &ahpv1.DenyEffect{Reason: reason, Code: bridge.SyntheticDenyCode}}}}
	}
	return d
}

// notice is the user-facing label of a failure policy answer.
func (a *Adapter) notice(failure string) string {
	return Notice(failure, a.cfg.FailurePolicy)
}

// Notice is the message (systemMessage) that labels an answer of the failure policy, e.g.
// "AHP policy hook: no decision from the policy backend (deadline_exceeded); fail-closed: denied."
func Notice(failure string, p bridge.FailurePolicy) string {
	what := "no decision from the policy backend"
	if failure == failureBadInput {
		what = "the hook input could not be read"
	}
	outcome := "fail-closed: denied."
	if p == bridge.FailOpen {
		outcome = "fail-open: not checked by the policy."
	}
	return "AHP policy hook: " + what + " (" + failure + "); " + outcome
}

func answered(out Output) Result {
	if out.Stdout == nil {
		return Result{Exit: out.Exit, Stderr: out.Stderr, Status: http.StatusNoContent}
	}
	return Result{Output: out.Stdout, Exit: out.Exit, Stderr: out.Stderr, Status: http.StatusOK}
}

// classify names an RPC failure as bridge.Classify does, with "rejected" for an event the server
// refused. ctx is the call's context.
func classify(ctx context.Context, err error) string {
	f, rejected := bridge.Classify(ctx, err)
	if rejected {
		return failureRejected
	}
	return f.String()
}

// Run is the per-event command hook: one input from stdin, the output (one line of JSON, or
// nothing) to stdout, diagnostics to stderr, and the exit status to return.
func (a *Adapter) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	body, err := io.ReadAll(io.LimitReader(stdin, int64(a.cfg.MaxInputBytes)+1))
	var res Result
	switch {
	case err != nil:
		res = a.unreadable(&InputError{Reason: "stdin could not be read: " + err.Error()})
	case len(body) > a.cfg.MaxInputBytes:
		res = a.unreadable(&InputError{Reason: fmt.Sprintf("over the %d-byte limit", a.cfg.MaxInputBytes)})
	default:
		res = a.Handle(ctx, body)
	}
	if res.Output != nil {
		if _, err := stdout.Write(append(res.Output, '\n')); err != nil {
			a.log.Error("writing the hook output failed", "error", err.Error())
			fmt.Fprintln(stderr, "ahp-jsonrpc-bridge hook: writing the answer failed:", err)
			return 1
		}
	}
	if res.Stderr != "" {
		fmt.Fprintln(stderr, res.Stderr)
	}
	return res.Exit
}

// UsageExit is the exit status of a hook that cannot run because of bad usage (flags): 2, which
// both runtimes take as a blocking error — a misconfigured policy hook refuses rather than letting
// everything through — unless the runtime is waiting on an event that is only recorded, where
// exit 2 has side effects (a Stop hook's exit 2 keeps the agent going, again and again): then 1, a
// non-blocking error. The event is read from stdin only when stdin is not a terminal, so a person
// trying flags is not kept waiting.
func UsageExit(stdin io.Reader) int {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice != 0 {
			return 2
		}
	}
	body, err := io.ReadAll(io.LimitReader(stdin, DefaultMaxInputBytes))
	if err != nil {
		return 2
	}
	var in map[string]any
	if json.Unmarshal(body, &in) != nil {
		return 2
	}
	// The runtime is not known yet (the flags naming it may be what is wrong): a named event that
	// no runtime decides is at most recorded.
	known := false
	for _, p := range Providers() {
		name, _ := formats[p].eventName(in)
		if name == "" {
			continue
		}
		if Decides(p, name) && formats[p].events[name].refuses() {
			return 2
		}
		known = true
	}
	if known {
		return 1
	}
	return 2
}
