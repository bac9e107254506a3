#!/usr/bin/env bash
# Builds the helm binary the chart tests run, into a cache outside the repository, and prints its path on
# the last line of stdout. A no-op when the pinned version is already cached.
#
# Environment:
#   HELM            a helm binary you already have: used as is (its version is not checked)
#   HELM_VERSION    the helm.sh/helm/v3 module version to build (default below)
#   XDG_CACHE_HOME  cache root (default ~/.cache); helm goes to $XDG_CACHE_HOME/flotilla/helm/<version>/helm
# Progress and compiler output go to stderr. A cold build takes about 5 minutes on 2 cores.
set -euo pipefail

prefix=helm-build
. "$(dirname "$0")/../tool-lib.sh"
use_given HELM

version="${HELM_VERSION:-v3.22.0}"
out="${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/helm/$version"
if [ ! -x "$out/helm" ]; then
  command -v go >/dev/null 2>&1 || { say "'go' is not on PATH: install Go, or point HELM at an existing helm binary"; exit 1; }
  mkdir -p "$out"
  say "building helm $version into $out (a cold build takes several minutes)"
  tmp="$(mktemp -d "$out/.build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  # Same version stamp as helm's own Makefile, so `helm version` reports it.
  GOWORK=off CGO_ENABLED=0 GOTOOLCHAIN=local GOBIN="$tmp" \
    go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
    "helm.sh/helm/v3/cmd/helm@$version" >&2
  mv "$tmp/helm" "$out/helm"
fi
echo "$out/helm"
