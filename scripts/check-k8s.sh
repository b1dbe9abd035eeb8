#!/usr/bin/env bash
# Validates the Kubernetes manifests under docker/k8s offline: renders each kustomization with
# `kubectl kustomize` and strictly decodes and checks every object (tools/k8scheck, its own Go
# module so Kubernetes libraries never enter the product's go.mod). No cluster is needed.
#
# The first run on a fresh machine downloads about 40 MB of modules and compiles client-go's
# scheme (see docs/kubernetes.md for timings); later runs take seconds.
#
# Without kubectl (or kustomize) the render tests skip; set K8SCHECK_REQUIRE_RENDER=1 to make that
# a failure (CI does). Extra arguments go to `go test`, e.g. scripts/check-k8s.sh -v.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../tools/k8scheck"

if command -v kubectl >/dev/null 2>&1; then
	echo "==> rendering with $(kubectl version --client 2>/dev/null | head -1)"
elif command -v kustomize >/dev/null 2>&1; then
	echo "==> rendering with kustomize $(kustomize version 2>/dev/null || true)"
else
	echo "==> WARNING: neither kubectl nor kustomize found: the manifest render tests will SKIP" >&2
fi

go test -count=1 "$@" ./...
