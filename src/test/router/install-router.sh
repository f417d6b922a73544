#!/usr/bin/env bash
# Installs a released router from PyPI into a virtual environment kept once per release:
# <root>/<router>-<release>/venv, root defaulting to ~/.cache/ebb-routers (or $EBB_ROUTER_DIR).
# Usage: install-router.sh smg [root]
#
# smg: SGLang's model gateway, the release the operator's default gateway image carries. The wheel holds the Rust
# gateway and the Python launcher the image's entrypoint runs (python3 -m smg.launch_router); its dependencies are
# pinned in smg-<release>.txt, frozen from an install that served.
#
# A directory that already holds a finished install is left alone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
router="${1:-}"
case "$router" in
  smg) release=1.9.0; dist="smg==$release"; pins="$here/smg-$release.txt"; check='import smg.launch_router; from importlib.metadata import version; print("smg", version("smg"))' ;;
  *) echo "usage: install-router.sh smg [root]" >&2; exit 2 ;;
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
"${pip[@]}" --no-deps -r "$pins"
"$dir/venv/bin/python" -c "$check"
touch "$dir/installed"
echo "$router $release installed in $dir in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1))"
