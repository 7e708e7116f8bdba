#!/usr/bin/env bash
# Install paperatlas into ./.venv, build the ICLR 2021 demo atlas (../shared/seeds/001_*.txt, or the bundled
# 60-paper sample when ../shared is absent) into iclr2021.db, and serve it at http://127.0.0.1:8000/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
pip install -q --disable-pip-version-check -e .
exec paperatlas demo "$@"
