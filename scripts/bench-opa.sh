#!/usr/bin/env bash
# The OPA comparison of issue 18, as one command anyone can rerun: builds ahp-bench, ahp-server and
# ahp-jsonrpc-bridge from this checkout and OPA 1.22.3 through tools/opa.mod (or takes $OPA), then
# runs `ahp-bench compare` twice — open loop at a fixed rate, then closed loop — over the same
# targets, printing each command before its output. Everything runs on loopback.
#
#   scripts/bench-opa.sh                       defaults below
#   RATE=8000 DURATION=15s OUT=docs/perf scripts/bench-opa.sh
#
# Settings (environment): RATE (open-loop requests/s per target, 2000), WORKERS (open-loop
# workers, 64), CONCURRENCY (closed-loop connections, 16), DURATION (per target and loop, 10s),
# ROUNDS (slices per target, the targets rotating, 5), RULES (50), TARGETS
# (opa,intercept,bridge-http,bridge-stdio), OUT (a directory for opa-open-loop.svg and
# opa-closed-loop.svg; none if empty), EXTRA (more ahp-bench compare flags, e.g.
# "--server-env GOGC=off" or "--bridge-embedded").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rate="${RATE:-2000}"
workers="${WORKERS:-64}"
concurrency="${CONCURRENCY:-16}"
duration="${DURATION:-10s}"
rounds="${ROUNDS:-5}"
rules="${RULES:-50}"
targets="${TARGETS:-opa,intercept,bridge-http,bridge-stdio}"
out="${OUT:-}"
read -r -a extra <<<"${EXTRA:-}"

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
echo "building ahp-bench, ahp-server and ahp-jsonrpc-bridge at $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" >&2
go -C "$root" build -o "$bin/" ./cmd/ahp-bench ./cmd/ahp-server ./cmd/ahp-jsonrpc-bridge
opa="${OPA:-}"
if [[ -z "$opa" ]]; then
	echo "building OPA through tools/opa.mod (cached after the first time)" >&2
	opa="$(go -C "$root" tool -modfile="$root/tools/opa.mod" -n opa)"
fi
[[ -n "$out" ]] && mkdir -p "$out"

common=(compare --targets "$targets" --rules "$rules" --rounds "$rounds" --duration "$duration"
	--server-bin "$bin/ahp-server" --bridge-bin "$bin/ahp-jsonrpc-bridge" --opa-bin "$opa" "${extra[@]}")
status=0
for loop in open closed; do
	args=("${common[@]}")
	if [[ "$loop" == open ]]; then
		args+=(--rate "$rate" --concurrency "$workers")
	else
		args+=(--concurrency "$concurrency")
	fi
	[[ -n "$out" ]] && args+=(--svg "$out/opa-$loop-loop.svg")
	echo
	echo "\$ ahp-bench ${args[*]}" | sed -e "s#$bin/##g" -e "s#$opa#opa#g"
	"$bin/ahp-bench" "${args[@]}" --quiet || status=1
done
exit "$status"
