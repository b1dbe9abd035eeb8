#!/usr/bin/env bash
# The project's test command (README.md): vet, protobuf lint/format, generated-code freshness,
# breaking-change check against the newest schema release (releases/), and the Go tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
buf=./scripts/buf

step() { printf '\n==> %s\n' "$*"; }

step "go vet"
go vet ./...

step "gofmt"
unformatted="$(find . -name '*.go' -not -path './node_modules/*' -not -path './clients/*/node_modules/*' -print0 | xargs -0 gofmt -l)"
if [[ -n "$unformatted" ]]; then
	echo "not gofmt-formatted (run gofmt -w on them):" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "buf lint"
$buf lint

step "buf format"
$buf format --diff --exit-code

step "generated code is current"
before="$(mktemp -d)"
trap 'rm -rf "$before"' EXIT
cp -R gen "$before/gen"
$buf generate
if ! diff -r "$before/gen" gen >/dev/null; then
	diff -ru "$before/gen" gen | head -50 || true
	echo "gen/ is stale: run ./scripts/buf generate and commit the result" >&2
	exit 1
fi

step "buf breaking"
# Against the newest committed release image (releases/vX.Y.Z.binpb), so a clean checkout without
# tags still checks; a release tag is the fallback.
image="$(ls releases/v*.binpb 2>/dev/null | sort -V | tail -n 1 || true)"
tag=""
if [[ -z "$image" ]] && git rev-parse --git-dir >/dev/null 2>&1; then
	tag="$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)"
fi
if [[ -n "$image" ]]; then
	echo "against $image"
	$buf breaking proto --against "$image"
elif [[ -n "$tag" ]]; then
	$buf breaking proto --against ".git#tag=${tag},subdir=proto"
else
	echo "skipped: no release image (releases/v*.binpb) or tag (v*) to compare against"
fi

step "clients (TypeScript, Python, Go example; packed npm tarball and wheel) against a running ahp-server"
AHP_CLIENTS_OPTIONAL="${AHP_CLIENTS_OPTIONAL:-1}" ./scripts/test-clients.sh

step "README examples (grpcurl, buf curl, curl) against a running ahp-server"
AHP_README_TOOLS_OPTIONAL="${AHP_README_TOOLS_OPTIONAL:-1}" ./scripts/test-readme-examples.sh

step "go test"
go test -race -count=1 ./...

step "kubernetes manifests (offline)"
./scripts/check-k8s.sh
