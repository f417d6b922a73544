#!/usr/bin/env bash
# Builds the real control plane the cluster tests run, from the Go modules pinned beside this script, once per
# version: kube-apiserver, etcd and kubectl where fabric8's kube-api-test looks for them
# (<root>/k8s/<version>-linux-amd64/), and kube-controller-manager and kube-scheduler beside them.
# A directory that already holds all five is left alone. With --node first, it builds the same release's kubelet and
# kube-proxy into that directory instead (for the real node tier), unless they are there.
# Usage: build.sh [--node] [root], root defaulting to ~/.kubeapitest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
node=false
if [ "${1:-}" = --node ]; then node=true; shift; fi
root="${1:-${KUBE_API_TEST_DIR:-$HOME/.kubeapitest}}"
release="$(sed -n 's/^\tk8s.io\/kubernetes \(v[0-9.]*\).*$/\1/p' "$here/kube/go.mod")"
[[ "$release" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || { echo "build.sh: no Kubernetes release in kube/go.mod" >&2; exit 2; }
minor="${BASH_REMATCH[1]}"
dir="$root/k8s/${release#v}-linux-amd64"
binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd)
if $node; then binaries=(kubelet kube-proxy); fi

complete() { for b in "${binaries[@]}"; do [ -x "$dir/$b" ] || return 1; done; }
require_go() {
  command -v go >/dev/null || { echo "build.sh: building the control plane needs Go (go.mod says $(grep -m1 '^go ' "$here/kube/go.mod"))" >&2; exit 2; }
}
# The test node's kubelet endpoint (cmd/node-exec, on the kubelet's own streaming code) is the project's own code,
# so it is built every time; Go's build cache makes that a few seconds once the release is built.
node_exec() {
  require_go
  mkdir -p "$dir"
  (cd "$here/kube" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/node-exec.new" ./cmd/node-exec)
  mv "$dir/node-exec.new" "$dir/node-exec"
}
if complete; then
  if $node; then echo "Node binaries $release already built in $dir"; else node_exec; echo "Control plane $release already built in $dir"; fi
  exit 0
fi

require_go
staging="$(mktemp -d "$root/.build-XXXXXX" 2>/dev/null || { mkdir -p "$root" && mktemp -d "$root/.build-XXXXXX"; })"
trap 'rm -rf "$staging"' EXIT
export CGO_ENABLED=0 GOFLAGS=-trimpath
# Without these /version reports v0.0.0, and kubectl and the operator read the server's version from it.
version_flags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  version_flags+=" -X $pkg.gitVersion=$release -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
start=$SECONDS
commands=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
if $node; then commands=("${binaries[@]}"); fi
for cmd in "${commands[@]}"; do
  (cd "$here/kube" && go build -ldflags "-s -w$version_flags" -o "$staging/$cmd" "k8s.io/kubernetes/cmd/$cmd")
  echo "built $cmd ($((SECONDS - start)) s so far)"
done
if ! $node; then
  (cd "$here/etcd" && go build -ldflags "-s -w" -o "$staging/etcd" go.etcd.io/etcd/server/v3)
  echo "built etcd ($((SECONDS - start)) s in all)"
fi
mkdir -p "$dir"
for b in "${binaries[@]}"; do mv "$staging/$b" "$dir/$b"; done
if $node; then "$dir/kubelet" --version; exit 0; fi
node_exec
"$dir/kube-apiserver" --version
# its first line only, read without closing the pipe early: head would, and etcd's next write would end the build
# with SIGPIPE under pipefail
"$dir/etcd" --version | sed -n 1p
