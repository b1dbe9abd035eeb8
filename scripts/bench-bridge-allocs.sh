#!/usr/bin/env bash
# The bridge's allocation work of issue 18 ("Bridge: …" items in docs/performance.md), before and
# after, as one command: builds ahp-jsonrpc-bridge and the bridge/codec/transport test binaries at
# BEFORE (default 7650e2d, the commit before the work) and at HEAD, ahp-server and ahp-bench at
# HEAD, then runs, alternating the two builds ROUNDS times:
#   - the micro-benchmarks (B/op and allocs/op are what to read; ns/op only on a quiet machine);
#   - ahp-bench compare over bridge-http and bridge-stdio, closed loop, forwarding to one
#     ahp-server process, which reports each process's heap bytes and objects per decision.
#
#   scripts/bench-bridge-allocs.sh
#   BEFORE=<rev> ROUNDS=3 DURATION=10s CONCURRENCY=16 scripts/bench-bridge-allocs.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
before="${BEFORE:-7650e2d}"
rounds="${ROUNDS:-2}"
duration="${DURATION:-5s}"
concurrency="${CONCURRENCY:-16}"

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
build() { # build DIR SUFFIX
	go -C "$1" build -o "$bin/bridge.$2" ./cmd/ahp-jsonrpc-bridge
	go -C "$1" test -c -o "$bin/bridgepkg.$2" ./internal/bridge
	go -C "$1" test -c -o "$bin/hooks.$2" ./internal/codec/hooks
	go -C "$1" test -c -o "$bin/transport.$2" ./internal/transport
	go -C "$1" test -c -o "$bin/httprpc.$2" ./internal/transport/httprpc
}
echo "building $before and HEAD ($(git -C "$root" rev-parse --short HEAD))" >&2
mkdir -p "$bin/src"
git -C "$root" archive "$before" | tar -x -C "$bin/src"
build "$bin/src" before
build "$root" after
go -C "$root" build -o "$bin/" ./cmd/ahp-bench ./cmd/ahp-server

for ((r = 1; r <= rounds; r++)); do
	for v in before after; do
		echo "== round $r, $v"
		(cd "$root/internal/bridge" && "$bin/bridgepkg.$v" -test.run '^$' -test.benchmem -test.benchtime 5000x \
			-test.bench 'HandleHooksInterceptLocalWork|HandleDraftInterceptLocalWork|HandleHooksIntercept$')
		(cd "$root/internal/codec/hooks" && "$bin/hooks.$v" -test.run '^$' -test.benchmem -test.benchtime 3000x \
			-test.bench 'DecodeHooksMessage|DecodeDraftMessage|EncodeDecisionDeny')
		# BenchmarkReadBody and BenchmarkServeHTTP are new with the work: "after" only.
		if [[ "$v" == after ]]; then
			(cd "$root/internal/transport" && "$bin/transport.$v" -test.run '^$' -test.benchmem -test.benchtime 20000x -test.bench ReadBody)
			(cd "$root/internal/transport/httprpc" && "$bin/httprpc.$v" -test.run '^$' -test.benchmem -test.benchtime 20000x -test.bench ServeHTTP)
		fi
		"$bin/ahp-bench" compare --targets bridge-http,bridge-stdio --concurrency "$concurrency" \
			--duration "$duration" --rounds 2 --quiet \
			--server-bin "$bin/ahp-server" --bridge-bin "$bin/bridge.$v"
	done
done
