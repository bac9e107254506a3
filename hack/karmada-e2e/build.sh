#!/usr/bin/env bash
# Builds Karmada's end-to-end suite (test/e2e/suites/base) from the Go module proxy into a cache
# outside the repository, with the ginkgo CLI of the module's go.mod beside it (it runs the suite's
# specs in parallel processes), and prints the path of the test binary on the last line of stdout.
#
# A no-op when both binaries for the version are already cached. The module is downloaded with
# `go mod download`, copied to a writable directory, optionally patched (see patches/), and compiled
# with its own go.mod by `go test -c`. The compile runs under `nice` (it is long and the machine may
# be shared).
#
# Environment:
#   KARMADA_VERSION  the Karmada module version (default v1.18.2)
#   KARMADA_E2E_NICE niceness of the compile (default 10)
#   XDG_CACHE_HOME   cache root (default ~/.cache); the binary goes to
#                    $XDG_CACHE_HOME/flotilla/karmada-e2e/<version>/e2e.test
# Progress and compiler output go to stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
say() { echo "karmada-e2e-build: $*" >&2; }
die() { say "$*"; exit 1; }

version="${KARMADA_VERSION:-v1.18.2}"
nice_level="${KARMADA_E2E_NICE:-10}"
module=github.com/karmada-io/karmada
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/karmada-e2e"
out="$cache_root/$version"
bin="$out/e2e.test"
ginkgo="$out/ginkgo"

if [ -x "$bin" ] && [ -x "$ginkgo" ]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null 2>&1 ||
  die "'go' is not on PATH: install Go >= 1.26 (or put /usr/local/go/bin on PATH)"

mkdir -p "$cache_root"
# Serialise concurrent builds (e.g. two runs started together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/.lock"
  flock 9
fi
if [ -x "$bin" ] && [ -x "$ginkgo" ]; then
  echo "$bin"
  exit 0
fi

build() { # build <output> <go command> <args…>: in the module's source tree, with its go.mod
  (
    cd "$src"
    GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local nice -n "$nice_level" go "$2" -trimpath -o "$1" "${@:3}"
  )
}

src="$out/src"
if [ -x "$bin" ] && [ -d "$src" ]; then
  say "building the ginkgo CLI"
  build "$ginkgo.$$" build github.com/onsi/ginkgo/v2/ginkgo >&2 || { rm -f "$ginkgo.$$"; die "building the ginkgo CLI failed"; }
  mv -f "$ginkgo.$$" "$ginkgo"
  echo "$bin"
  exit 0
fi

say "downloading $module@$version"
dir="$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod GOWORK=off go mod download -json "$module@$version" |
  awk -F'"' '$2=="Dir"{print $4}')"
[ -n "$dir" ] && [ -d "$dir" ] || die "go mod download $module@$version gave no module directory"

# The module cache is read-only; the compile and any patch work on a copy.
rm -rf "$src"
mkdir -p "$out"
cp -r "$dir" "$src"
chmod -R u+w "$src"
for p in "$here"/patches/*.patch; do
  [ -e "$p" ] || continue
  say "applying $(basename "$p")"
  patch -d "$src" -p1 --forward --silent <"$p" >&2 || die "patch $p does not apply to $module@$version"
done

say "compiling test/e2e/suites/base (a cold build takes many minutes)"
tmp="$out/.e2e.test.$$"
start=$(date +%s)
build "$tmp" test -c -vet=off ./test/e2e/suites/base >&2 || { rm -f "$tmp"; die "compiling the suite failed (see the go output above)"; }
build "$ginkgo.$$" build github.com/onsi/ginkgo/v2/ginkgo >&2 || { rm -f "$tmp" "$ginkgo.$$"; die "building the ginkgo CLI failed"; }
mv -f "$ginkgo.$$" "$ginkgo"
mv -f "$tmp" "$bin"
say "built $bin and $ginkgo in $(($(date +%s) - start)) s"
echo "$bin"
