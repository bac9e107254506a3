#!/usr/bin/env bash
# Builds gatekeeper-mutate (hack/gatekeeper/mutate: Gatekeeper's own mutation system behind a JSON-lines
# interface, for the differential test of pkg/engine's Gatekeeper mutators) into a cache outside the
# repository, and prints the binary's path on the last line of stdout.
#
# A no-op when the binary for the pinned Gatekeeper version is already cached. The version is the one
# mutate/go.mod requires github.com/open-policy-agent/gatekeeper/v3 at.
#
# Environment:
#   FLOTILLA_GATEKEEPER_MUTATE  a gatekeeper-mutate binary you already have: used as is
#   XDG_CACHE_HOME              cache root (default ~/.cache); the binary goes to
#                               $XDG_CACHE_HOME/flotilla/gatekeeper/<version>/gatekeeper-mutate
# Progress and compiler output go to stderr. Exit status 3: Go is not installed (callers may skip).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
prefix=gatekeeper-build
. "$here/../tool-lib.sh"
use_given FLOTILLA_GATEKEEPER_MUTATE

version="$(awk '$1=="require"&&$2=="github.com/open-policy-agent/gatekeeper/v3"{print $3; exit} $1=="github.com/open-policy-agent/gatekeeper/v3"&&$2~/^v/{print $2; exit}' "$here/mutate/go.mod")"
[ -n "$version" ] || die "cannot read the Gatekeeper version from $here/mutate/go.mod"
# The build inputs (our main.go, go.mod, go.sum) name the cache entry too, so a change to them rebuilds.
inputs="$(cat "$here/mutate/main.go" "$here/mutate/go.mod" "$here/mutate/go.sum" | sha256sum | cut -c1-12)"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/gatekeeper"
out="$cache_root/${version}_${inputs}"
bin="$out/gatekeeper-mutate"

if [ ! -x "$bin" ]; then
  if ! command -v go >/dev/null 2>&1; then
    say "'go' is not on PATH: install Go >= 1.26 (or put /usr/local/go/bin on PATH), or point FLOTILLA_GATEKEEPER_MUTATE at a built binary"
    exit 3
  fi
  mkdir -p "$cache_root"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$cache_root/.lock"
    flock 9
  fi
  if [ ! -x "$bin" ]; then
    mkdir -p "$out"
    say "building gatekeeper-mutate (Gatekeeper $version) into $out (a cold build takes a few minutes)"
    tmp="$out/.gatekeeper-mutate.$$"
    (
      cd "$here/mutate"
      GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local \
        go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$tmp" . >&2
    ) || { rm -f "$tmp"; die "building gatekeeper-mutate failed (see the go output above)"; }
    mv -f "$tmp" "$bin"
  fi
fi
echo "$bin"
