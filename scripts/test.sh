#!/usr/bin/env bash
# Set everything up, then run every check CI runs: lint; the gradient-regression gate; the parity
# suite (gradcheck.suite, through its pytest plugin) on the tensor engine; the unit tests of every
# package (JAX, autograd and Dask-cluster campaigns included) and the parity suite on the scalar
# engine (regression corpus replayed), all under the deterministic `ci` hypothesis profile; then
# the zoo's CI slice (skipped with one line when the package index cannot be reached).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
# a test skipped for a missing test dependency fails (conftest.py): CI must run every test
export GRADCHECK_REQUIRE_TEST_DEPS=1
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
echo "== gradient-regression gate"
"$PY" -m ci.gate
echo "== parity suite, the installed pytest plugin (engine minigrad-tensor, float64 and float32)"
run_pytest --pyargs gradcheck.suite --gradcheck-engine minigrad-tensor
run_pytest --pyargs gradcheck.suite --gradcheck-engine minigrad-tensor --gradcheck-dtype float32 -k tensor
echo "== unit tests and parity suite (engine minigrad)"
if [ "$#" -eq 0 ]; then
  run_pytest -m "not under_load" --durations=20  # the slowest tests named in the log: the CI budget is 15 min
  # alone: it saturates every core, which would slow the tests beside it past their graph timeouts;
  # only the files using the mark are collected (collecting the whole suite costs about 27 s CPU
  # per xdist worker), in one process (-n 0: no workers to start for one test)
  echo "== the same report at any load (test_under_load.py)"
  under_load=$(grep -rl --include='test_*.py' --exclude-dir=.venv 'mark.under_load' . || true)
  # shellcheck disable=SC2086 # one word per file
  run_pytest -n 0 -m under_load $under_load
else
  run_pytest "$@"
fi
echo "== the zoo's CI slice: two published engines from PyPI, 300 graphs each (docs/zoo.md)"
bash scripts/zoo.sh --ci
