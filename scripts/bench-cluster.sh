#!/usr/bin/env bash
# Cluster mode's cost (issue 15), as one command anyone can rerun: decisions/s and latency with the
# in-memory stores and with the NATS stores, one ahp-server process and three, in one run, on
# loopback. Builds ahp-bench and ahp-server from this checkout and nats-server through
# tools/natsserver.mod (scripts/nats-server), starts one JetStream node in a temporary directory,
# and prints each ahp-bench line and the NATS / in-memory ratios.
#
#   scripts/bench-cluster.sh
#   DURATION=10s CONCURRENCY=4 scripts/bench-cluster.sh
#
# One process: `ahp-bench -server-process` against `ahp-bench -nats URL` (the same server
# started with -nats). Three processes: three ahp-servers (without NATS: three independent
# in-memory replicas; with it: three replicas sharing state), each driven by its own ahp-bench
# -target at the same time; decisions/s is their sum, the latencies are each run's. Settings
# (environment): DURATION (per run, 5s), CONCURRENCY (workers per ahp-bench, 4), PORT (first
# ahp-server port of the three-process runs, 18480), NATS_PORT (14380), ROUNDS (1: repeat the
# four runs, alternating, and print the median round's ratios with their range: this machine's
# speed drifts, and a ratio of runs made seconds apart is what to compare), RATE (1000: the
# arrival rate of the open-loop latency runs; 0 skips them), NATS_MONITOR_PORT (nats-server's
# HTTP monitoring, 14381), WATCHERS (Watch streams the first replica's ahp-bench
# holds in the three-process runs, --watchers; 0). After each NATS run it prints nats-server's CPU
# and the messages it took in and sent out (/varz in_msgs, out_msgs) per decision counted (the
# warm-up's decisions add to the messages), and after each three-process NATS run the Watch
# fan-out's messages from the replicas' metrics.
#
# The closed-loop runs (each worker sends its next request when the answer comes) measure
# throughput; they keep the two CPUs busy, so their latencies are mostly queueing. The
# open-loop runs (one process, RATE requests/s, as ahp-bench -rate) measure what the shared
# stores add to a decision's latency on a machine that is not saturated.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
duration="${DURATION:-5s}"
concurrency="${CONCURRENCY:-4}"
port="${PORT:-18480}"
nats_port="${NATS_PORT:-14380}"
rounds="${ROUNDS:-1}"
rate="${RATE:-1000}"
nats_url="nats://127.0.0.1:$nats_port"
nats_monitor="${NATS_MONITOR_PORT:-14381}"
watchers="${WATCHERS:-0}"

tmp="$(mktemp -d)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
echo "building ahp-bench and ahp-server at $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')" >&2
go -C "$root" build -o "$tmp/" ./cmd/ahp-bench ./cmd/ahp-server
"$root/scripts/nats-server" -js -sd "$tmp/nats" -a 127.0.0.1 -p "$nats_port" -m "$nats_monitor" >"$tmp/nats.log" 2>&1 &
nats_pid=$!
pids+=("$nats_pid")
# nats_cpu prints the CPU time nats-server used so far, in clock ticks.
nats_cpu() { awk '{print $14 + $15}' "/proc/$nats_pid/stat" 2>/dev/null || echo 0; }
# nats_msgs prints nats-server's in_msgs and out_msgs so far (/varz).
nats_msgs() {
	curl -fsS "http://127.0.0.1:$nats_monitor/varz" 2>/dev/null |
		awk -F'[:,]' '$1 ~ /"in_msgs"/ {i = $2} $1 ~ /"out_msgs"/ {o = $2} END {printf "%d %d", i, o}'
}
# note prints nats-server's CPU and messages per decision since the tick count $1 and the message
# counts $3 (in_msgs out_msgs), for the $2 decisions made.
note() {
	read -r in1 out1 <<<"$(nats_msgs)"
	read -r in0 out0 <<<"$3"
	awk -v t="$(( $(nats_cpu) - $1 ))" -v hz="$(getconf CLK_TCK)" -v n="$2" -v i="$((in1 - in0))" -v o="$((out1 - out0))" \
		'BEGIN { if (n > 0 && t > 0) printf "  (nats-server CPU: %.0f µs per decision; messages per decision: %.2f in, %.2f out)\n", 1e6 * t / hz / n, i / n, o / n }' >&2
}
# busy prints the CPU time every process of the machine used so far, in clock ticks (/proc/stat:
# user, nice, system, irq, softirq, steal).
busy() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
# cpu_note prints the machine's CPU per decision since the tick count $1, for the $2 decisions:
# ahp-server, ahp-bench and nats-server together, what docs/performance.md sets beside
# BenchmarkNATSFloor.
cpu_note() {
	awk -v t="$(( $(busy) - $1 ))" -v hz="$(getconf CLK_TCK)" -v n="$2" \
		'BEGIN { if (n > 0) printf "  (machine CPU, all processes: %.0f µs per decision)\n", 1e6 * t / hz / n }' >&2
}
wait_port() {
	for _ in $(seq 100); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}
wait_port "$nats_port"

bench=("$tmp/ahp-bench" -mode intercept -concurrency "$concurrency" -duration "$duration")
# line prints the result row of an ahp-bench output: count errors throughput p50 p90 p99 ...
# (a run with Watch streams labels it "intercept --watchers N").
line() { awk '{sub(/ --watchers [0-9]+/, "")} $1 == "intercept" && $2 ~ /^[0-9]+$/ {print; exit}' "$1"; }

one() { # $1 label, rest: ahp-bench flags
	local label="$1"
	shift
	echo "+ ahp-bench ${*}" >&2
	local t0 m0 b0
	t0=$(nats_cpu) m0=$(nats_msgs) b0=$(busy)
	"${bench[@]}" "$@" >"$tmp/$label.out" 2>&1
	printf '%-16s %s\n' "$label" "$(line "$tmp/$label.out")"
	cpu_note "$b0" "$(line "$tmp/$label.out" | awk '{print $2}')"
	note "$t0" "$(line "$tmp/$label.out" | awk '{print $2}')" "$m0"
}

# fanout_counts prints the Watch fan-out's items sent, messages sent and messages received, summed
# over the ahp-servers whose metrics ports are $@ (a server without the messages counter sent
# each item as its own message).
fanout_counts() {
	local p
	for p in "$@"; do curl -fsS "http://127.0.0.1:$p/metrics" 2>/dev/null || true; done | awk '
		/^ahp_cluster_fanout_items_total\{direction="sent"\}/ {is += $2}
		/^ahp_cluster_fanout_items_total\{direction="received"\}/ {ir += $2}
		/^ahp_cluster_fanout_messages_total\{direction="sent"\}/ {ms += $2; m = 1}
		/^ahp_cluster_fanout_messages_total\{direction="received"\}/ {mr += $2}
		END {if (!m) {ms = is; mr = ir}; printf "%d %d %d", is, ms, mr}'
}

three() { # $1 label, $2 extra ahp-server flags
	local label="$1" extra="$2" servers=() i
	for i in 0 1 2; do
		local cfg="$tmp/$label-$i.yaml"
		printf 'cluster:\n  name: r%s\n' "$i" >"$cfg"
		# shellcheck disable=SC2086 # $extra is a list of flags
		"$tmp/ahp-server" --addr "127.0.0.1:$((port + i))" --metrics-addr "127.0.0.1:$((port + 10 + i))" --log-level warn $extra \
			$([[ -n "$extra" ]] && echo --config "$cfg") >"$tmp/$label-server-$i.log" 2>&1 &
		servers+=($!)
		pids+=($!)
	done
	for i in 0 1 2; do wait_port $((port + i)); done
	echo "+ 3 × ahp-bench -target http://127.0.0.1:$port..$((port + 2)) (servers: ${extra:-in memory})" >&2
	local runs=() t0 m0 w f0 b0 mports=($((port + 10)) $((port + 11)) $((port + 12)))
	t0=$(nats_cpu) m0=$(nats_msgs) f0=$(fanout_counts "${mports[@]}") b0=$(busy)
	for i in 0 1 2; do
		w=0
		[[ $i == 0 ]] && w="$watchers"
		"${bench[@]}" -watchers "$w" -target "http://127.0.0.1:$((port + i))" >"$tmp/$label-$i.out" 2>&1 &
		runs+=($!)
	done
	wait "${runs[@]}"
	for i in 0 1 2; do printf '%-16s %s\n' "$label/r$i" "$(line "$tmp/$label-$i.out")"; done
	local decided
	decided=$(for i in 0 1 2; do line "$tmp/$label-$i.out"; done | awk '{s += $2} END {print s}')
	cpu_note "$b0" "$decided"
	note "$t0" "$decided" "$m0"
	if [[ -n "$extra" ]]; then
		read -r is0 ms0 mr0 <<<"$f0"
		read -r is1 ms1 mr1 <<<"$(fanout_counts "${mports[@]}")"
		# Every decision (the warm-up's too) is one item sent: count per item.
		awk -v is="$((is1 - is0))" -v ms="$((ms1 - ms0))" -v mr="$((mr1 - mr0))" 'BEGIN { if (is > 0 && ms > 0)
			printf "  (Watch fan-out, all replicas: %d decisions published in %d messages (%.1f a message); messages received per decision: %.3f)\n", is, ms, is / ms, mr / is }' >&2
	fi
	kill "${servers[@]}" 2>/dev/null || true
	wait "${servers[@]}" 2>/dev/null || true
}

sum() { # total decisions/s of the lines of label
	awk -v l="$1" '$1 ~ "^"l"(/|$)" {s += $5} END {printf "%.0f", s}' "$tmp/results"
}
p50() { # largest p50 µs of the lines of label
	awk -v l="$1" '$1 ~ "^"l"(/|$)" && $6 > m {m = $6} END {print m + 0}' "$tmp/results"
}

header="label            mode       count  errors  throughput/s  p50 µs  p90 µs  p99 µs  p99.9 µs  max µs"
: >"$tmp/ratios"
for round in $(seq "$rounds"); do
	[[ "$rounds" -gt 1 ]] && echo "round $round of $rounds" >&2
	{
		echo "$header"
		one memory-1 -server-process -server-bin "$tmp/ahp-server"
		one nats-1 -server-bin "$tmp/ahp-server" -nats "$nats_url"
		three memory-3 ""
		three nats-3 "--nats $nats_url"
		if [[ "$rate" != 0 ]]; then
			one memory-rate -server-process -server-bin "$tmp/ahp-server" -rate "$rate" -concurrency 16
			one nats-rate -server-bin "$tmp/ahp-server" -nats "$nats_url" -rate "$rate" -concurrency 16
		fi
	} | tee "$tmp/results"
	for n in 1 3; do
		m=$(sum "memory-$n") c=$(sum "nats-$n")
		echo "$n process(es): in memory $m decisions/s, NATS $c ($(awk -v a="$c" -v b="$m" 'BEGIN {printf "%.0f", 100 * a / b}') %); p50 (slowest process) in memory $(p50 "memory-$n") µs, NATS $(p50 "nats-$n") µs"
		echo "$n $(awk -v a="$c" -v b="$m" 'BEGIN {printf "%.1f", 100 * a / b}') $(( $(p50 "nats-$n") - $(p50 "memory-$n") ))" >>"$tmp/ratios"
	done
	if [[ "$rate" != 0 ]]; then
		pm=$(p50 memory-rate) pn=$(p50 nats-rate)
		qm=$(awk '$1 == "memory-rate" {print $8}' "$tmp/results") qn=$(awk '$1 == "nats-rate" {print $8}' "$tmp/results")
		echo "open loop at $rate/s: p50 in memory $pm µs, NATS $pn µs ($(( pn - pm )) µs more); p99 in memory $qm µs, NATS $qn µs"
		echo "r 0 $(( pn - pm ))" >>"$tmp/ratios"
	fi
done
if [[ "$rounds" -gt 1 ]]; then
	if [[ "$rate" != 0 ]]; then
		d=($(awk '$1 == "r" {print $3}' "$tmp/ratios" | sort -n))
		k=${#d[@]} m=$(( (k - 1) / 2 ))
		printf 'open loop at %s/s, %d rounds: p50 difference median %+d µs (%+d…%+d µs)\n' "$rate" "$k" "${d[$m]}" "${d[0]}" "${d[$((k - 1))]}"
	fi
	for n in 1 3; do
		# The median round's ratio (and p50 difference), with the range over the rounds.
		r=($(awk -v n="$n" '$1 == n {print $2}' "$tmp/ratios" | sort -n))
		d=($(awk -v n="$n" '$1 == n {print $3}' "$tmp/ratios" | sort -n))
		k=${#r[@]} m=$(( (${#r[@]} - 1) / 2 ))
		printf '%d process(es), %d rounds: NATS / in memory median %.0f %% (%.0f–%.0f %%); p50 difference median %+d µs (%+d…%+d µs)\n' \
			"$n" "$k" "${r[$m]}" "${r[0]}" "${r[$((k - 1))]}" "${d[$m]}" "${d[0]}" "${d[$((k - 1))]}"
	done
fi
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
