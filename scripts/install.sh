#!/usr/bin/env bash
# Sourced by scripts/test.sh and scripts/demo.sh: `pa_install EXTRAS` installs paperatlas (EXTRAS e.g. '[test]', or
# '') into the active venv at the exact versions of constraints.txt, the CPU build of torch first.
# A plain `pip install` on Linux pulls the CUDA build of torch (several GB, unused: paperatlas runs on the CPU). So
# on Linux, unless pip already resolves torch to a CPU build (a local wheel in a find-links directory of its config,
# as on this project's machines; asked with --dry-run), torch comes from PyTorch's CPU index. On macOS and Windows
# PyPI's torch is CPU-only.
pa_install() {
  local extras=${1:-} pip=(pip install -q --disable-pip-version-check -c constraints.txt)
  if [ "$(uname -s)" = Linux ] && ! python -c 'import torch' 2>/dev/null; then
    if "${pip[@]}" --dry-run --ignore-installed --report - torch 2>/dev/null | grep -q '"version": "[^"]*+cpu"'; then
      :  # pip resolves torch to the CPU build: it comes with the rest, in the one install below
    else
      "${pip[@]}" --index-url https://download.pytorch.org/whl/cpu --extra-index-url https://pypi.org/simple torch \
        || { echo "could not install torch from https://download.pytorch.org/whl/cpu (README, Set up)" >&2; return 1; }
    fi
  fi
  "${pip[@]}" -e ".${extras}"
}
