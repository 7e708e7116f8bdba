#!/usr/bin/env bash
# Install paperatlas with its test extras into ./.venv (the versions of constraints.txt, the CPU build of torch
# first: scripts/install.sh) and run the whole test suite (pytest).
# Browser tests drive Debian's Chromium (/usr/bin/chromium) through Playwright, and the export tests read our
# BibTeX/CSL-JSON back with pandoc (as Zotero would import them); both are installed here when missing and we
# are root (as on CI). Extra arguments go to pytest, e.g. `bash scripts/test.sh -k search`.
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
exec python -m pytest "$@"
