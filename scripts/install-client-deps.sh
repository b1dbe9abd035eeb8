#!/usr/bin/env bash
# Installs what the TypeScript and Python client suites (scripts/test-clients.sh) need. Idempotent:
#   - Debian packages for the Python client, installed only when missing (apt-get update runs once,
#     and only if something is missing): python3-grpcio python3-protobuf (runtime, for
#     /usr/bin/python3) and protobuf-compiler protobuf-compiler-grpc (protoc and grpc_python_plugin,
#     used to check that clients/python/ahp_client/gen is current).
#   - npm ci in clients/typescript (pinned by its package-lock.json).
# Missing apt-get or npm is reported, not fatal: scripts/test-clients.sh decides what that means.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

apt_packages=(python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc)

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
