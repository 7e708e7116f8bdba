#!/usr/bin/env bash
# Sourced by scripts/test.sh and scripts/demo.sh: install paperatlas (with the extras given as $1, e.g. "[test]")
# into the active venv at the exact versions of constraints.txt, the CPU build of torch first.
# A plain `pip install` on Linux pulls the CUDA build of torch (several GB); the CPU build is taken from a wheel
# pip already finds without an index (a local wheel directory of pip's config), else from PyTorch's CPU index.
# On macOS and Windows PyPI's torch is the CPU build already.
pa_install() {
  local extras=${1:-} pip=(pip install -q --disable-pip-version-check -c constraints.txt)
  if [ "$(uname -s)" = Linux ] && ! python -c 'import torch' 2>/dev/null; then
    "${pip[@]}" --no-index torch 2>/dev/null \
      || "${pip[@]}" --index-url https://download.pytorch.org/whl/cpu torch
  fi
  "${pip[@]}" -e ".${extras}"
}
