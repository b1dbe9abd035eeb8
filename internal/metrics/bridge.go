package metrics

import (
	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"github.com/prometheus/client_golang/prometheus"
)

// BridgeReason says why the bridge got no usable decision from ahp-server and answered on its own
// (fail open or fail closed). The values and their names match the bridge's failure kinds
// (bridge.Failure), so a metric label and the bridge's log line and synthetic marker agree.
type BridgeReason uint8

const (
	// BridgeOther is a reason not listed below.
	BridgeOther BridgeReason = iota
	// BridgeDeadlineExceeded: no answer within the bridge's timeout.
	BridgeDeadlineExceeded
	// BridgeUnavailable: the server could not be reached or dropped the call.
	BridgeUnavailable
	// BridgeBadResponse: something answered, but not with a usable ahp.v1 response.
	BridgeBadResponse
	// BridgeBackendError: the server reported a failure of its own.
	BridgeBackendError
	// BridgeUnauthenticated: the server refused the bridge's own credential.
	BridgeUnauthenticated
	// BridgeCanceled: the caller gave up before the server answered.
	BridgeCanceled

	numBridgeReasons
)

var bridgeReasonLabels = [numBridgeReasons]string{
	"other", "deadline_exceeded", "unavailable", "bad_response", "backend_error", "unauthenticated", "canceled",
}

// String returns the label value.
func (r BridgeReason) String() string {
	if r < numBridgeReasons {
		return bridgeReasonLabels[r]
	}
	return bridgeReasonLabels[BridgeOther]
}

// ParseBridgeReason maps a failure name ("deadline_exceeded", as bridge.Failure.String returns)
// to its BridgeReason; unknown names are BridgeOther, so label values stay a fixed set.
func ParseBridgeReason(name string) BridgeReason {
	for i, l := range bridgeReasonLabels {
		if l == name {
			return BridgeReason(i)
		}
	}
	return BridgeOther
}

func (m *Metrics) initBridge(f factory) {
	open := f.counterVec("ahp_bridge_fail_open_total",
		"Requests the bridge let through without a decision from ahp-server, by caller dialect and reason.", "dialect", "reason")
	closed := f.counterVec("ahp_bridge_fail_closed_total",
		"Requests the bridge denied without a decision from ahp-server, by caller dialect and reason.", "dialect", "reason")
	observe := f.counterVec("ahp_bridge_observe_failures_total",
		"Observed events the bridge could not deliver to ahp-server, by caller dialect and reason.", "dialect", "reason")
	dialects := enumLabels(ahpv1.Dialect(0).Descriptor(), "DIALECT_")
	for _, c := range []struct {
		vec *prometheus.CounterVec
		out *[][]prometheus.Counter
	}{{open, &m.bridgeOpen}, {closed, &m.bridgeClosed}, {observe, &m.bridgeObserve}} {
		*c.out = make([][]prometheus.Counter, len(dialects))
		for d, name := range dialects {
			if name == "" {
				continue
			}
			(*c.out)[d] = make([]prometheus.Counter, numBridgeReasons)
			for r := range numBridgeReasons {
				(*c.out)[d][r] = c.vec.WithLabelValues(name, r.String())
			}
		}
	}
}

// BridgeFailOpen counts a request the bridge let through because it had no decision.
func (m *Metrics) BridgeFailOpen(d ahpv1.Dialect, r BridgeReason) {
	if m != nil {
		bridgeCounter(m.bridgeOpen, d, r).Inc()
	}
}

// BridgeFailClosed counts a request the bridge denied because it had no decision.
func (m *Metrics) BridgeFailClosed(d ahpv1.Dialect, r BridgeReason) {
	if m != nil {
		bridgeCounter(m.bridgeClosed, d, r).Inc()
	}
}

// BridgeObserveFailed counts an observed event the bridge could not deliver.
func (m *Metrics) BridgeObserveFailed(d ahpv1.Dialect, r BridgeReason) {
	if m != nil {
		bridgeCounter(m.bridgeObserve, d, r).Inc()
	}
}

func bridgeCounter(c [][]prometheus.Counter, d ahpv1.Dialect, r BridgeReason) prometheus.Counter {
	if int(d) < 0 || int(d) >= len(c) || c[d] == nil {
		d = ahpv1.Dialect_DIALECT_UNSPECIFIED
	}
	if r >= numBridgeReasons {
		r = BridgeOther
	}
	return c[d][r]
}
