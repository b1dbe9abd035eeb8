// Package bench is the load engine of ahp-bench: it puts a fixed or open-ended load on AHP —
// ahp-server's Connect services or ahp-jsonrpc-bridge processes — checks every answer, and
// reports throughput and latency quantiles, optionally next to a no-op baseline on the same
// transport, or next to the same mode on the same server with another number of Watch subscribers.
//
// The parts, one per file:
//
//   - histogram.go: a log-linear latency histogram with microsecond resolution
//   - schedule.go, load.go, sleep_*.go: workers, closed loop or a fixed arrival rate measured from
//     each request's due time (no coordinated omission), per-request timeouts, error counting
//   - workload.go, policy.go: the generated events, the checks on their verdicts, and the built-in
//     50-rule policy
//   - connect.go, correlate.go: Intercept, InterceptStream and ObserveStream drivers
//   - bridge.go: ahp-jsonrpc-bridge on stdio (persistent and per_event) and HTTP
//   - target.go: the in-process ahp-server, the no-op baseline server, the loopback-only rule
//   - command.go, serverproc.go: the bridge and server binaries (given, or built with the go
//     command), and ahp-server as a child process (--server-process)
//   - audit.go: the in-process server's audit log and its check after the run
//   - watch.go: Watch subscribers during a mode's phases (--watchers), each on its own connection,
//     connected before every phase and closed after it; the check that each received every
//     decision or event answered while it was subscribed, once, within its filter, and the count
//     of what it missed or why the server cut it off
//   - bench.go, result.go, machine.go: a whole run, its report, and the machine it ran on
//   - rules.go: one list of shell-command regex rules written as the ahp CEL policy and the
//     equivalent Rego (gen-policies)
//   - opa.go: the OPA binary (built through tools/opa.mod), `opa run --server` as a child process,
//     and the HTTP JSON target that POSTs the same event bodies to OPA's REST API and to
//     ahp-server's Connect JSON Intercept
//   - runtimestats.go: a serving process's cost per decision, from its /metrics runtime counters
//     (and /proc CPU time) read around every phase
//   - compare.go: ahp-server, the bridge and OPA side by side, the targets rotating per round
//   - svg.go: latency distributions as percentile curves in SVG (--svg)
//
// Everything it starts listens on 127.0.0.1 and is stopped before Run (or Compare) returns.
package bench
