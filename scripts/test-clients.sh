#!/usr/bin/env bash
# Tests the polyglot clients against a real ahp-server:
#   1. the committed generated code (clients/typescript/gen, clients/python/gen) is current;
#   2. builds ahp-server and starts it on a free loopback port (127.0.0.1:0) with the embedded
#      default policy, and a second one that requires credentials (fresh bearer tokens); both are
#      stopped on exit, whatever happens;
#   3. TypeScript (clients/typescript): tsc type check, then node:test over Connect (HTTP/2 and
#      HTTP/1.1, binary and JSON), gRPC and gRPC-Web (HTTP/2 and HTTP/1.1);
#   4. Python (clients/python): unittest over gRPC (grpcio, real h2c) with /usr/bin/python3, on the
#      source tree (PYTHONPATH=clients/python:clients/python/gen);
#   5. the packages as a user gets them: `npm pack` of @ahp-gateway/client installed into an empty
#      project, type-checked and smoke-tested; the ahp-client wheel installed into a fresh virtual
#      environment (on the system site packages) and the Python suite run from outside the tree;
#   6. examples/go-client vetted and built (its own module) and run, over Connect and gRPC, and with
#      tokens against the server that requires them.
# The packages and the wheel are built from copies in a scratch directory: nothing is written to
# the tree.
#
# Needs: go; Node >= 20 with `npm ci` done in clients/typescript, and npm (the packed tarball's
# dependencies come from the npm cache or registry); /usr/bin/python3 with Debian's python3-grpcio,
# python3-protobuf, python3-venv, python3-setuptools and python3-wheel, and /usr/bin/protoc +
# /usr/bin/grpc_python_plugin (scripts/install-client-deps.sh installs all of it). A missing
# toolchain fails the run, unless AHP_CLIENTS_OPTIONAL=1, which skips that client's suites with a
# message instead.
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
elif ! command -v npm >/dev/null 2>&1; then
	unavailable typescript "npm not found (needed to pack and install @ahp-gateway/client)"
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
elif ! "$py" -c 'import ensurepip, venv, setuptools, wheel' >/dev/null 2>&1; then
	unavailable python "$py cannot build and install the ahp-client wheel (Debian python3-venv, python3-setuptools, python3-wheel)"
	run_py=0
else
	echo "python: $("$py" -c 'import sys, grpc, google.protobuf as p; print("%d.%d.%d" % sys.version_info[:3], "grpcio", grpc.__version__, "protobuf", p.__version__)')"
fi

work="$(mktemp -d)"
# shellcheck source=lib/ahp-server.sh
source scripts/lib/ahp-server.sh

# start_auth_server: a second server, from the binary start_ahp_server built, that requires a
# credential: three fresh bearer tokens, with the agent scope, the watch scope, and both. The
# suites read its URL and tokens from AHP_TEST_AUTH_URL and AHP_TEST_{AGENT,WATCH,ALL}_TOKEN.
auth_pid=""
secret() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
start_auth_server() {
	cat >"$work/auth.yaml" <<-'YAML'
		auth:
		  tokens:
		    - {name: clients-agent, scopes: [agent], env: AHP_CLIENTS_AGENT_TOKEN}
		    - {name: clients-watch, scopes: [watch], env: AHP_CLIENTS_WATCH_TOKEN}
		    - {name: clients-all, scopes: [agent, watch], env: AHP_CLIENTS_ALL_TOKEN}
	YAML
	AHP_TEST_AGENT_TOKEN="$(secret)" AHP_TEST_WATCH_TOKEN="$(secret)" AHP_TEST_ALL_TOKEN="$(secret)"
	export AHP_TEST_AGENT_TOKEN AHP_TEST_WATCH_TOKEN AHP_TEST_ALL_TOKEN
	: >"$work/auth-server.out"
	AHP_CLIENTS_AGENT_TOKEN="$AHP_TEST_AGENT_TOKEN" AHP_CLIENTS_WATCH_TOKEN="$AHP_TEST_WATCH_TOKEN" \
		AHP_CLIENTS_ALL_TOKEN="$AHP_TEST_ALL_TOKEN" \
		"$work/ahp-server" -addr 127.0.0.1:0 -policy= -tls-cert= -tls-key= -log-level warn -config "$work/auth.yaml" \
		>"$work/auth-server.out" 2>"$work/auth-server.log" &
	auth_pid=$!
	AHP_TEST_AUTH_URL=""
	for _ in $(seq 100); do
		AHP_TEST_AUTH_URL="$(sed -n 's/^ahp-server listening on //p' "$work/auth-server.out" || true)"
		[[ -n "$AHP_TEST_AUTH_URL" ]] && break
		kill -0 "$auth_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [[ -z "$AHP_TEST_AUTH_URL" ]]; then
		echo "ahp-server (auth) did not start; its log:" >&2
		cat "$work/auth-server.log" >&2
		exit 1
	fi
	export AHP_TEST_AUTH_URL
}
stop_auth_server() {
	if [[ -n "$auth_pid" ]] && kill -0 "$auth_pid" 2>/dev/null; then
		kill -TERM "$auth_pid" 2>/dev/null || true
		wait "$auth_pid" 2>/dev/null || true
	fi
}
trap 'stop_auth_server; stop_ahp_server' EXIT

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

# package_versions: the npm package and the Python package carry one version, whose major is the
# schema's (proto/ahp/v1 → 1). npm spells a pre-release 1.0.0-alpha.1, Python (PEP 440) 1.0.0a1.
package_versions() {
	local npm_version py_version schema
	npm_version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' clients/typescript/package.json)"
	py_version="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' clients/python/ahp_client/__init__.py)"
	schema="$(cd proto/ahp && ls -d v[0-9]*)"
	local want_py
	want_py="$(sed -E 's/-alpha\./a/; s/-beta\./b/; s/-rc\./rc/' <<<"$npm_version")"
	if [[ -z "$npm_version" || "$py_version" != "$want_py" || "${npm_version%%.*}" != "${schema#v}" ]]; then
		echo "package versions disagree: @ahp-gateway/client $npm_version, ahp-client $py_version, schema ahp.$schema (want the same version, major ${schema#v})" >&2
		exit 1
	fi
	echo "@ahp-gateway/client $npm_version, ahp-client $py_version, schema ahp.$schema"
}

# smoke_npm_package: packs @ahp-gateway/client from a copy of clients/typescript (prepack builds
# dist/ there), installs the tarball into an empty project (its dependencies from the npm cache or
# registry), type-checks smoke/smoke.ts against the installed declarations and runs it.
smoke_npm_package() {
	local src="$work/ts-package" consumer="$work/ts-consumer" types_node
	mkdir -p "$src" "$consumer" "$work/ts-pack"
	(cd clients/typescript && cp -R src gen package.json package-lock.json tsconfig.json tsconfig.build.json README.md "$src/")
	ln -s "$root/clients/typescript/node_modules" "$src/node_modules"
	(cd "$src" && npm pack --silent --pack-destination "$work/ts-pack" >/dev/null)
	local tarball
	tarball="$(ls "$work"/ts-pack/*.tgz)"
	echo "packed $(basename "$tarball"): $(tar tzf "$tarball" | wc -l) files"
	types_node="$(node -p 'require("./clients/typescript/package.json").devDependencies["@types/node"]')"
	printf '{"name":"ahp-client-smoke","private":true,"type":"module"}\n' >"$consumer/package.json"
	cp clients/typescript/smoke/smoke.ts clients/typescript/smoke/tsconfig.json "$consumer/"
	(cd "$consumer" && npm install --silent --no-audit --no-fund --prefer-offline "$tarball" "@types/node@$types_node")
	(cd "$consumer" && "$root/clients/typescript/node_modules/.bin/tsc" -p . && node out/smoke.js)
	# The browser entry point bundles for a browser: nothing in it needs a Node built-in.
	printf 'export * from "@ahp-gateway/client/web";\n' >"$consumer/web.js"
	(cd "$consumer" && "$root/clients/typescript/node_modules/.bin/esbuild" web.js --bundle --platform=browser \
		--format=esm --minify --log-level=warning --outfile=out/web.bundle.js)
	echo "ok - @ahp-gateway/client/web bundles for browsers ($(wc -c <"$consumer/out/web.bundle.js") bytes minified)"
}

# smoke_python_package PY: builds the ahp-client wheel from a copy of clients/python in a fresh
# virtual environment that uses PY's site packages (Debian's grpcio and protobuf), offline
# (--no-index --no-build-isolation: setuptools and wheel come from Debian), installs it there with
# its dependencies, and runs the Python suite from a directory outside the tree.
smoke_python_package() {
	local venv="$work/py-venv" src="$work/py-package" tests="$work/py-tests"
	cp -R clients/python "$src"
	rm -rf "$src/tests" "$src/build" "$src/dist" "$src"/*.egg-info # a local build's leftovers would end up in the wheel
	cp -R clients/python/tests "$tests"
	"$1" -m venv --system-site-packages "$venv"
	"$venv/bin/python" -m pip wheel --quiet --no-index --no-build-isolation --no-deps -w "$work/py-dist" "$src"
	local wheel
	wheel="$(ls "$work"/py-dist/*.whl)"
	echo "built $(basename "$wheel")"
	"$venv/bin/python" -m pip install --quiet --no-index "$wheel"
	(
		cd "$work"
		"$venv/bin/python" - <<-'PY'
			import importlib.resources, ahp_client, ahp.v1.service_pb2 as service
			assert "site-packages" in ahp_client.__file__ and "site-packages" in service.__file__, (ahp_client.__file__, service.__file__)
			for package in ("ahp_client", "ahp.v1", "buf.validate"):
			    assert importlib.resources.files(package).joinpath("py.typed").is_file(), package + " is not marked typed"
			print("installed ahp-client", ahp_client.__version__, "in", ahp_client.__file__.rsplit("/ahp_client/", 1)[0])
		PY
		PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m unittest discover -s "$tests"
	)
}

# The smoke functions run under timeout, in a child bash.
export -f smoke_npm_package smoke_python_package
export root work

step "package versions follow the schema"
package_versions

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

step "start a second ahp-server that requires credentials"
start_auth_server
echo "ahp-server (auth) listening on $AHP_TEST_AUTH_URL (pid $auth_pid)"

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
	if PYTHONPATH="$root/clients/python:$root/clients/python/gen" PYTHONDONTWRITEBYTECODE=1 \
		timeout "$suite_timeout" "$py" -m unittest discover -s clients/python/tests -v; then
		py_result="passed ($((SECONDS - start)) s)"
	else
		py_result="FAILED"
		failed+=(python)
	fi
fi

ts_pkg_result="skipped"
if ((run_ts)); then
	step "@ahp-gateway/client: npm pack, install into an empty project, smoke test against $url"
	start=$SECONDS
	if timeout "$suite_timeout" bash -euo pipefail -c smoke_npm_package; then
		ts_pkg_result="passed ($((SECONDS - start)) s)"
	else
		ts_pkg_result="FAILED"
		failed+=(typescript-package)
	fi
fi

py_pkg_result="skipped"
if ((run_py)); then
	step "ahp-client: wheel, fresh virtual environment, the Python suite from outside the tree against $url"
	start=$SECONDS
	if timeout "$suite_timeout" bash -euo pipefail -c 'smoke_python_package "$0"' "$py"; then
		py_pkg_result="passed ($((SECONDS - start)) s)"
	else
		py_pkg_result="FAILED"
		failed+=(python-package)
	fi
fi

step "examples/go-client: vet and build (its own module), run against $url"
start=$SECONDS
go_result="FAILED"
if (cd examples/go-client && go vet . && go build -o "$work/go-client" .) &&
	timeout 60 "$work/go-client" -url "$url" &&
	timeout 60 "$work/go-client" -grpc -url "$url" >/dev/null &&
	AHP_TOKEN="$AHP_TEST_ALL_TOKEN" timeout 60 "$work/go-client" -url "$AHP_TEST_AUTH_URL" >/dev/null &&
	! AHP_TOKEN="$AHP_TEST_AGENT_TOKEN" timeout 60 "$work/go-client" -url "$AHP_TEST_AUTH_URL" 2>"$work/go-client.err" &&
	grep -q 'permission_denied' "$work/go-client.err" && ! grep -qF "$AHP_TEST_AGENT_TOKEN" "$work/go-client.err"; then
	echo "with a token: passed on the server that requires one; refused Watch with an agent-only token: $(cat "$work/go-client.err")"
	go_result="passed ($((SECONDS - start)) s)"
else
	failed+=(go-example)
fi

if [[ -n "$auth_pid" ]] && ! kill -0 "$auth_pid" 2>/dev/null; then
	echo "ahp-server (auth) exited during the client suites; its log:" >&2
	cat "$work/auth-server.log" >&2
	failed+=(auth-server)
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

step "client suites: typescript ${ts_result}; python ${py_result}; npm package ${ts_pkg_result}; wheel ${py_pkg_result}; go example ${go_result}"
if ((${#failed[@]})); then
	echo "failed: ${failed[*]}" >&2
	exit 1
fi
