#!/usr/bin/env bash
# Install paperatlas into ./.venv (the versions of constraints.txt, the CPU build of torch first: scripts/install.sh),
# build the ICLR 2021 demo atlas (../shared/seeds/001_*.txt, or the bundled 60-paper sample when ../shared is absent)
# into iclr2021.db, and serve it at http://127.0.0.1:8000/. Extra arguments go to `paperatlas demo` (--port,
# --no-serve).
set -euo pipefail
cd "$(dirname "$0")/.."
# Measured on this project's 2-core machine (AMD EPYC, idle, 2026-11-27), from a fresh clone: install 49 s (1,814
# MB, pip's cache off), the 860-paper build 43 s (embed 16, layout 19 of which ~10 s is UMAP's numba compile on a
# first run), 2 min 15 s from the command to serving; the 60-paper sample builds in ~16 s. A machine's first build
# also times fp32 against bf16 (--precision auto, ~15 s, cached).
if [ -f ../shared/seeds/001_2614e1796f49d7fd.txt ]; then
  what="the ICLR 2021 atlas (860 papers)"; took="~1 min on 2 free cores (longer while other jobs share them; it includes timing fp32 against bf16 once per machine, ~15 s)"
else
  what="the bundled 60-paper ICLR 2021 sample"; took="~20 s on 2 free cores"
fi
echo "paperatlas demo, 3 steps:"
if [ -x .venv/bin/paperatlas ]; then
  echo "  1. check the install in ./.venv (seconds)"
else
  echo "  1. install paperatlas into ./.venv: 1.8 GB (CPU torch included), ~1 min on 2 free cores"
fi
echo "  2. build $what into iclr2021.db: $took, a bar per stage"
echo "  3. serve it at http://127.0.0.1:8000/ (another port: --port N; Ctrl-C stops it)"
[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
. scripts/install.sh
pa_install ''
exec paperatlas demo "$@"
