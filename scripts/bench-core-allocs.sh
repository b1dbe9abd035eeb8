#!/usr/bin/env bash
# Before/after allocation benchmarks of the decision core (issue 18, docs/performance.md "Core:"
# items): builds test binaries of internal/core, internal/policy and internal/session at BEFORE
# (default e77dfbf, the commit that added BenchmarkCoreInterceptDeadline, before any Core item) and
# at AFTER (default HEAD) from `git archive` trees, then runs them alternately, ROUNDS times each.
# Bytes and allocations are steady; ns/op only means something on a quiet machine.
#
#   scripts/bench-core-allocs.sh                  # e77dfbf against HEAD, 3 rounds
#   BEFORE=b41f459 AFTER=HEAD ROUNDS=5 scripts/bench-core-allocs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
before=${BEFORE:-e77dfbf}
after=${AFTER:-HEAD}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for v in before after; do
  rev=$before
  [ "$v" = after ] && rev=$after
  mkdir -p "$work/$v"
  git archive "$rev" | tar -x -C "$work/$v"
  # The session heap benchmark reports scanned bytes only from 8704af0 on: measure both trees with
  # the newer benchmark file (it uses only the package's exported API).
  if [ -f internal/session/heap_test.go ]; then cp internal/session/heap_test.go "$work/$v/internal/session/heap_test.go"; fi
  for p in core policy session; do
    (cd "$work/$v" && go test -c -o "$work/$p.$v" "./internal/$p")
  done
done

for i in $(seq "$rounds"); do
  for v in before after; do
    echo "== round $i: $v"
    (cd internal/core && "$work/core.$v" -test.run '^$' -test.bench 'BenchmarkCoreIntercept' -test.benchmem -test.count 1 | grep '^Benchmark')
    (cd internal/policy && "$work/policy.$v" -test.run '^$' -test.bench 'Evaluate50Rules$|Evaluate50RulesAllConditionsRun|EvaluateDefault' -test.benchmem -test.count 1 | grep '^Benchmark')
    (cd internal/session && "$work/session.$v" -test.run '^$' -test.bench FullSessionsLiveHeap -test.benchmem -test.benchtime 2x | grep '^Benchmark')
  done
done
