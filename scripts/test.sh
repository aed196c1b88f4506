#!/usr/bin/env bash
# Set everything up, then run every check CI runs: lint, unit tests, the parity suite (ci profile),
# the regression-corpus replay and the gradient-regression gate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
.venv/bin/ruff check .
set +e
.venv/bin/python -m pytest -n auto -p no:cacheprovider "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$status"
