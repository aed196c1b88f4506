"""`gradcheck` and `gradgradcheck`: minigrad's analytical gradients against numerical ones.

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

import minigrad
from gradcheck.arguments import check_options
from gradcheck.checker import kinks, oracle
from gradcheck.checker.failure import FastCheck, GradcheckError, GradcheckResult, Mismatch, literal
from gradcheck.checker.numerical import (
    DEFAULT_EPS,
    FlatFunction,
    is_node,
    is_value,
    jacobian_column,
    make_tensor,
    stencil_column,
)
from gradcheck.checker.tolerance import Tolerance, policy_for

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
) -> GradcheckResult:
    """Check minigrad's gradients of `f(*inputs)` against numerical derivatives.

    `inputs` are Values or Tensors (floats become Values, numpy arrays become Tensors). Without
    atol/rtol the tolerance is `tolerance.policy_for` the ops recorded in f's graph. Returns a
    `GradcheckResult`; raises `GradcheckError` on failure when `raise_exception`.
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
    return _Checker(f, inputs, eps, atol, rtol, seed, nondet_tol, check_kinks, "gradcheck").run(
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
) -> GradcheckResult:
    """Check second derivatives with `gradcheck`'s machinery.

    The first derivative vᵀJ, built by `minigrad.grad(..., create_graph=True)`, is gradchecked as
    a function of the inputs and of the cotangent v (random, fixed by `seed`): its analytical
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
    leaves = _leaves(inputs)
    with minigrad.enable_grad():
        outputs = _output_nodes(f(*leaves))
    rng = np.random.default_rng(seed + 1)
    cotangents = [_cotangent_leaf(out, rng) for out in outputs]
    count = len(leaves)

    def first_derivative(*args: Any) -> tuple[Any, ...]:
        xs, vs = list(args[:count]), list(args[count:])
        with minigrad.enable_grad():
            outs = _output_nodes(f(*xs))
            return minigrad.grad(outs, xs, grad_outputs=vs, create_graph=True, materialize_grads=True)

    checker = _Checker(
        first_derivative, leaves + cotangents, eps, atol, rtol, seed, nondet_tol, check_kinks, "gradgradcheck"
    )
    checker.original = (f, leaves)
    return checker.run(fast_mode, raise_exception)


# --- preparing inputs and outputs ---------------------------------------------------------------


def _leaves(inputs: Sequence[Any]) -> list[Any]:
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence) or is_node(inputs):
        raise TypeError(f"gradcheck: inputs must be a list or tuple, got {type(inputs).__name__}")
    if len(inputs) == 0:
        raise ValueError("gradcheck: no inputs to check; pass at least one Value or Tensor")
    leaves: list[Any] = []
    for j, obj in enumerate(inputs):
        if is_node(obj):
            if not is_value(obj) and not getattr(obj, "requires_grad", True):
                raise ValueError(
                    f"gradcheck: input {j} is a Tensor with requires_grad=False; every input is "
                    "differentiated, so create it with requires_grad=True"
                )
            for k, earlier in enumerate(leaves):
                if earlier is obj:
                    raise ValueError(
                        f"gradcheck: inputs {k} and {j} are the same object; each input is perturbed on its "
                        "own, so pass distinct Values/Tensors (or use it twice inside f)"
                    )
            leaves.append(obj)
        elif isinstance(obj, (int, float, np.floating, np.integer)) and not isinstance(obj, bool):
            leaves.append(minigrad.Value(float(obj)))
        elif isinstance(obj, np.ndarray):
            tensor_type = getattr(minigrad, "Tensor", None)
            if tensor_type is None:
                raise TypeError(f"gradcheck: input {j} is a numpy array but minigrad has no Tensor yet")
            leaves.append(make_tensor(tensor_type, obj.astype(np.float64), requires_grad=True))
        else:
            raise TypeError(
                f"gradcheck: input {j} is a {type(obj).__name__}; expected a minigrad Value or Tensor "
                "(or a float / numpy array to wrap)"
            )
    return leaves


def _output_nodes(out: Any) -> list[Any]:
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    for k, item in enumerate(items):
        if not is_node(item):
            raise TypeError(
                f"gradcheck: output {k} is a {type(item).__name__} ({item!r}), not a minigrad Value or "
                "Tensor; return only outputs computed from the inputs"
            )
    return items


def _cotangent_leaf(out: Any, rng: np.random.Generator) -> Any:
    if is_value(out):
        return type(out)(float(rng.standard_normal()))
    data = np.asarray(out.data)
    return make_tensor(type(out), rng.standard_normal(data.shape).astype(data.dtype), requires_grad=True)


def _snapshot(obj: Any) -> tuple[np.ndarray, Any]:
    grad = getattr(obj, "grad", None)
    grad_copy = None if grad is None else np.array(grad.data if is_node(grad) else grad, dtype=np.float64)
    return np.array(obj.data, dtype=np.float64, copy=True), grad_copy


def _op_names(outputs: list[Any]) -> set[str]:
    names = set()
    for node in minigrad.autograd.topological_order(outputs):
        name = getattr(node, "_op", None) or getattr(node, "grad_fn", None)
        if name:
            names.add(str(name))
    return names


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
    ) -> None:
        self.f = f
        self.leaves = _leaves(inputs)
        self.eps = eps
        self.seed = seed
        self.nondet_tol = nondet_tol
        self.check_kinks = check_kinks
        self.name = name
        self.original: tuple[Callable[..., Any], list[Any]] | None = None
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.before = [_snapshot(leaf) for leaf in self.leaves]
        with minigrad.enable_grad():
            self.outputs = _output_nodes(f(*self.leaves))
        self.func = FlatFunction(f, self.leaves)
        self.ops = _op_names(self.outputs)
        # atol is per unit of output magnitude: differences of F carry rounding of size eps·|F|
        fx = np.nan_to_num(np.abs(self.func.fx), nan=1.0, posinf=1.0)
        self.row_scale = np.maximum(1.0, fx)
        if atol is None and rtol is None:
            self.tolerance = policy_for(self.ops)
        else:
            default = policy_for(self.ops)
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
            data = leaf.data
            if isinstance(data, np.ndarray) and data.dtype != np.float64 and not self.explicit:
                raise ValueError(
                    f"{self.name}: input {j} is {data.dtype}; the default tolerances are for float64 "
                    "(float32 gradients carry ~1e-7 relative rounding). Use float64 inputs, or pass atol and "
                    "rtol explicitly (e.g. atol=1e-4, rtol=1e-3 for float32)"
                )

    # --- analytical side ------------------------------------------------------------------------

    def vjp(self, v: np.ndarray) -> np.ndarray:
        """vᵀJ from one minigrad backward pass, flattened; checks gradient shapes and dtypes once."""
        cotangents = []
        for k, out in enumerate(self.outputs):
            part = v[self.func.output_offsets[k] : self.func.output_offsets[k + 1]]
            if is_value(out):
                cotangents.append(float(part[0]))
            else:
                data = np.asarray(out.data)
                cotangents.append(part.reshape(data.shape).astype(data.dtype))
        grads = minigrad.grad(self.outputs, self.leaves, grad_outputs=cotangents, allow_unused=True)
        flat = []
        for j, (leaf, g) in enumerate(zip(self.leaves, grads)):
            if g is None:
                flat.append(np.zeros(self.func.slots[j].size))
                continue
            if not self._shape_checked:
                self._check_grad_type(j, leaf, g)
            flat.append(np.asarray(g.data if is_node(g) else g, dtype=np.float64).ravel())
        self._shape_checked = True
        return np.concatenate(flat) if flat else np.zeros(0)

    def _check_grad_type(self, j: int, leaf: Any, g: Any) -> None:
        if is_value(leaf):
            if not isinstance(g, float):
                self.problems.append(
                    f"gradient of input {j} is a {type(g).__name__}, expected a float like the Value's data"
                )
            return
        got = np.asarray(g.data if is_node(g) else g)
        want = np.asarray(leaf.data)
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
        scalar = all(s.kind in ("float", "value") for s in self.func.slots)
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
            now_data, now_grad = _snapshot(leaf)
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
        self.failed_entries = int(failing.sum())
        mismatches = []
        kink_by_column: dict[int, kinks.Differentiability | None] = {}
        for r, i in list(zip(*np.nonzero(failing)))[:MAX_REPORTED]:
            k, out_index = func.locate_output(int(r))
            j, in_index = func.locate_input(int(i))
            a, n = float(analytical[r, i]), float(numerical[r, i])
            kink = self._kink(int(i), kink_by_column)
            allowed = float(tol.allowed(n, scale[r]))
            mismatches.append(
                Mismatch(k, out_index, j, in_index, a, n, str(methods[r, i]), tol, allowed, kink)
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
        kinds = {type(leaf).__name__ for leaf in leaves}
        lines = [
            "    import numpy as np",
            f"    from minigrad import {', '.join(sorted(kinds))}",
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
        inputs = ", ".join(literal(leaf) for leaf in leaves)
        tol = self.tolerance
        options = f"atol={tol.atol!r}, rtol={tol.rtol!r}, seed={self.seed}"
        lines.append(f"    {call}(f, [{inputs}], {options})")
        entry = next((m for m in mismatches if m.output is not None), None)
        if (
            entry is not None
            and self.original is None
            and len(self.leaves) > 1
            and self.single_input_fails(entry.input)
        ):
            j = entry.input
            args = ", ".join("x" if k == j else literal(leaf) for k, leaf in enumerate(self.leaves))
            lines.append(f"    # smallest: input {j} alone (the others held fixed) fails the same way")
            lines.append(f"    {call}(lambda x: f({args}), [{literal(self.leaves[j])}], {options})")
        return "\n".join(lines)

    def single_input_fails(self, j: int) -> bool:
        """Whether checking input j alone, the other inputs held fixed, fails too (so it reproduces)."""
        leaf = self.leaves[j]
        fresh = (
            type(leaf)(float(leaf.data))
            if is_value(leaf)
            else make_tensor(type(leaf), np.array(leaf.data, copy=True), requires_grad=True)
        )
        others = list(self.leaves)

        def alone(x: Any) -> Any:
            args = list(others)
            args[j] = x
            return self.f(*args)

        tol = self.tolerance
        try:
            checker = _Checker(
                alone, [fresh], self.eps, tol.atol, tol.rtol, self.seed, self.nondet_tol, False, self.name
            )
            return not checker.run(fast_mode=False, raise_exception=False)
        except Exception:
            return False
