#!/usr/bin/env bash
# Set everything up, then run the main job: a parity campaign over minigrad's scalar engine.
# 10,000 random expression graphs, each checked at 16 input points three ways (minigrad against
# torch.autograd, both against numerical gradients, second derivatives against torch), on two
# worker processes; reports in out/report.json and out/report.html. Extra arguments are passed
# on (e.g. --graphs 500, --tensor, --engine micrograd).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m gradcheck run --graphs 10000 --points 16 --jobs 2 --out out "$@"
