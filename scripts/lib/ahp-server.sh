# Sourced by the scripts that test against a running ahp-server: builds it, starts it on a free
# loopback port and stops it on exit. Needs $work (a scratch directory, removed on exit).
#
#   start_ahp_server   sets $url and $server_pid, or exits 1 with the server's log

server_pid=""

stop_ahp_server() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap stop_ahp_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_ahp_server() {
	go build -o "$work/ahp-server" ./cmd/ahp-server
	# Explicit flags win over any AHP_* variables in the caller's environment: embedded default
	# policy, no TLS, port chosen by the kernel. The output file exists before the background job
	# opens it, so the loop below can read it at once.
	: >"$work/server.out"
	"$work/ahp-server" -addr 127.0.0.1:0 -policy= -tls-cert= -tls-key= -log-level warn \
		>"$work/server.out" 2>"$work/server.log" &
	server_pid=$!
	url=""
	for _ in $(seq 100); do
		url="$(sed -n 's/^ahp-server listening on //p' "$work/server.out" || true)"
		[[ -n "$url" ]] && break
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [[ -z "$url" ]]; then
		echo "ahp-server did not start; its log:" >&2
		cat "$work/server.log" >&2
		exit 1
	fi
}
