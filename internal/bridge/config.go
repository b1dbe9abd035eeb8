package bridge

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
	"github.com/ahp-gateway/ahp/internal/contentstore"
	"github.com/ahp-gateway/ahp/internal/core"
	"google.golang.org/protobuf/proto"
)

// Dialect selects which AHP protocol a message is read as.
type Dialect int

const (
	// DialectAuto chooses per message by method: hooks/* is the Agent Hooks Protocol, ahp/* the
	// Agent Harness Protocol; anything else (unknown methods, unparsable input, responses) is
	// answered the Agent Hooks way.
	DialectAuto Dialect = iota
	// DialectHooks reads every message as Agent Hooks Protocol v0.1.
	DialectHooks
	// DialectHarness reads every message as Agent Harness Protocol v2.4.
	DialectHarness
)

// dialectSpelling spells Dialect values on the command line.
var dialectSpelling = spelling[Dialect]{typ: "Dialect", what: "dialect", names: []string{"auto", "hooks", "harness"}}

// String returns the flag spelling: "auto", "hooks" or "harness".
func (d Dialect) String() string { return dialectSpelling.format(d) }

// ParseDialect parses the flag spelling of a Dialect ("auto", "hooks", "harness"); "" is auto.
func ParseDialect(s string) (Dialect, error) {
	if strings.TrimSpace(s) == "" {
		return DialectAuto, nil
	}
	return dialectSpelling.parse(s)
}

// FailurePolicy says what a decision becomes when the upstream cannot give one (deadline
// exceeded, connection refused or reset, Unavailable, Internal, an unreadable answer, ...).
type FailurePolicy int

const (
	// FailClosed answers with a synthetic denial whose reason is SyntheticDenyReason, marked under
	// the dev.ahpgateway namespace. It is the zero value: an unset policy must not let actions
	// through.
	FailClosed FailurePolicy = iota
	// FailOpen answers as if no policy had an opinion: Hooks "effects": [], Harness allow, and for
	// typed events the shape that lets the agent proceed.
	FailOpen
)

// failurePolicySpelling spells FailurePolicy values on the command line.
var failurePolicySpelling = spelling[FailurePolicy]{typ: "FailurePolicy", what: "failure policy", names: []string{"fail-closed", "fail-open"}}

// String returns the flag spelling: "fail-closed" or "fail-open".
func (p FailurePolicy) String() string { return failurePolicySpelling.format(p) }

// ParseFailurePolicy parses "fail-open" or "fail-closed".
func ParseFailurePolicy(s string) (FailurePolicy, error) { return failurePolicySpelling.parse(s) }

// spelling is the flag spelling of an enum whose values count up from 0: names[v] is value v's.
type spelling[E ~int] struct {
	typ   string // the Go type, for values without a spelling
	what  string // what an error calls a value
	names []string
}

func (sp spelling[E]) format(v E) string {
	if v >= 0 && int(v) < len(sp.names) {
		return sp.names[v]
	}
	return fmt.Sprintf("%s(%d)", sp.typ, int(v))
}

// parse accepts a spelling in any case, with surrounding space.
func (sp spelling[E]) parse(s string) (E, error) {
	if i := slices.Index(sp.names, strings.ToLower(strings.TrimSpace(s))); i >= 0 {
		return E(i), nil
	}
	last := len(sp.names) - 1
	return 0, fmt.Errorf("bridge: unknown %s %q (want %s or %s)", sp.what, s, strings.Join(sp.names[:last], ", "), sp.names[last])
}

// Deadline bounds of Config.Timeout: the range the Agent Hooks Protocol asks harnesses to support
// for an interception deadline (base/failure.md, AHP-FAIL-002).
const (
	MinTimeout     = 100 * time.Millisecond
	MaxTimeout     = 30 * time.Second
	DefaultTimeout = 2 * time.Second
	// MaxApprovalWait bounds Config.ApprovalWait.
	MaxApprovalWait = 24 * time.Hour
)

// CheckBackend checks what a front end beside the bridge (a hook adapter, the MCP gateway) needs
// to reach the policy — the Intercept and Observation clients unless its backend failed to start,
// a failure policy, a deadline and an approval wait within bounds — and returns the deadline with
// its default (DefaultTimeout for zero) filled in.
func CheckBackend(c Clients, startErr error, p FailurePolicy, timeout, approvalWait time.Duration) (time.Duration, error) {
	if startErr == nil && (c.Intercept == nil || c.Observation == nil) {
		return 0, errors.New("Config.Clients needs the Intercept and Observation clients (use bridge.NewUpstream or bridge.NewEmbedded)")
	}
	switch p {
	case FailClosed, FailOpen:
	default:
		return 0, fmt.Errorf("invalid failure policy %v", p)
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 0 || timeout > MaxTimeout {
		return 0, fmt.Errorf("timeout %v outside (0, %v]", timeout, MaxTimeout)
	}
	if approvalWait < 0 || approvalWait > MaxApprovalWait {
		return 0, fmt.Errorf("approval wait %v outside [0, %v]", approvalWait, MaxApprovalWait)
	}
	return timeout, nil
}

// Clients are the four ahp.v1 Connect clients a Bridge calls. NewUpstream builds them for a
// remote ahp-server, NewEmbedded for one running in-process; tests may supply their own.
type Clients struct {
	// Intercept decides blocking events (hooks/intercept, Harness pre_action, pre_prompt,
	// handshake and query event types, ahp/batch).
	Intercept ahpv1connect.InterceptServiceClient
	// Typed decides the eight Harness typed events.
	Typed ahpv1connect.TypedDecisionServiceClient
	// Observation records hooks/observe and Harness fire-and-forget notifications.
	Observation ahpv1connect.ObservationServiceClient
	// Harness answers ahp/handshake, ahp/query and the capability lookup of hooks/capabilities.
	Harness ahpv1connect.HarnessServiceClient
}

// Config configures a Bridge. Only Clients is required; zero values take the documented defaults.
type Config struct {
	// OnFailure is told about every operational upstream failure (for metrics); it must be quick.
	OnFailure func(FailureEvent)
	// Clients reach the upstream ahp-server (NewUpstream) or an in-process one (NewEmbedded).
	Clients Clients

	// Dialect pins a dialect; the zero value DialectAuto chooses per message by method.
	Dialect Dialect

	// Timeout is the deadline of each upstream call, covering connection setup, sending,
	// evaluation and reading the answer; when it passes the failure policy applies and a late
	// answer is ignored. Zero means DefaultTimeout; otherwise it must lie in [MinTimeout,
	// MaxTimeout].
	Timeout time.Duration

	// ApprovalWait, when longer than Timeout, is the deadline of decisions instead (Intercept,
	// batches, typed decisions): how long a call held for a person's approval may wait on the
	// server (docs/approvals.md). A server that does not answer at all is then noticed only
	// after this long. Zero: Timeout; the server answers a call it cannot hold that long with
	// the approval id, and a retry once approved goes through. At most MaxApprovalWait.
	ApprovalWait time.Duration

	// FailurePolicy applies when the upstream fails operationally (default FailClosed).
	FailurePolicy FailurePolicy

	// Source is put on Agent Harness Protocol events, which carry no source of their own. The
	// server's idempotency scopes source-less events by agent id, so "" (the default) is safe;
	// set a URI such as "urn:ahp-jsonrpc-bridge:<host>" when several harness instances may reuse
	// agent ids.
	Source string

	// HarnessConfig are the Agent Harness Protocol limits this bridge enforces before calling the
	// upstream (max_depth, batch_size) and advertises in a handshake answered locally; each unset
	// field means no limit, exactly as the reference treats None. nil means the reference defaults
	// (timeout_ms 10000, batch_size 100, max_depth 10). With NewEmbedded, pass the same limits to
	// server.Config.Limits (see ServerLimits) so both ends agree. A handshake answered by the
	// upstream advertises, per field, the smaller of the two.
	HarnessConfig *ahpv1.HarnessConfig

	// HooksTransports are the Agent Hooks Protocol bindings this deployment serves, listed by
	// hooks/capabilities (default ["stdio", "http"]).
	HooksTransports []string

	// HooksAuthentication reports that the HTTP listener demands bearer credentials, which the
	// "draft" hooks/capabilities manifest states.
	HooksAuthentication bool

	// UploadMaxBytes is the largest content upload the HTTP listener accepts (the draft content
	// upload binding), stated in the draft manifest; 0 when the binding is not served.
	UploadMaxBytes int64

	// Uploads is the store of the content upload binding when the bridge serves it; draft events'
	// attachment refs then resolve against it (content.go). nil: refs pass through unresolved.
	Uploads *contentstore.Store

	// Version is this bridge's version, reported by hooks/capabilities and by a handshake answered
	// locally (default "dev").
	Version string

	// Logger receives operational logs (default slog.Default()). Logs never carry payload values.
	// The bridge writes nothing else anywhere: stdout belongs to the stdio transport.
	Logger *slog.Logger
}

// Reference defaults of HarnessConfig (a3s-ahp AhpServer::default_config).
const (
	defaultHarnessTimeoutMs = 10_000
	defaultHarnessBatchSize = 100
	defaultHarnessMaxDepth  = 10
)

// DefaultHarnessConfig returns the reference server's limits: timeout_ms 10000, batch_size 100,
// max_depth 10.
func DefaultHarnessConfig() *ahpv1.HarnessConfig {
	return &ahpv1.HarnessConfig{
		TimeoutMs: proto.Uint64(defaultHarnessTimeoutMs),
		BatchSize: proto.Uint64(defaultHarnessBatchSize),
		MaxDepth:  proto.Uint32(defaultHarnessMaxDepth),
	}
}

// ServerLimits converts Harness limits into the decision core's, for server.Config.Limits in
// embedded mode. The core has no "unlimited"; an unset field takes the core's default there.
func ServerLimits(h *ahpv1.HarnessConfig) core.HarnessLimits {
	if h == nil {
		h = DefaultHarnessConfig()
	}
	return core.HarnessLimits{TimeoutMs: h.GetTimeoutMs(), BatchSize: h.GetBatchSize(), MaxDepth: h.GetMaxDepth()}
}

// withDefaults validates cfg and fills in defaults.
func (cfg Config) withDefaults() (Config, error) {
	c := cfg.Clients
	if c.Intercept == nil || c.Typed == nil || c.Observation == nil || c.Harness == nil {
		return cfg, errors.New("bridge: Config.Clients needs all four clients (use NewUpstream or NewEmbedded)")
	}
	switch cfg.Dialect {
	case DialectAuto, DialectHooks, DialectHarness:
	default:
		return cfg, fmt.Errorf("bridge: invalid dialect %v", cfg.Dialect)
	}
	switch cfg.FailurePolicy {
	case FailClosed, FailOpen:
	default:
		return cfg, fmt.Errorf("bridge: invalid failure policy %v", cfg.FailurePolicy)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Timeout < MinTimeout || cfg.Timeout > MaxTimeout {
		return cfg, fmt.Errorf("bridge: timeout %v outside [%v, %v]", cfg.Timeout, MinTimeout, MaxTimeout)
	}
	if cfg.ApprovalWait < 0 || cfg.ApprovalWait > MaxApprovalWait {
		return cfg, fmt.Errorf("bridge: approval wait %v outside [0, %v]", cfg.ApprovalWait, MaxApprovalWait)
	}
	if cfg.HarnessConfig == nil {
		cfg.HarnessConfig = DefaultHarnessConfig()
	} else {
		cfg.HarnessConfig = proto.CloneOf(cfg.HarnessConfig) // the caller may reuse its copy
	}
	if len(cfg.HooksTransports) == 0 {
		cfg.HooksTransports = []string{"stdio", "http"}
	} else {
		cfg.HooksTransports = append([]string(nil), cfg.HooksTransports...)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}
