#!/usr/bin/env bash
# Before/after benchmarks of cluster mode's session store (issue 15, docs/performance.md "Session
# memory: a compact stored form and shared views"): builds test binaries of internal/cluster at
# BEFORE (default 084cf51, the last commit storing session records as JSON) and at AFTER (default
# HEAD) from `git archive` trees, then runs BenchmarkDecision and BenchmarkDecisionConcurrent with
# the in-memory and the NATS stores, alternately, ROUNDS times each (a loopback nats-server through
# scripts/nats-server's build). Bytes and allocations are steady; times only mean something on a
# quiet machine.
#
#   scripts/bench-session-store.sh                   # 084cf51 against HEAD, 2 rounds of 20000 decisions
#   BEFORE=084cf51 AFTER=HEAD ROUNDS=3 N=20000 scripts/bench-session-store.sh
set -euo pipefail
cd "$(dirname "$0")/.."
before=${BEFORE:-084cf51}
after=${AFTER:-HEAD}
rounds=${ROUNDS:-2}
n=${N:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
NATS_SERVER=${NATS_SERVER:-$(go tool -modfile=tools/natsserver.mod -n nats-server)}
export NATS_SERVER

for v in before after; do
  rev=$before
  [ "$v" = after ] && rev=$after
  mkdir -p "$work/$v"
  git archive "$rev" | tar -x -C "$work/$v"
  (cd "$work/$v" && go test -c -o "$work/cluster.$v" ./internal/cluster/)
done
echo "before: $(git rev-parse --short "$before")  after: $(git rev-parse --short "$after")  machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for v in before after; do
    echo "== $v, round $r"
    (cd "$work/$v/internal/cluster" && "$work/cluster.$v" -test.run '^$' \
      -test.bench 'BenchmarkDecision(Concurrent)?/(memory|nats)$' -test.benchtime "${n}x" -test.benchmem) |
      grep '^Benchmark'
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
