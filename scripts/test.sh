#!/usr/bin/env bash
# Set everything up, then run every check CI runs: lint; the unit tests of every package and the
# parity suite under the deterministic `ci` hypothesis profile (scalar engine, regression corpus
# replayed); the parity suite on the tensor engine; the gradient-regression gate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
PY=.venv/bin/python

run_pytest() {
  # pytest exits 5 when it collected nothing: that is a broken suite, never a pass.
  local status=0
  "$PY" -m pytest -n auto -p no:cacheprovider "$@" || status=$?
  if [ "$status" -eq 5 ]; then
    echo "pytest $* collected no tests: failing on purpose" >&2
    return 1
  fi
  return "$status"
}

echo "== ruff"
.venv/bin/ruff check .
echo "== unit tests and parity suite (engine minigrad)"
run_pytest "$@"
echo "== parity suite (engine minigrad-tensor)"
run_pytest parity_tests --engine minigrad-tensor
echo "== gradient-regression gate"
"$PY" -m ci.gate
