#!/usr/bin/env bash
# Tests the polyglot clients against a real ahp-server:
#   1. the committed generated code (clients/typescript/gen, clients/python/gen) is current;
#   2. builds ahp-server and starts it on a free loopback port (127.0.0.1:0) with the embedded
#      default policy; it is stopped on exit, whatever happens;
#   3. TypeScript (clients/typescript): tsc type check, then node:test over Connect (HTTP/2 and
#      HTTP/1.1, binary and JSON), gRPC and gRPC-Web (HTTP/2 and HTTP/1.1);
#   4. Python (clients/python): unittest over gRPC (grpcio, real h2c) with /usr/bin/python3.
#
# Needs: go; Node >= 20 with `npm ci` done in clients/typescript; /usr/bin/python3 with Debian's
# python3-grpcio and python3-protobuf, and /usr/bin/protoc + /usr/bin/grpc_python_plugin
# (scripts/install-client-deps.sh installs all of it). A missing toolchain fails the run, unless
# AHP_CLIENTS_OPTIONAL=1, which skips that client's suite with a message instead.
# AHP_CLIENTS_PYTHON picks another interpreter that has grpcio and protobuf (default /usr/bin/python3;
# the pyenv python3 on PATH here cannot see Debian's packages).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
buf="$root/scripts/buf"
py="${AHP_CLIENTS_PYTHON:-/usr/bin/python3}"
optional="${AHP_CLIENTS_OPTIONAL:-0}"
suite_timeout=300 # seconds; each test also has its own deadline

step() { printf '\n==> %s\n' "$*"; }

# unavailable SUITE REASON: skip (AHP_CLIENTS_OPTIONAL=1) or fail.
unavailable() {
	if [[ "$optional" == 1 ]]; then
		echo "SKIPPED: $1 client suite: $2 (AHP_CLIENTS_OPTIONAL=1; install with scripts/install-client-deps.sh)"
		return 0
	fi
	echo "FAILED: $1 client suite cannot run: $2. Run scripts/install-client-deps.sh, or set AHP_CLIENTS_OPTIONAL=1 to skip it." >&2
	exit 1
}

step "client toolchains"
run_ts=1
if ! command -v node >/dev/null 2>&1; then
	unavailable typescript "node not found"
	run_ts=0
elif ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
	unavailable typescript "Node $(node --version) is too old (need >= 20)"
	run_ts=0
elif [[ ! -x clients/typescript/node_modules/.bin/tsx || ! -x clients/typescript/node_modules/.bin/protoc-gen-es ]]; then
	unavailable typescript "clients/typescript/node_modules is missing (npm ci)"
	run_ts=0
else
	echo "typescript: node $(node --version)"
fi
run_py=1
if [[ ! -x "$py" ]]; then
	unavailable python "$py not found"
	run_py=0
elif ! "$py" -c 'import grpc, google.protobuf' >/dev/null 2>&1; then
	unavailable python "$py cannot import grpc and google.protobuf (Debian python3-grpcio, python3-protobuf)"
	run_py=0
elif [[ ! -x /usr/bin/protoc || ! -x /usr/bin/grpc_python_plugin ]]; then
	unavailable python "/usr/bin/protoc or /usr/bin/grpc_python_plugin not found (Debian protobuf-compiler, protobuf-compiler-grpc)"
	run_py=0
else
	echo "python: $("$py" -c 'import sys, grpc, google.protobuf as p; print("%d.%d.%d" % sys.version_info[:3], "grpcio", grpc.__version__, "protobuf", p.__version__)')"
fi
if ((run_ts == 0 && run_py == 0)); then
	echo "no client suite ran"
	exit 0
fi

work="$(mktemp -d)"
# shellcheck source=lib/ahp-server.sh
source scripts/lib/ahp-server.sh

# check_gen DIR: regenerate DIR/gen into a scratch directory and compare with the committed one.
check_gen() {
	local dir="$1"
	(cd "$dir" && "$buf" generate -o "$work/gen-check/$dir")
	if ! diff -r "$work/gen-check/$dir/gen" "$dir/gen" >/dev/null; then
		diff -ru "$dir/gen" "$work/gen-check/$dir/gen" | head -50 || true
		echo "$dir/gen is stale: run ../../scripts/buf generate in $dir and commit the result" >&2
		exit 1
	fi
	echo "$dir/gen is current"
}

step "generated client code is current"
if ! "$buf" --version >/dev/null 2>&1; then
	# scripts/buf runs the npm buf (a node launcher) when root node_modules exists, else builds buf
	# from the Go module proxy; BUF=/path/to/buf overrides both.
	echo "FAILED: scripts/buf does not run (set BUF=/path/to/buf, or run npm ci at the repo root)" >&2
	exit 1
fi
if ((run_ts)); then check_gen clients/typescript; fi
if ((run_py)); then check_gen clients/python; fi

step "build and start ahp-server on a free loopback port"
start_ahp_server
echo "ahp-server listening on $url (pid $server_pid)"
export AHP_SERVER_URL="$url"

failed=()
ts_result="skipped"
py_result="skipped"

if ((run_ts)); then
	step "TypeScript client (clients/typescript): type check"
	(cd clients/typescript && node_modules/.bin/tsc -p .)
	step "TypeScript client: node:test against $url"
	start=$SECONDS
	if (cd clients/typescript && timeout "$suite_timeout" node_modules/.bin/tsx --test --test-reporter=spec test/*.test.ts); then
		ts_result="passed ($((SECONDS - start)) s)"
	else
		ts_result="FAILED"
		failed+=(typescript)
	fi
fi

if ((run_py)); then
	step "Python client (clients/python): unittest against $url"
	start=$SECONDS
	if PYTHONDONTWRITEBYTECODE=1 timeout "$suite_timeout" "$py" -m unittest discover -s clients/python/tests -v; then
		py_result="passed ($((SECONDS - start)) s)"
	else
		py_result="FAILED"
		failed+=(python)
	fi
fi

if ! kill -0 "$server_pid" 2>/dev/null; then
	echo "ahp-server exited during the client suites; its log:" >&2
	cat "$work/server.log" >&2
	failed+=(server)
fi
if ((${#failed[@]})); then
	echo "--- ahp-server log (warnings and errors) ---" >&2
	tail -50 "$work/server.log" >&2 || true
fi

step "client suites: typescript ${ts_result}; python ${py_result}"
if ((${#failed[@]})); then
	echo "failed: ${failed[*]}" >&2
	exit 1
fi
