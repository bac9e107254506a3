#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries the integration tests run, into a cache outside the
# repository, and prints the directory that holds both on the last line of stdout.
#
# A no-op when the binaries for the pinned versions are already cached. Versions are read from
# kube-apiserver/go.mod and etcd/go.mod (change them with update-modules.sh).
#
# Environment:
#   FLOTILLA_ENVTEST_BIN  a directory that already holds kube-apiserver and etcd: used as is
#   KUBE_APISERVER, ETCD  paths to binaries you already have; the one not given is built
#   XDG_CACHE_HOME        cache root (default ~/.cache); binaries go to
#                         $XDG_CACHE_HOME/flotilla/envtest/k8s-<version>_etcd-<version>/
# Progress and compiler output go to stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
say() { echo "envtest-build: $*" >&2; }
die() { say "$*"; exit 1; }

if [ -n "${FLOTILLA_ENVTEST_BIN:-}" ]; then
  for b in kube-apiserver etcd; do
    [ -x "$FLOTILLA_ENVTEST_BIN/$b" ] || die "FLOTILLA_ENVTEST_BIN=$FLOTILLA_ENVTEST_BIN has no executable '$b'"
  done
  (cd "$FLOTILLA_ENVTEST_BIN" && pwd)
  exit 0
fi

# required_version MODULE GOMOD: the version GOMOD requires MODULE at (block or single-line require).
required_version() { awk -v m="$1" '$1=="require"&&$2==m{print $3; exit} $1==m&&$2~/^v/{print $2; exit}' "$2"; }
k8s_version="$(required_version k8s.io/kubernetes "$here/kube-apiserver/go.mod")"
etcd_version="$(required_version go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")"
[ -n "$k8s_version" ] || die "cannot read the k8s.io/kubernetes version from $here/kube-apiserver/go.mod"
[ -n "$etcd_version" ] || die "cannot read the go.etcd.io/etcd/server/v3 version from $here/etcd/go.mod"

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/envtest"
out="$cache_root/k8s-${k8s_version}_etcd-${etcd_version}"

# build NAME: compiles hack/envtest/NAME into $out/NAME unless it is already there. The binary is
# written under a temporary name and renamed, so an interrupted build never leaves a partial file.
build() {
  local name="$1" ldflags="-s -w"
  [ -x "$out/$name" ] && return 0
  command -v go >/dev/null 2>&1 ||
    die "'go' is not on PATH: install Go >= 1.26 (or put /usr/local/go/bin on PATH), or point FLOTILLA_ENVTEST_BIN / KUBE_APISERVER and ETCD at existing binaries"
  if [ "$name" = kube-apiserver ]; then
    # Same stamps as upstream's hack/lib/version.sh; without them /version reports v0.0.0-master.
    local minor p
    minor="${k8s_version#v1.}"; minor="${minor%%.*}"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
      ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
  fi
  mkdir -p "$out"
  say "building $name into $out (a cold build takes several minutes)"
  local tmp="$out/.$name.$$"
  (
    cd "$here/$name"
    GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local \
      go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp" . >&2
  ) || { rm -f "$tmp"; die "building $name failed (see the go output above)"; }
  mv -f "$tmp" "$out/$name"
}

# Serialise concurrent builds of the same versions (e.g. two test runs started together).
with_lock() {
  mkdir -p "$cache_root"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$cache_root/.lock"
    flock 9
  fi
  "$@"
}

if [ -z "${KUBE_APISERVER:-}" ] && [ -z "${ETCD:-}" ]; then
  if [ ! -x "$out/kube-apiserver" ] || [ ! -x "$out/etcd" ]; then
    with_lock build kube-apiserver
    build etcd
  fi
  echo "$out"
  exit 0
fi

# One or both binaries were given by path: link both into one directory named after their locations,
# so callers still get a single directory.
apiserver="${KUBE_APISERVER:-}"
etcd="${ETCD:-}"
[ -z "$apiserver" ] || [ -x "$apiserver" ] || die "KUBE_APISERVER=$apiserver is not an executable file"
[ -z "$etcd" ] || [ -x "$etcd" ] || die "ETCD=$etcd is not an executable file"
if [ -z "$apiserver" ]; then with_lock build kube-apiserver; apiserver="$out/kube-apiserver"; fi
if [ -z "$etcd" ]; then with_lock build etcd; etcd="$out/etcd"; fi
apiserver="$(realpath "$apiserver")"
etcd="$(realpath "$etcd")"
links="$cache_root/given-$(printf '%s\n%s\n' "$apiserver" "$etcd" | sha256sum | cut -c1-12)"
mkdir -p "$links"
ln -sfn "$apiserver" "$links/kube-apiserver"
ln -sfn "$etcd" "$links/etcd"
echo "$links"
