#!/usr/bin/env bash
# Installs what the web console's browser test (cmd/ahp-server TestConsoleInBrowser) needs. Idempotent:
#   - Debian's chromium package (/usr/bin/chromium), installed only when missing (apt-get update
#     runs only then);
#   - playwright-core, pinned by cmd/ahp-server/testdata/console/package-lock.json (npm ci there).
#     It drives the system's chromium; it downloads no browser of its own.
# Missing apt-get or npm is reported, not fatal: the test skips then, unless AHP_CONSOLE_OPTIONAL=0.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "==> console deps: chromium (Debian)"
if [[ -x /usr/bin/chromium ]]; then
	echo "already installed"
elif ! command -v apt-get >/dev/null 2>&1; then
	echo "apt-get not found: cannot install chromium (the console browser test needs it)" >&2
else
	sudo=()
	if [[ "$(id -u)" != 0 ]]; then
		sudo=(sudo)
	fi
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
	echo "installed chromium"
fi

echo "==> console deps: npm ci in cmd/ahp-server/testdata/console (playwright-core)"
if command -v npm >/dev/null 2>&1; then
	(cd cmd/ahp-server/testdata/console && npm ci --no-audit --no-fund)
else
	echo "npm not found: cannot install playwright-core (the console browser test needs Node >= 20 and npm)" >&2
fi
