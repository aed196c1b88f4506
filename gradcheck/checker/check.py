"""`gradcheck` and `gradgradcheck`: an engine's analytical gradients against numerical ones.

The engine is reached only through its adapter (`gradcheck.engines`): minigrad's Values and
Tensors by default, torch tensors or any other engine with an adapter alike.

Slow mode compares every Jacobian entry (output k, input j): rows from one backward pass per
output element, columns from finite differences. The columns are measured in stages, each only
for entries no earlier stage confirmed: a fourth-order stencil, the plain central difference with
step `eps`, Richardson extrapolation, and mpmath when the function runs on `MPValue`s. So the
default tolerance can be ~1e-10 without false alarms at about 4n evaluations. One more backward
pass with a random cotangent is compared with vᵀ·J, so a rule that ignores its incoming gradient
cannot pass by luck. Failing entries are probed for kinks. Fast mode compares the single number
vᵀJu (one backward pass, one Richardson directional derivative: ~15 evaluations whatever n) and
reruns slow mode on failure to name the wrong entries.

Also checked, as torch does: backward twice gives identical gradients (reentrancy), a zero
cotangent gives zero gradients, each gradient has its input's shape and dtype, and the inputs
(data and `.grad`) are left unmodified.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcheck.checker import kinks, oracle
from gradcheck.checker.failure import FastCheck, GradcheckError, GradcheckResult, Mismatch
from gradcheck.checker.flat import FlatFunction
from gradcheck.checker.inputs import cotangent_leaf, leaves_of, output_nodes, snapshot
from gradcheck.checker.numerical import DEFAULT_EPS, jacobian_column, stencil_column
from gradcheck.checker.options import check_options
from gradcheck.checker.tolerance import DEFAULT, Tolerance, policy_for
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.loading import BUILTIN_ENGINES, load_engine

MAX_REPORTED = 20
#: mpmath re-measures failing entries only for scalar functions of at most this many inputs.
MPMATH_MAX_INPUTS = 64


def gradcheck(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    eps: float = DEFAULT_EPS,
    atol: float | None = None,
    rtol: float | None = None,
    fast_mode: bool = False,
    raise_exception: bool = True,
    seed: int = 0,
    nondet_tol: float = 0.0,
    check_kinks: bool = True,
    engine: str | EngineAdapter = "minigrad",
) -> GradcheckResult:
    """Check an engine's gradients of `f(*inputs)` against numerical derivatives.

    `inputs` are the engine's values (minigrad: Values or Tensors; floats become Values, numpy
    arrays Tensors). `engine` is an adapter or `load_engine` name. Without atol/rtol the tolerance
    is `tolerance.policy_for` the ops recorded in f's graph. Returns a `GradcheckResult`; raises
    `GradcheckError` on failure when `raise_exception`.
    """
    check_options(
        "gradcheck",
        f,
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        seed=seed,
        flags={"fast_mode": fast_mode, "raise_exception": raise_exception, "check_kinks": check_kinks},
    )
    adapter = load_engine(engine)
    return _Checker(f, inputs, eps, atol, rtol, seed, nondet_tol, check_kinks, "gradcheck", adapter).run(
        fast_mode, raise_exception
    )


def gradgradcheck(
    f: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    eps: float = DEFAULT_EPS,
    atol: float | None = None,
    rtol: float | None = None,
    fast_mode: bool = False,
    raise_exception: bool = True,
    seed: int = 0,
    nondet_tol: float = 0.0,
    check_kinks: bool = True,
    engine: str | EngineAdapter = "minigrad",
) -> GradcheckResult:
    """Check second derivatives with `gradcheck`'s machinery.

    The first derivative vᵀJ, built by the engine's `grad(..., create_graph=True)`, is gradchecked
    as a function of the inputs and of the cotangent v (random, fixed by `seed`): its analytical
    gradient comes from backward through that graph, its numerical one from differences of it.
    """
    check_options(
        "gradgradcheck",
        f,
        eps=eps,
        atol=atol,
        rtol=rtol,
        nondet_tol=nondet_tol,
        seed=seed,
        flags={"fast_mode": fast_mode, "raise_exception": raise_exception, "check_kinks": check_kinks},
    )
    adapter = load_engine(engine)
    leaves = leaves_of(inputs, adapter)
    with adapter.enable_grad():
        outputs = output_nodes(f(*leaves), adapter)
    rng = np.random.default_rng(seed + 1)
    cotangents = [cotangent_leaf(out, rng, adapter) for out in outputs]
    count = len(leaves)

    def first_derivative(*args: Any) -> list[Any]:
        xs, vs = list(args[:count]), list(args[count:])
        with adapter.enable_grad():
            outs = output_nodes(f(*xs), adapter)
            return adapter.grad(outs, xs, vs, create_graph=True)

    checker = _Checker(
        first_derivative,
        leaves + cotangents,
        eps,
        atol,
        rtol,
        seed,
        nondet_tol,
        check_kinks,
        "gradgradcheck",
        adapter,
    )
    checker.original = (f, leaves)
    return checker.run(fast_mode, raise_exception)


# --- the checker ------------------------------------------------------------------------------


class _Checker:
    """One check of one function at one point: holds the graph, the numerics and the findings."""

    def __init__(
        self,
        f: Callable[..., Any],
        inputs: Sequence[Any],
        eps: float,
        atol: float | None,
        rtol: float | None,
        seed: int,
        nondet_tol: float,
        check_kinks: bool,
        name: str,
        engine: EngineAdapter,
    ) -> None:
        self.f = f
        self.engine = engine
        self.leaves = leaves_of(inputs, engine)
        self.eps = eps
        self.seed = seed
        self.nondet_tol = nondet_tol
        self.check_kinks = check_kinks
        self.name = name
        self.original: tuple[Callable[..., Any], list[Any]] | None = None
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.before = [snapshot(leaf, engine) for leaf in self.leaves]
        with engine.enable_grad():
            self.outputs = output_nodes(f(*self.leaves), engine)
        self.func = FlatFunction(f, self.leaves, engine)
        self.ops = engine.op_names(self.outputs)
        # atol is per unit of output magnitude: differences of F carry rounding of size eps·|F|
        fx = np.nan_to_num(np.abs(self.func.fx), nan=1.0, posinf=1.0)
        self.row_scale = np.maximum(1.0, fx)
        default = DEFAULT if self.ops is None else policy_for(self.ops)
        if atol is None and rtol is None:
            self.tolerance = default
        else:
            self.tolerance = Tolerance(
                default.atol if atol is None else atol, default.rtol if rtol is None else rtol
            )
        self.explicit = atol is not None or rtol is not None
        self._check_float64()
        self.rng = np.random.default_rng(seed)
        self._shape_checked = False
        self._oracle_generic: bool | None = None
        self.failed_entries = 0

    def _check_float64(self) -> None:
        for j, leaf in enumerate(self.leaves):
            data = self.engine.value(leaf)
            if isinstance(data, np.ndarray) and data.dtype != np.float64 and not self.explicit:
                raise ValueError(
                    f"{self.name}: input {j} is {data.dtype}; the default tolerances are for float64 "
                    "(float32 gradients carry ~1e-7 relative rounding). Use float64 inputs, or pass atol and "
                    "rtol explicitly (e.g. atol=1e-4, rtol=1e-3 for float32)"
                )

    # --- analytical side ------------------------------------------------------------------------

    def vjp(self, v: np.ndarray) -> np.ndarray:
        """vᵀJ from one backward pass of the engine, flattened; checks gradient shapes and dtypes once."""
        cotangents = []
        for k, out in enumerate(self.outputs):
            part = v[self.func.output_offsets[k] : self.func.output_offsets[k + 1]]
            if self.engine.is_scalar(out):
                cotangents.append(float(part[0]))
            else:
                data = np.asarray(self.engine.value(out))
                cotangents.append(part.reshape(data.shape).astype(data.dtype))
        grads = self.engine.grad(self.outputs, self.leaves, cotangents)
        flat = []
        for j, (leaf, g) in enumerate(zip(self.leaves, grads)):
            if g is None:
                flat.append(np.zeros(self.func.slots[j].size))
                continue
            if not self._shape_checked:
                self._check_grad_type(j, leaf, g)
            flat.append(np.asarray(self._plain(g), dtype=np.float64).ravel())
        self._shape_checked = True
        return np.concatenate(flat) if flat else np.zeros(0)

    def _plain(self, x: Any) -> Any:
        return self.engine.value(x) if self.engine.is_node(x) else x

    def _check_grad_type(self, j: int, leaf: Any, g: Any) -> None:
        if self.engine.is_scalar(leaf):
            if not isinstance(g, float):
                self.problems.append(
                    f"gradient of input {j} is a {type(g).__name__}, expected a float like the Value's data"
                )
            return
        got = np.asarray(self._plain(g))
        want = np.asarray(self.engine.value(leaf))
        if got.shape != want.shape or got.dtype != want.dtype:
            self.problems.append(
                f"gradient of input {j} has shape {got.shape} and dtype {got.dtype}; the input has shape "
                f"{want.shape} and dtype {want.dtype}"
            )

    def analytical_jacobian(self) -> np.ndarray:
        rows = np.empty((self.func.m, self.func.n))
        for r in range(self.func.m):
            unit = np.zeros(self.func.m)
            unit[r] = 1.0
            rows[r] = self.vjp(unit)
        return rows

    # --- numerical side -------------------------------------------------------------------------

    def numerical_column(self, i: int, analytical: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Column i of the numerical Jacobian, measured more carefully only where it disagrees.

        Stages, each run only for entries that no earlier stage confirmed: the fourth-order
        stencil (4 evaluations, ~1e-12); the plain central difference with the short step `eps`
        (2 evaluations: near, not at, a kink it may be the only one that does not straddle it);
        Richardson extrapolation (at most 16 evaluations); and mpmath when f is generic over
        scalars (runs on `MPValue`s) and small enough, so a reported mismatch is against the exact
        derivative. Each stage is a genuine estimate of the derivative, so an entry passes as soon
        as one agrees; a failing entry reports the most accurate stage's value.
        """
        accepts = lambda estimate: self.tolerance.accepts(analytical, estimate, self.row_scale)
        value = stencil_column(self.func, i)
        methods = ["fourth-order"] * len(value)
        bad = ~accepts(value)
        if np.any(bad):
            central = jacobian_column(self.func, i, self.eps)
            confirmed = bad & accepts(central)
            value[confirmed] = central[confirmed]
            self._label(methods, confirmed, "central")
            bad &= ~confirmed
        if np.any(bad):
            richardson = oracle.richardson_column(self.func, i)
            value[bad] = richardson.value[bad]
            self._label(methods, bad, "richardson")
            bad &= ~accepts(richardson.value)
            if np.any(bad):
                exact = self._mpmath_entries(i, bad, richardson)
                if exact is not None:
                    value[bad] = exact[bad]
                    self._label(methods, bad, "mpmath")
        return value, methods

    @staticmethod
    def _label(methods: list[str], where: np.ndarray, name: str) -> None:
        for r in np.nonzero(where)[0]:
            methods[r] = name

    def _mpmath_entries(self, i: int, rows: np.ndarray, richardson: oracle.Estimate) -> np.ndarray | None:
        """Column i's entries in `rows` by mpmath, or None when f is not generic over scalars."""
        scalar = all(s.scalar for s in self.func.slots)
        if not scalar or self._oracle_generic is False or self.func.n > MPMATH_MAX_INPUTS:
            return None
        exact = np.full(self.func.m, np.nan)
        for r in np.nonzero(rows)[0]:
            unit = np.zeros(self.func.m)
            unit[r] = 1.0
            gradient = oracle.mpmath_gradient(self.f, self.func.x, unit, [i])
            if gradient is None:
                self._oracle_generic = False
                return None
            exact[r] = gradient[i]
        if self._oracle_generic is None:
            # a function that drops to float inside disagrees with Richardson: never trust it again
            slack = 1e3 * richardson.error[rows] + 1e-9 * (1.0 + np.abs(exact[rows]))
            self._oracle_generic = bool(np.all(np.abs(exact[rows] - richardson.value[rows]) <= slack))
        return exact if self._oracle_generic else None

    # --- the checks -------------------------------------------------------------------------------

    def run(self, fast_mode: bool, raise_exception: bool) -> GradcheckResult:
        if not np.all(np.isfinite(self.func.fx)):
            self.notes.append(
                "the function's value is not finite here; gradients there are conventions, not derivatives"
            )
        self.check_backward_laws()
        fast = None
        mode = "slow"
        mismatches: list[Mismatch] = []
        if fast_mode:
            fast = self.fast_check()
            mode = "fast"
            if not fast.passed:
                mode = "fast, then slow"
                mismatches = self.slow_check()
                if not mismatches and not self.problems:
                    self.notes.append(
                        "fast mode disagreed but every entry passed in slow mode: the error is spread thinly "
                        "over many entries, or the function is not smooth along the random direction"
                    )
        else:
            mismatches = self.slow_check()
        self.check_inputs_unmodified()
        passed = not mismatches and not self.problems and (fast is None or fast.passed or mode != "fast")
        result = GradcheckResult(
            passed=passed,
            check=self.name,
            mode=mode,
            tolerance=self.tolerance,
            mismatches=mismatches,
            problems=self.problems,
            notes=self.notes,
            fast=fast,
            reproduce="" if passed else self.reproducer(mismatches),
            evaluations=self.func.evaluations,
            failed_entries=max(self.failed_entries, len(mismatches)),
        )
        if not passed and raise_exception:
            raise GradcheckError(result)
        return result

    def check_backward_laws(self) -> None:
        v = self.rng.standard_normal(self.func.m)
        first, second = self.vjp(v), self.vjp(v)
        with np.errstate(invalid="ignore"):
            differ = np.abs(first - second)
        same = (first == second) | (differ <= self.nondet_tol) | (np.isnan(first) & np.isnan(second))
        if not np.all(same):
            worst = int(np.argmax(~same))
            j, index = self.func.locate_input(worst)
            self.problems.append(
                "backward is not reentrant: two backward passes with the same cotangent gave "
                f"{float(first[worst])!r} and {float(second[worst])!r} for input {j}"
                f"{list(index) if index else ''} (nondet_tol {self.nondet_tol})"
            )
        zero = self.vjp(np.zeros(self.func.m))
        # 0 · inf is NaN by IEEE rules: excuse NaN where the gradient itself is not finite
        if np.any((zero != 0) & ~(np.isnan(zero) & ~np.isfinite(first))):
            worst = int(np.argmax(np.abs(np.nan_to_num(zero, nan=np.inf))))
            j, index = self.func.locate_input(worst)
            self.problems.append(
                f"a zero cotangent gave a non-zero gradient {float(zero[worst])!r} for input {j}"
                f"{list(index) if index else ''}"
            )

    def check_inputs_unmodified(self) -> None:
        for j, (leaf, (data, grad)) in enumerate(zip(self.leaves, self.before)):
            now_data, now_grad = snapshot(leaf, self.engine)
            if not np.array_equal(now_data, data, equal_nan=True):
                self.problems.append(
                    f"input {j} was modified: its data changed from {data!r} to {now_data!r}"
                )
            if (grad is None) != (now_grad is None) or (
                grad is not None and not np.array_equal(grad, now_grad, equal_nan=True)
            ):
                self.problems.append(
                    f"input {j}'s .grad was modified by the check (from {grad!r} to {now_grad!r})"
                )

    def slow_check(self) -> list[Mismatch]:
        func, tol, scale = self.func, self.tolerance, self.row_scale
        analytical = self.analytical_jacobian()
        numerical = np.empty((func.m, func.n))
        methods = np.full((func.m, func.n), "central", dtype=object)
        for i in range(func.n):
            numerical[:, i], methods[:, i] = self.numerical_column(i, analytical[:, i])
        failing = ~tol.accepts(analytical, numerical, scale[:, None])
        kink_by_column: dict[int, kinks.Differentiability | None] = {}
        if self.check_kinks:  # a valid slope at a kink passes (with a note); the others stay failing
            verdict = lambda i: self._kink(i, kink_by_column)
            sides, notes = kinks.judge_kinks(func, analytical, numerical, failing, tol.allowed, verdict)
            self.notes += notes
        else:
            sides = {}
        self.failed_entries = int(failing.sum())
        mismatches = []
        for r, i in list(zip(*np.nonzero(failing)))[:MAX_REPORTED]:
            k, out_index = func.locate_output(int(r))
            j, in_index = func.locate_input(int(i))
            a, n = float(analytical[r, i]), float(numerical[r, i])
            kink = self._kink(int(i), kink_by_column)
            allowed = float(tol.allowed(n, scale[r]))
            side = sides.get(int(i))
            pair = None if side is None else (float(side.left[r]), float(side.right[r]))
            mismatches.append(
                Mismatch(k, out_index, j, in_index, a, n, str(methods[r, i]), tol, allowed, kink, pair)
            )
        if not mismatches:
            mismatches = self.random_cotangent_check(numerical)
        return mismatches

    def random_cotangent_check(self, numerical: np.ndarray) -> list[Mismatch]:
        """vᵀJ from one backward pass with a random v, against vᵀ·(numerical J).

        Each entry may be off by the sum of its terms' allowances, Σ_r |v_r|·allowed(J_ri).
        """
        v = self.rng.standard_normal(self.func.m)
        analytical = self.vjp(v)
        expected = v @ numerical
        allowed = np.abs(v) @ self.tolerance.allowed(numerical, self.row_scale[:, None])
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(analytical - expected) <= allowed) | (np.isnan(analytical) & np.isnan(expected)))
        self.failed_entries = int(bad.sum())
        mismatches = []
        for i in np.nonzero(bad)[0][:MAX_REPORTED]:
            j, in_index = self.func.locate_input(int(i))
            a, n = float(analytical[i]), float(expected[i])
            mismatches.append(
                Mismatch(None, (), j, in_index, a, n, "vᵀ·numerical J", self.tolerance, float(allowed[i]))
            )
        if mismatches:
            self.notes.append(
                "every Jacobian entry passed with unit cotangents but a random cotangent v = "
                f"{np.array2string(v, precision=6)} did not: "
                "a derivative rule mishandles its incoming gradient"
            )
        return mismatches

    def fast_check(self) -> FastCheck:
        u = self.rng.standard_normal(self.func.n)
        v = self.rng.standard_normal(self.func.m)
        if u.size:
            u /= np.linalg.norm(u)
        if v.size:
            v /= np.linalg.norm(v)
        analytical = float(self.vjp(v) @ u)
        numerical = float(v @ oracle.richardson_directional(self.func, u).value)
        allowed = float(self.tolerance.allowed(numerical, float(np.abs(v) @ self.row_scale)))
        return FastCheck(analytical, numerical, self.tolerance, allowed)

    def _kink(
        self, i: int, cache: dict[int, kinks.Differentiability | None]
    ) -> kinks.Differentiability | None:
        if not self.check_kinks:
            return None
        if i not in cache:
            cache[i] = kinks.probe(self.func, [i])
        return cache[i]

    # --- reporting --------------------------------------------------------------------------------

    def reproducer(self, mismatches: list[Mismatch]) -> str:
        f, leaves = self.original if self.original is not None else (self.f, self.leaves)
        call = "gradgradcheck" if self.original is not None else "gradcheck"
        lines = [
            "    import numpy as np",
            *(f"    {line}" for line in self.engine.source_imports(leaves)),
            f"    from gradcheck import {call}",
        ]
        module = getattr(f, "__module__", None)
        name = getattr(f, "__qualname__", "")
        if module and name and "<" not in name:
            if "." in name:
                lines.append(f"    from {module} import {name.split('.')[0]}")
                lines.append(f"    f = {name}")
            else:
                lines.append(f"    from {module} import {name} as f")
        else:
            lines.append(f"    f = ...  # {module}.{name}")
            with contextlib.suppress(OSError, TypeError):
                lines.append("    # defined as: " + inspect.getsource(f).strip().splitlines()[0])
        inputs = ", ".join(self.engine.source(leaf) for leaf in leaves)
        tol = self.tolerance
        options = f"atol={tol.atol!r}, rtol={tol.rtol!r}, seed={self.seed}{self._engine_option()}"
        lines.append(f"    {call}(f, [{inputs}], {options})")
        entry = next((m for m in mismatches if m.output is not None), None)
        if (
            entry is not None
            and self.original is None
            and len(self.leaves) > 1
            and self.single_input_fails(entry.input)
        ):
            j = entry.input
            source = self.engine.source
            args = ", ".join("x" if k == j else source(leaf) for k, leaf in enumerate(self.leaves))
            lines.append(f"    # smallest: input {j} alone (the others held fixed) fails the same way")
            lines.append(f"    {call}(lambda x: f({args}), [{source(self.leaves[j])}], {options})")
        return "\n".join(lines)

    def _engine_option(self) -> str:
        """`, engine=...` naming the engine as it was loaded (else its adapter class), unless it is
        the default (minigrad)."""
        cls = type(self.engine)
        if f"{cls.__module__}:{cls.__qualname__}" == BUILTIN_ENGINES["minigrad"]:
            return ""
        return f", engine={self.engine.spec or cls.__module__ + ':' + cls.__qualname__!r}"

    def single_input_fails(self, j: int) -> bool:
        """Whether checking input j alone, the other inputs held fixed, fails too (so it reproduces)."""
        leaf = self.leaves[j]
        fresh = self.engine.like(leaf, np.array(self.engine.value(leaf), copy=True), requires_grad=True)
        others = list(self.leaves)

        def alone(x: Any) -> Any:
            args = list(others)
            args[j] = x
            return self.f(*args)

        tol = self.tolerance
        try:
            checker = _Checker(
                alone,
                [fresh],
                self.eps,
                tol.atol,
                tol.rtol,
                self.seed,
                self.nondet_tol,
                False,
                self.name,
                self.engine,
            )
            return not checker.run(fast_mode=False, raise_exception=False)
        except Exception:
            return False
