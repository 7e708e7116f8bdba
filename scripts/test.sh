#!/usr/bin/env bash
# Install paperatlas with its test extras into ./.venv (the versions of constraints.txt, the CPU build of torch
# first: scripts/install.sh) and run the whole test suite (pytest).
# Browser tests drive Debian's Chromium (/usr/bin/chromium) through Playwright, and the export tests read our
# BibTeX/CSL-JSON back with pandoc (as Zotero would import them); both are installed here when missing and we
# are root (as on CI). Extra arguments go to pytest, e.g. `bash scripts/test.sh -k search`; the tests run on one
# worker per core (PAPERATLAS_TEST_WORKERS=0 runs them in one process).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
. scripts/install.sh
pa_install '[test]'
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v pandoc >/dev/null || missing+=(pandoc)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/dev/null
  else
    echo "note: ${missing[*]} missing (sudo apt-get install ${missing[*]}): the tests needing them will be skipped" >&2
  fi
fi
# one pytest worker per core (pytest-xdist), each test file on one worker so its module fixtures are built once, the
# longest files first (tests/conftest.py LONGEST_FIRST): on 2 cores the suite takes ~17 min instead of ~28
exec python -m pytest -n "${PAPERATLAS_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder "$@"
