"""Every difference the accuracy survey found, checked by hand: the engine called directly (torch,
JAX, HIPS autograd, minigrad in their own terms, not through the harness's adapters) and the
exact value computed in mpmath from a table written here, independent of the registry and of the
exact reference (`gradcheck.parity.exact`) the survey judged by.

For a one-op scalar graph the table below gives each op's value, first and second derivatives in
mpmath at 60 digits, written from the textbook definitions. For any other graph (tensor ops,
random graphs) the gradient entry is checked against a fourth-order central difference of the
graph's exact forward values (`exact_values(..., precise=True)`, mpmath at 192 bits) along that
input, which uses no derivative rule at all. A difference is confirmed when the engine, called
directly, gives the survey's number and the hand-computed exact value agrees with the survey's
exact value to 1e-12 relative (or both are 0, or both are the same non-finite value).

Not a pytest-benchmark benchmark: it times nothing; it reads a survey run's JSON
(`benchmarks/accuracy_survey.py --out`) and prints one line per difference for docs/accuracy.md;
it calls other people's frameworks.

    python benchmarks/accuracy_handcheck.py out/survey-*.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mpmath
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.graphs.ir import Graph
from gradcheck.parity.exact import exact_values

mp = mpmath.mp
DIGITS = 60


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + mpmath.exp(-x))


# op -> (value, first derivatives, second derivatives (row by row)) as functions of the operands
# (and the exponent of pow_const), from the definitions.
TABLE: dict[str, tuple[Callable[..., Any], Callable[..., list[Any]], Callable[..., list[list[Any]]]]] = {
    "add": (lambda a, b: a + b, lambda a, b: [1, 1], lambda a, b: [[0, 0], [0, 0]]),
    "sub": (lambda a, b: a - b, lambda a, b: [1, -1], lambda a, b: [[0, 0], [0, 0]]),
    "mul": (lambda a, b: a * b, lambda a, b: [b, a], lambda a, b: [[0, 1], [1, 0]]),
    "div": (
        lambda a, b: a / b,
        lambda a, b: [1 / b, -a / b**2],
        lambda a, b: [[0, -1 / b**2], [-1 / b**2, 2 * a / b**3]],
    ),
    "neg": (lambda x: -x, lambda x: [-1], lambda x: [[0]]),
    "exp": (mpmath.exp, lambda x: [mpmath.exp(x)], lambda x: [[mpmath.exp(x)]]),
    "log": (mpmath.log, lambda x: [1 / x], lambda x: [[-1 / x**2]]),
    "sin": (mpmath.sin, lambda x: [mpmath.cos(x)], lambda x: [[-mpmath.sin(x)]]),
    "cos": (mpmath.cos, lambda x: [-mpmath.sin(x)], lambda x: [[-mpmath.cos(x)]]),
    "tanh": (
        mpmath.tanh,
        lambda x: [mpmath.sech(x) ** 2],
        lambda x: [[-2 * mpmath.tanh(x) * mpmath.sech(x) ** 2]],
    ),
    "sigmoid": (
        _sigmoid,
        lambda x: [mpmath.exp(-abs(x)) / (1 + mpmath.exp(-abs(x))) ** 2],
        lambda x: [[_sigmoid(x) * (1 - _sigmoid(x)) * (1 - 2 * _sigmoid(x))]],
    ),
    "sqrt": (mpmath.sqrt, lambda x: [1 / (2 * mpmath.sqrt(x))], lambda x: [[-1 / (4 * x * mpmath.sqrt(x))]]),
    "atan": (mpmath.atan, lambda x: [1 / (1 + x**2)], lambda x: [[-2 * x / (1 + x**2) ** 2]]),
    "atan2": (
        mpmath.atan2,
        lambda y, x: [x / (x**2 + y**2), -y / (x**2 + y**2)],
        lambda y, x: [
            [-2 * x * y / (x**2 + y**2) ** 2, (y**2 - x**2) / (x**2 + y**2) ** 2],
            [(y**2 - x**2) / (x**2 + y**2) ** 2, 2 * x * y / (x**2 + y**2) ** 2],
        ],
    ),
    "pow": (
        lambda a, b: a**b,
        lambda a, b: [b * a ** (b - 1), a**b * mpmath.log(a) if a != 0 else mpmath.mpf(0)],
        lambda a, b: [
            [b * (b - 1) * a ** (b - 2), a ** (b - 1) * (1 + b * mpmath.log(a)) if a != 0 else 0],
            [a ** (b - 1) * (1 + b * mpmath.log(a)) if a != 0 else 0, a**b * mpmath.log(a) ** 2 if a else 0],
        ],
    ),
}


def by_hand(
    op: str, args: list[float], attrs: dict[str, Any], cot: float, direction: list[float]
) -> dict[str, Any]:
    """The value, cotangent-weighted gradient and H·v of a one-op scalar graph, from `TABLE`."""
    with mpmath.workdps(DIGITS):
        xs = [mpmath.mpf(a) for a in args]
        if op == "pow_const":
            e = mpmath.mpf(attrs["exponent"])
            value = xs[0] ** e
            first = [e * xs[0] ** (e - 1)] if not (xs[0] == 0 and e == 0) else [mpmath.mpf(0)]
            second = [[e * (e - 1) * xs[0] ** (e - 2)]] if xs[0] != 0 or e >= 2 else [[mpmath.mpf(0)]]
        elif op in ("relu", "abs"):
            value = max(xs[0], 0) if op == "relu" else abs(xs[0])
            slope = (1 if xs[0] > 0 else 0) if op == "relu" else mpmath.sign(xs[0])
            first, second = [mpmath.mpf(slope)], [[mpmath.mpf(0)]]
        else:
            f, d1, d2 = TABLE[op]
            value, first, second = f(*xs), d1(*xs), d2(*xs)
        c = mpmath.mpf(cot)
        v = [mpmath.mpf(d) for d in direction]
        grads = [c * d for d in first]
        hvp = [c * sum(h * vj for h, vj in zip(row, v)) for row in second]
        return {"forward": [value], "gradient": grads, "hvp": hvp}


def by_differences(graph: Graph, cot: Sequence[Any], entry: int) -> Any:
    """The cotangent-weighted gradient entry `entry` by a fourth-order central difference of the
    graph's exact forward values along that input entry (steps 2^-24 of its size)."""
    point = [np.asarray(v, dtype=np.float64) for v in graph.input_values(0)]
    flat = [p.reshape(-1) for p in point]
    sizes = [max(p.size, 1) for p in point]
    which = int(np.searchsorted(np.cumsum(sizes), entry, side="right"))
    at = entry - int(np.sum(sizes[:which]))
    x = float(flat[which][at])
    h = 2.0 ** (math.floor(math.log2(abs(x))) - 24) if x != 0 else 2.0**-40
    weights = [
        mpmath.mpf(c) for c in np.concatenate([np.ravel(np.asarray(c, dtype=np.float64)) for c in cot])
    ]

    def weighted(step: float) -> Any:
        moved = [f.copy() for f in flat]
        moved[which][at] = x + step  # exactly representable: a multiple of h near x
        batch = [m.reshape(p.shape)[None] for m, p in zip(moved, point)]
        precise = exact_values(graph, batch, precise=True).precise
        return sum(w * v for w, v in zip(weights, precise.forward[:, 0]))

    with mpmath.workprec(192):
        f1, f_1, f2, f_2 = weighted(h), weighted(-h), weighted(2 * h), weighted(-2 * h)
        return (8 * (f1 - f_1) - (f2 - f_2)) / (12 * mpmath.mpf(h))


# --- the engines, called directly ----------------------------------------------------------------


def engine_value(
    label: str, dtype: str, graph: Graph, cot: list[Any], direction: list[Any] | None, part: str, entry: int
) -> float | None:
    """The entry as the framework computes it, called directly (one-op scalar graphs only)."""
    if len(graph.nodes) != 1 or graph.is_tensor:
        return None
    node = graph.nodes[0]
    op, attrs = node.op, node.attr
    args = [float(v) for v in graph.input_values(0)]
    if label == "torch":
        return _torch(op, attrs, args, cot[0], direction, part, entry, dtype)
    if label == "jax":
        return _jax(op, attrs, args, cot[0], direction, part, entry)
    return None


def _torch(
    op: str,
    attrs: dict[str, Any],
    args: list[float],
    cot: float,
    direction: Any,
    part: str,
    entry: int,
    dtype: str,
) -> float:
    import torch

    functions: dict[str, Callable[..., Any]] = {
        "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "neg": torch.neg,
        "exp": torch.exp, "log": torch.log, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
        "sigmoid": torch.sigmoid, "relu": torch.relu, "abs": torch.abs, "sqrt": torch.sqrt,
        "atan": torch.atan, "atan2": torch.atan2, "pow": torch.pow,
        "pow_const": lambda x: torch.pow(x, attrs["exponent"]),
    }  # fmt: skip
    kind = getattr(torch, dtype)
    xs = [torch.tensor(a, dtype=kind, requires_grad=True) for a in args]
    out = functions[op](*xs)
    if part == "forward":
        return float(out)
    grads = torch.autograd.grad(out, xs, torch.tensor(cot, dtype=kind), create_graph=part == "hvp")
    if part == "gradient":
        return float(grads[entry])
    inner = sum(g * d for g, d in zip(grads, direction))
    return float(torch.autograd.grad(inner, xs, allow_unused=True, materialize_grads=True)[entry])


def _jax(
    op: str, attrs: dict[str, Any], args: list[float], cot: float, direction: Any, part: str, entry: int
) -> float:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    functions: dict[str, Callable[..., Any]] = {
        "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide, "neg": jnp.negative,
        "exp": jnp.exp, "log": jnp.log, "sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh,
        "sigmoid": jax.nn.sigmoid, "relu": jax.nn.relu, "abs": jnp.abs, "sqrt": jnp.sqrt,
        "atan": jnp.arctan, "atan2": jnp.arctan2, "pow": jnp.power,
        "pow_const": lambda x: jnp.power(x, attrs["exponent"]),
    }  # fmt: skip
    f = functions[op]
    xs = [jnp.float64(a) for a in args]
    if part == "forward":
        return float(f(*xs))
    weighted = lambda *v: cot * f(*v)
    grad = jax.grad(weighted, argnums=tuple(range(len(xs))))
    if part == "gradient":
        return float(grad(*xs)[entry])
    tangent = jax.jvp(lambda *v: grad(*v), tuple(xs), tuple(jnp.float64(d) for d in direction))[1]
    return float(tangent[entry])


# --- the check ----------------------------------------------------------------------------------


def check(record: dict[str, Any]) -> dict[str, Any]:
    """One survey difference checked by hand: the engine's number again, the exact value again."""
    subject, kind, op, region, part = record["key"]
    label, dtype = subject.split()[:2]
    graph = Graph.from_dict(record["graph"])
    cot, direction, entry = record["cotangent"], record["direction"], record["entry"]
    hand: Any = None
    if kind == "scalar" and len(graph.nodes) == 1:
        values = by_hand(
            graph.nodes[0].op,
            [float(v) for v in graph.input_values(0)],
            graph.nodes[0].attr,
            cot[0],
            direction or [],
        )
        hand = values[part][entry] if part in values and entry < len(values[part]) else None
    elif part == "gradient":
        hand = by_differences(graph, cot, entry)
    direct = engine_value(label, dtype, graph, cot, direction, part, entry)
    exact = record["exact"]
    with mpmath.workdps(DIGITS):
        agrees = None
        if hand is not None:
            h = complex(hand) if isinstance(hand, mpmath.mpc) else hand
            if isinstance(h, complex) or not mpmath.isfinite(h):
                agrees = not math.isfinite(exact)
            elif not math.isfinite(exact):
                agrees = False
            else:
                agrees = bool(
                    abs(mpmath.mpf(exact) - h) <= mpmath.mpf(1e-12) * abs(h)
                    or (exact == 0 and abs(h) < 1e-300)
                )
    engine = record["engine"]
    same = (
        None
        if direct is None or engine is None
        else (direct == engine or (math.isnan(direct) and math.isnan(engine)))
    )
    return {
        "subject": subject,
        "op": op,
        "region": region,
        "part": part,
        "verdict": record.get("verdict"),
        "inputs": [np.asarray(v).tolist() for v in graph.input_values(0)],
        "attrs": graph.nodes[0].attr if len(graph.nodes) == 1 else {},
        "engine": engine,
        "engine_again": direct,
        "exact": exact,
        "by_hand": None if hand is None else mpmath.nstr(hand, 17),
        "exact_confirmed": agrees,
        "engine_confirmed": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("surveys", nargs="+")
    parser.add_argument("--out", default="out/accuracy-handcheck.json")
    args = parser.parse_args()
    records = [r for path in args.surveys for r in json.loads(Path(path).read_text())["differences"]]
    checked = []
    for record in records:
        try:
            found = check(record)
        except Exception as e:  # a case the hand check cannot take is listed as such
            found = {"key": record["key"], "error": f"{type(e).__name__}: {e}"}
        checked.append(found)
        print(json.dumps(found))
    Path(args.out).write_text(json.dumps(checked, indent=1))


if __name__ == "__main__":
    main()
