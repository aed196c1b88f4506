#!/usr/bin/env bash
# The zoo (docs/zoo.md): install the pinned published engines into zoo/.venv, run each one's
# campaign and judge it against zoo/expectations.py; prints one table, exits 1 when a finding is
# unexpected or an expected one is missed. Arguments go to `python -m zoo` (--engines a,b,
# --graphs N, --markdown FILE); `--ci` is the CI slice, skipped (exit 0, one line) when the
# package index cannot be reached.
#
# zoo/.venv is a virtualenv of its own: what the engines bring (their own pins of pytest, numpy,
# ...) goes there and never into .venv. It sees the project and .venv's packages (torch, rich,
# ...) through a .pth file naming the checkout and .venv's site-packages, so nothing is installed
# twice; its own packages come first on its path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ZPY=zoo/.venv/bin/python
if [ ! -x "$ZPY" ]; then
  .venv/bin/python -m venv zoo/.venv
fi
purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'
printf '%s\n%s\n' "$PWD" "$(.venv/bin/python -c "$purelib")" > "$("$ZPY" -c "$purelib")/zoo-project.pth"

ci=0
for arg in "$@"; do [ "$arg" = --ci ] && ci=1; done
# one line per engine: its requirement, then --no-deps when it is installed without its dependencies
mapfile -t wanted < <("$ZPY" -m zoo --list "$@")
if [ "$ci" = 1 ]; then
  probe=$(mktemp -d)
  if ! reason=$("$ZPY" -m pip download --quiet --no-deps --dest "$probe" --timeout 20 --retries 1 \
      ${wanted[0]%% *} 2>&1); then
    echo "zoo slice skipped: cannot download ${wanted[0]%% *} from the package index ($(echo "$reason" | grep -v WARNING | tail -n 1))"
    rm -rf "$probe"
    exit 0
  fi
  rm -rf "$probe"
fi
with_deps=() without_deps=()
for line in "${wanted[@]}"; do
  case "$line" in
    *--no-deps*) without_deps+=("${line%% *}") ;;
    *) with_deps+=("${line%% *}") ;;
  esac
done
[ ${#with_deps[@]} -eq 0 ] || "$ZPY" -m pip install --quiet "${with_deps[@]}" 2> >(grep -v WARNING >&2)
[ ${#without_deps[@]} -eq 0 ] || "$ZPY" -m pip install --quiet --no-deps "${without_deps[@]}" 2> >(grep -v WARNING >&2)
exec "$ZPY" -m zoo "$@"
