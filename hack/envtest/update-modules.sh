#!/usr/bin/env bash
# Regenerates the two build modules (kube-apiserver/ and etcd/) for the pinned versions.
#
# Usage: hack/envtest/update-modules.sh [K8S_VERSION] [ETCD_VERSION]
#   e.g. hack/envtest/update-modules.sh v1.33.13 v3.5.35
#
# k8s.io/kubernetes requires every staging module (k8s.io/api, k8s.io/apiserver, ...) at v0.0.0 and
# replaces it with ./staging/src/...; replaces of a dependency are ignored, so the build module must
# replace each staging module with its published v0.<minor>.<patch>. The list is read from
# k8s.io/kubernetes's own go.mod rather than kept by hand, because new minors add staging modules.
# The go and godebug lines are copied too: GODEBUG defaults come from the main module's go line.
# Run this after changing a version, then commit go.mod and go.sum.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
required_version() { awk -v m="$1" '$1=="require"&&$2==m{print $3; exit} $1==m&&$2~/^v/{print $2; exit}' "$2"; }
K8S="${1:-$(required_version k8s.io/kubernetes "$here/kube-apiserver/go.mod")}"
ETCD="${2:-$(required_version go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")}"
[[ "$K8S" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "update-modules: bad Kubernetes version '$K8S'" >&2; exit 2; }
STAGING="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
[[ "$ETCD" =~ ^v3\.[0-9]+\.[0-9]+$ ]] || { echo "update-modules: bad etcd version '$ETCD'" >&2; exit 2; }

command -v go >/dev/null || { echo "update-modules: 'go' not found on PATH" >&2; exit 1; }
export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=local

# kube-apiserver
cd "$here/kube-apiserver"
kgomod="$(go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
[ -f "$kgomod" ] || { echo "update-modules: could not download k8s.io/kubernetes@$K8S" >&2; exit 1; }
rm -f go.mod go.sum
go mod init flotilla.local/envtest/kube-apiserver >/dev/null 2>&1
go mod edit -go="$(awk '$1=="go"{print $2; exit}' "$kgomod")" -require="k8s.io/kubernetes@$K8S"
godebug="$(awk '$1=="godebug"{print $2; exit}' "$kgomod")"
[ -z "$godebug" ] || go mod edit -godebug="$godebug"
for m in $(awk '/^replace[[:space:]]*\(/{f=1; next} f&&/^\)/{f=0}
                f&&$2=="=>"&&$3~/^\.\/staging\//{print $1}
                $1=="replace"&&$3=="=>"&&$4~/^\.\/staging\//{print $2}' "$kgomod"); do
  go mod edit -replace="$m=$m@$STAGING"
done
go mod tidy

# etcd
cd "$here/etcd"
rm -f go.mod go.sum
go mod init flotilla.local/envtest/etcd >/dev/null 2>&1
egomod="$(go mod download -json "go.etcd.io/etcd/server/v3@$ETCD" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
go mod edit -go="$(awk '$1=="go"{print $2; exit}' "$egomod")" -require="go.etcd.io/etcd/server/v3@$ETCD"
go mod tidy

echo "kube-apiserver $K8S (staging $STAGING), etcd $ETCD"
