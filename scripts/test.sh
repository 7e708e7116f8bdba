#!/usr/bin/env bash
# Install paperatlas with its test extras into ./.venv and run the whole test suite (pytest).
# Browser tests drive Debian's Chromium (/usr/bin/chromium) through Playwright; it is installed here when
# missing and we are root (as on CI). Extra arguments go to pytest, e.g. `bash scripts/test.sh -k search`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
pip install -q --disable-pip-version-check -e '.[test]'
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "note: /usr/bin/chromium missing (sudo apt-get install chromium): browser tests will be skipped" >&2
  fi
fi
exec python -m pytest "$@"
