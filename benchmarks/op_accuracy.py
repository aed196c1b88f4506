"""The registry's accuracy figures (`OpSpec.accuracy`), measured: per op, what each library engines
are written with needs, beside the figure the registry holds.

For every op, each engine of `gradcheck.testing.accuracy` (torch; Python's math: minigrad,
micrograd, textbook formulas; numpy: the registry's reference math, minigrad's Tensor; JAX; HIPS
autograd) evaluates the op alone at many points of its domain; its errors against mpmath (scalar
ops) or long-double HIPS autograd (tensor ops) give the ulps it needs: for the value, and for each
operand's gradient contribution beyond what the value's rounding already explains. The registry's
figure is the largest need with a margin, rounded up to a quarter ulp. Columns: the registry's
figure, the largest need and which engine needs it; `hvp` is the largest Hessian-vector product
error as a multiple of its bound (`errors.HVP_SAFETY` must cover it).

    python benchmarks/op_accuracy.py                     # every op (scalar 2000 points, tensor 200)
    python benchmarks/op_accuracy.py --ops tanh,sigmoid --points 5000

Not a pytest-benchmark benchmark: it measures errors in ulps, not times.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.graphs.registry import REGISTRY, SCALAR_OPS, TENSOR_OPS
from gradcheck.parity.errors import HVP_SAFETY
from gradcheck.testing.accuracy import measure


def row(op: str, points: int) -> str:
    found = measure(op, points=points)
    figures = REGISTRY[op].accuracy
    value = max(found, key=lambda m: m.value_needed)
    cells = [f"{op:<34}", f"{figures.value:>6g} {value.value_needed:>7.3f} {value.engine:<18}"]
    for j, figure in enumerate(figures.grads):
        need = max(found, key=lambda m: m.grads_needed[j] if j < len(m.grads_needed) else 0.0)
        cells.append(f"{figure:>6g} {need.grads_needed[j]:>7.3f} {need.engine:<18}")
    hvp = [max(m.hvp_ratio, default=0.0) for m in found]
    worst = max(hvp, default=0.0)
    flag = "" if worst <= HVP_SAFETY else "  > HVP_SAFETY"
    understated = value.value_needed > figures.value or any(
        m.grads_needed[j] > figures.grads[j] for m in found for j in range(len(m.grads_needed))
    )
    return "  ".join(cells) + f"  hvp {worst:.2f}{flag}" + ("  UNDERSTATED" if understated else "")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ops", default=None, help="comma-separated ops (default: every registry op)")
    parser.add_argument(
        "--points", type=int, default=None, help="points per op (default 2000 scalar, 200 tensor)"
    )
    args = parser.parse_args()
    ops = args.ops.split(",") if args.ops else list(TENSOR_OPS)
    print(f"{'op':<34}{'value: figure, need, engine':<36}  gradients per operand: figure, need, engine")
    for op in ops:
        start = time.process_time()
        points = args.points or (2000 if op in SCALAR_OPS else 200)
        print(row(op, points) + f"  ({time.process_time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
