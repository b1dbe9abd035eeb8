// Package metrics holds ahp-server's and the bridge's Prometheus metrics on their own registry
// (never the global default one, so nothing else in the process adds series by accident) and
// serves them for scraping.
//
// Callers record through typed methods — ObserveDecision, ObserveEvent, BridgeFailOpen, AuthFailure
// and the rest — and never build label values by hand, so every label has a bounded set of values:
// verdicts, effect kinds, event types, dialects and reasons are enums, and rule ids come from the
// policy's rule list, capped at Options.MaxRuleLabels distinct values. The hot-path methods
// allocate nothing once a label value has been seen.
//
// Every method is safe for concurrent use and does nothing on a nil *Metrics, so a component can
// hold a nil pointer when metrics are off.
//
// docs/observability.md lists every metric.
package metrics
