#!/usr/bin/env bash
# Runs every go test -fuzz target in the module for a chosen time each (default 30s):
#   ./scripts/fuzz.sh            # every target, 30s each
#   FUZZTIME=10m ./scripts/fuzz.sh internal/codec/hooks
# A crash is written by Go under the package's testdata/fuzz/<Target>/ — commit it: from then on
# `go test` replays it as a regression seed. Plain `go test` always runs every seed corpus.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime="${FUZZTIME:-30s}"
dirs=("$@")
if [[ ${#dirs[@]} -eq 0 ]]; then
	mapfile -t dirs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
fi
failed=0
for dir in "${dirs[@]}"; do
	for target in $(grep -h --include='*_test.go' -r '^func Fuzz' "$dir" | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' | sort -u); do
		printf '==> %s %s (%s)\n' "$dir" "$target" "$fuzztime"
		if ! go test "./${dir#./}" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s; then
			failed=1
		fi
	done
done
exit "$failed"
