#!/usr/bin/env bash
# Installs what the TypeScript and Python client suites (scripts/test-clients.sh) need. Idempotent:
#   - Debian packages for the Python client, installed only when missing (apt-get update runs once,
#     and only if something is missing): python3-grpcio python3-protobuf (runtime, for
#     /usr/bin/python3), protobuf-compiler protobuf-compiler-grpc (protoc and grpc_python_plugin,
#     used to check that clients/python/gen is current), and python3-venv python3-setuptools
#     python3-wheel (to build the ahp-client wheel offline and install it into a virtual
#     environment).
#   - npm ci in clients/typescript (pinned by its package-lock.json); it also fills the npm cache
#     the packed @ahp-gateway/client is installed from.
#   - the modules of examples/go-client (go mod download; they are the main module's, already
#     in the module cache after its own go mod download).
# Missing apt-get or npm is reported, not fatal: scripts/test-clients.sh decides what that means.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

apt_packages=(python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc python3-venv python3-setuptools python3-wheel)

echo "==> client deps: Debian packages (${apt_packages[*]})"
missing=()
for p in "${apt_packages[@]}"; do
	if ! dpkg -s "$p" >/dev/null 2>&1; then
		missing+=("$p")
	fi
done
if ((${#missing[@]} == 0)); then
	echo "already installed"
elif ! command -v apt-get >/dev/null 2>&1; then
	echo "apt-get not found: cannot install ${missing[*]} (the Python client suite needs them)" >&2
else
	sudo=()
	if [[ "$(id -u)" != 0 ]]; then
		sudo=(sudo)
	fi
	echo "installing ${missing[*]}"
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	echo "installed ${missing[*]}"
fi

echo "==> client deps: npm ci in clients/typescript"
if command -v npm >/dev/null 2>&1; then
	(cd clients/typescript && npm ci --no-audit --no-fund)
else
	echo "npm not found: cannot install the TypeScript client's packages (the TypeScript suite needs Node >= 20 and npm)" >&2
fi

echo "==> client deps: Go modules of examples/go-client"
if command -v go >/dev/null 2>&1; then
	(cd examples/go-client && go mod download && go mod verify)
else
	echo "go not found: cannot fetch the modules of examples/go-client" >&2
fi
