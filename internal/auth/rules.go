package auth

import (
	"strings"

	"connectrpc.com/grpchealth"
	"github.com/ahp-gateway/ahp/gen/ahp/v1/ahpv1connect"
)

// Rule says who may call a procedure.
type Rule struct {
	// Public lets anyone call, with or without credentials (credentials are not checked).
	Public bool
	// Scope is the scope the caller needs. Empty (with Public false) admits any authenticated
	// caller.
	Scope Scope
}

// Rules maps procedures to rules. A key is a full procedure ("/ahp.v1.ObservationService/Watch")
// or a whole service with a trailing slash ("/grpc.health.v1.Health/"); an exact key wins. A
// procedure matching no key is denied to everyone (ReasonNoRule), so a new RPC is closed until
// someone decides its scope.
type Rules map[string]Rule

// Lookup returns the rule for procedure.
func (r Rules) Lookup(procedure string) (Rule, bool) {
	if rule, ok := r[procedure]; ok {
		return rule, true
	}
	if i := strings.LastIndexByte(procedure, '/'); i > 0 {
		rule, ok := r[procedure[:i+1]]
		return rule, ok
	}
	return Rule{}, false
}

// Clone returns a copy to extend (for example with admin procedures).
func (r Rules) Clone() Rules {
	out := make(Rules, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// DefaultRules are the rules of ahp.v1, one per generated procedure name, so an RPC added to the
// schema stays closed until it is given a scope here:
//
//   - agent: every InterceptService and TypedDecisionService RPC, Observe, ObserveStream,
//     Handshake, Query, GetCapabilities;
//   - watch: Watch;
//   - approve: every ApprovalService RPC;
//   - public (unless cfg says otherwise): gRPC health and reflection. When not public they
//     admit any authenticated caller.
//
// admin has no ahp.v1 RPC yet; add admin procedures with Clone and pass them in Options.Rules.
func DefaultRules(cfg Config) Rules {
	r := Rules{ahpv1connect.ObservationServiceWatchProcedure: {Scope: ScopeWatch}}
	for _, p := range []string{
		ahpv1connect.ApprovalServiceListProcedure,
		ahpv1connect.ApprovalServiceGetProcedure,
		ahpv1connect.ApprovalServiceDecideProcedure,
		ahpv1connect.ApprovalServiceWatchProcedure,
	} {
		r[p] = Rule{Scope: ScopeApprove}
	}
	for _, p := range []string{
		ahpv1connect.InterceptServiceInterceptProcedure,
		ahpv1connect.InterceptServiceInterceptStreamProcedure,
		ahpv1connect.InterceptServiceInterceptBatchProcedure,

		ahpv1connect.TypedDecisionServiceIdleProcedure,
		ahpv1connect.TypedDecisionServiceDetectIntentProcedure,
		ahpv1connect.TypedDecisionServicePerceiveContextProcedure,
		ahpv1connect.TypedDecisionServiceRecallMemoryProcedure,
		ahpv1connect.TypedDecisionServicePlanProcedure,
		ahpv1connect.TypedDecisionServiceReasonProcedure,
		ahpv1connect.TypedDecisionServiceHandleRateLimitProcedure,
		ahpv1connect.TypedDecisionServiceConfirmProcedure,

		ahpv1connect.ObservationServiceObserveProcedure,
		ahpv1connect.ObservationServiceObserveStreamProcedure,

		ahpv1connect.HarnessServiceHandshakeProcedure,
		ahpv1connect.HarnessServiceQueryProcedure,
		ahpv1connect.HarnessServiceGetCapabilitiesProcedure,
	} {
		r[p] = Rule{Scope: ScopeAgent}
	}
	r["/"+grpchealth.HealthV1ServiceName+"/"] = Rule{Public: boolOr(cfg.PublicHealth, true)}
	for _, name := range reflectionServices {
		r["/"+name+"/"] = Rule{Public: boolOr(cfg.PublicReflection, true)}
	}
	return r
}

// reflectionServices are the gRPC reflection services ahp-server may mount (grpcreflect's
// ReflectV1ServiceName and ReflectV1AlphaServiceName, spelled out so that this package does not
// link grpcreflect into binaries that never serve it).
var reflectionServices = []string{"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}
