#!/usr/bin/env bash
# Builds what the real node tier runs beside the release's kubelet and kube-proxy (src/test/go/build.sh --node), once
# per version, into <root>/<key>/ (root: $EBB_NODE_DIR or ~/.cache/ebb-node):
#   bin/     containerd and its runc shim, runc (with seccomp, which containerd asks of every sandbox), ctr, crictl, and
#            the CNI plugins bridge, host-local, loopback and portmap, each from its Go module at the version below;
#   pause    the release's own pause program (build/pause/linux/pause.c in its module), static;
#   rootfs/  a Debian root filesystem of this machine's suite with python3 and a Java runtime, which the engine images
#            are made of (the drain hook and the reads need the image's python3; the fake engine is Java).
# Needs Go, gcc with a static libc, libseccomp's headers and debootstrap (Debian: libseccomp-dev, debootstrap), and root.
# A directory that already holds all of it is left alone. Prints the directory last.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
containerd=v2.4.2
runc=v1.5.3
cni=v1.10.0
cri_tools=v1.37.0
release="$(sed -n 's/^\tk8s.io\/kubernetes \(v[0-9.]*\).*$/\1/p' "$here/../go/kube/go.mod")"
suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
root="${EBB_NODE_DIR:-$HOME/.cache/ebb-node}"
dir="$root/containerd-$containerd-runc-$runc-cni-$cni-pause-$release-$suite"

complete() {
  for b in containerd containerd-shim-runc-v2 runc ctr crictl bridge host-local loopback portmap; do [ -x "$dir/bin/$b" ] || return 1; done
  [ -x "$dir/pause" ] && [ -L "$dir/rootfs/usr/bin/python3" ] && [ -L "$dir/rootfs/usr/bin/java" ]
}
if complete; then echo "$dir"; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "node/build.sh: the real node's root filesystem is made by debootstrap, as root" >&2; exit 2; }
for tool in go gcc debootstrap; do
  command -v "$tool" >/dev/null || { echo "node/build.sh: needs $tool" >&2; exit 2; }
done

mkdir -p "$root"
staging="$(mktemp -d "$root/.build-XXXXXX")"
trap 'rm -rf "$staging"' EXIT
start=$SECONDS
export GOBIN="$staging/bin" GOFLAGS=-trimpath
# btrfs would need its C headers; these tests use overlayfs
CGO_ENABLED=0 go install -tags no_btrfs "github.com/containerd/containerd/v2/cmd/containerd@$containerd" \
  "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$containerd" "github.com/containerd/containerd/v2/cmd/ctr@$containerd"
CGO_ENABLED=1 go install -tags seccomp "github.com/opencontainers/runc@$runc"
CGO_ENABLED=0 go install "github.com/containernetworking/plugins/plugins/main/bridge@$cni" \
  "github.com/containernetworking/plugins/plugins/main/loopback@$cni" "github.com/containernetworking/plugins/plugins/ipam/host-local@$cni" \
  "github.com/containernetworking/plugins/plugins/meta/portmap@$cni"
CGO_ENABLED=0 go install "sigs.k8s.io/cri-tools/cmd/crictl@$cri_tools"
echo "built the runtime and the CNI plugins ($((SECONDS - start)) s so far)"

kubernetes="$(go mod download -json "k8s.io/kubernetes@$release" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
gcc -Os -Wall -Werror -static -DVERSION="$release" -o "$staging/pause" "$kubernetes/build/pause/linux/pause.c"

# the suite's own mirror, as this machine's apt reaches it
mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)"
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list)"
debootstrap --variant=minbase --include=python3,openjdk-17-jre-headless "$suite" "$staging/rootfs" "$mirror" >"$staging/debootstrap.log" \
  || { tail -n 20 "$staging/debootstrap.log" >&2; exit 1; }
# what a container never reads: package caches and lists, documentation, and the device nodes runc mounts afresh
rm -rf "$staging/rootfs"/var/cache/apt/* "$staging/rootfs"/var/lib/apt/lists/* "$staging/rootfs"/usr/share/{doc,man,locale} \
  "$staging/rootfs"/dev/* "$staging/rootfs"/proc/* "$staging/rootfs"/sys/*
echo "built the root filesystem ($((SECONDS - start)) s in all)"

rm -rf "$dir"
mv "$staging" "$dir"
trap - EXIT
echo "$dir"
