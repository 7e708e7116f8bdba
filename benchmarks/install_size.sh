#!/usr/bin/env bash
# Install size and time of paperatlas at git revisions, as demo.sh and test.sh install it, into fresh venvs.
#   bash benchmarks/install_size.sh [REV ...]      (default: HEAD)
# For each REV: a clean clone in a temporary directory, a new venv, then the revision's own install step (its
# scripts/install.sh `pa_install` when it has one, else `pip install -e .` as the scripts before issue 30 did),
# once without extras (demo.sh) and once with '[test]' (test.sh). Prints wall time (s) and the venv's size (MB, du).
# pip's cache is off (PIP_NO_CACHE_DIR=1), as on a fresh machine; wheels in a find-links directory are still used.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
revs=("$@"); [ ${#revs[@]} -gt 0 ] || revs=(HEAD)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export PIP_NO_CACHE_DIR=1
printf '%-10s %-8s %8s %8s\n' rev install seconds MB
for rev in "${revs[@]}"; do
  for extras in '' '[test]'; do
    dir="$work/$(git -C "$repo" rev-parse --short "$rev")${extras:+-test}"
    git clone -q "$repo" "$dir" && git -C "$dir" checkout -q "$rev"
    start=$(date +%s.%N)
    (cd "$dir" && python3 -m venv .venv && . .venv/bin/activate \
      && if [ -f scripts/install.sh ]; then . scripts/install.sh && pa_install "$extras"; \
         else pip install -q --disable-pip-version-check -e ".$extras"; fi) >"$work/log" 2>&1 \
      || { cat "$work/log" >&2; exit 1; }
    end=$(date +%s.%N)
    printf '%-10s %-8s %8.0f %8d\n' "$(git -C "$repo" rev-parse --short "$rev")" "${extras:-demo}" \
      "$(echo "$end - $start" | bc)" "$(du -sm "$dir/.venv" | cut -f1)"
    rm -rf "$dir"
  done
done
