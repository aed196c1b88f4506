"""What a gradient check found, worded so a person can act on it: `GradcheckResult`, `GradcheckError`."""

from __future__ import annotations

from dataclasses import dataclass, field

from gradcheck.checker.kinks import Differentiability
from gradcheck.checker.tolerance import Tolerance


@dataclass(frozen=True)
class Mismatch:
    """One gradient entry outside the tolerance.

    `output` is None for the random-cotangent check (vᵀJ for a random v), where `out_index` is
    empty and the entry is a gradient entry of input `input`.
    """

    output: int | None
    out_index: tuple[int, ...]
    input: int
    in_index: tuple[int, ...]
    analytical: float
    numerical: float
    method: str  # how `numerical` was obtained: "central", "richardson" or "mpmath"
    tolerance: Tolerance
    allowed: float  # the bound |analytical - numerical| had to meet (tolerance at this entry's scale)
    kink: Differentiability | None = None
    one_sided: tuple[float, float] | None = None  # (left, right) derivatives at a kink at the point

    @property
    def abs_error(self) -> float:
        return abs(self.analytical - self.numerical)

    @property
    def rel_error(self) -> float:
        return self.abs_error / abs(self.numerical) if self.numerical != 0 else float("inf")

    @property
    def near_kink(self) -> bool:
        return self.kink is not None and not self.kink.smooth

    def describe(self) -> str:
        if self.output is None:
            where = f"vᵀJ for a random cotangent v, input {self.input}{_index(self.in_index)}"
        else:
            where = f"d output {self.output}{_index(self.out_index)} / d input {self.input}"
            where += _index(self.in_index)
        tol = self.tolerance
        rule = (
            f"Σ_r |v_r|·(atol {tol.atol:g}·max(1, |output r|) + rtol {tol.rtol:g}·|J_r|)"
            if self.output is None
            else f"atol {tol.atol:g}·max(1, |output|) + rtol {tol.rtol:g}·|numerical|"
        )
        lines = [
            f"{where}: analytical {self.analytical!r}, numerical {self.numerical!r} ({self.method})",
            f"    abs error {self.abs_error:.3e}, rel error {self.rel_error:.3e}; "
            f"allowed {self.allowed:.3e} ({rule})",
        ]
        if self.one_sided is not None:
            left, right = self.one_sided
            lines.append(
                f"    a kink at this point: left derivative {left:.6g}, right derivative {right:.6g}; the "
                "analytical slope lies outside them, so it is no derivative of either side"
            )
        elif self.kink is not None:
            lines.append(f"    {self.kink.describe()}")
        return "\n".join(lines)


def _index(index: tuple[int, ...]) -> str:
    return f"[{', '.join(map(str, index))}]" if index else ""


@dataclass(frozen=True)
class FastCheck:
    """The fast-mode comparison of the scalar vᵀJu: backward pass against one directional derivative."""

    analytical: float
    numerical: float
    tolerance: Tolerance
    allowed: float

    @property
    def passed(self) -> bool:
        a, n = self.analytical, self.numerical
        return abs(a - n) <= self.allowed or (a != a and n != n)

    def describe(self) -> str:
        verdict = "agree" if self.passed else "DISAGREE"
        error = abs(self.analytical - self.numerical)
        return (
            f"fast mode: vᵀJu analytical {self.analytical!r} vs numerical {self.numerical!r} "
            f"(abs error {error:.3e}, allowed {self.allowed:.3e}): {verdict}"
        )


@dataclass
class GradcheckResult:
    """The outcome of `gradcheck` / `gradgradcheck`; truthy when every check passed."""

    passed: bool
    check: str  # "gradcheck" or "gradgradcheck"
    mode: str  # "slow", "fast", or "fast, then slow" after a fast-mode failure
    tolerance: Tolerance
    mismatches: list[Mismatch] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fast: FastCheck | None = None
    reproduce: str = ""
    evaluations: int = 0
    failed_entries: int = 0  # all failing entries; `mismatches` keeps the first MAX_REPORTED

    def __bool__(self) -> bool:
        return self.passed

    @property
    def only_kinks(self) -> bool:
        """Failed only at entries near a kink (a slope between the one-sided derivatives of a kink
        at the point passes; these are the others)."""
        return bool(self.mismatches) and not self.problems and all(m.near_kink for m in self.mismatches)

    def report(self, max_entries: int = 10) -> str:
        if self.passed:
            tol = self.tolerance
            head = f"{self.check} passed ({self.mode} mode, atol {tol.atol:g}, rtol {tol.rtol:g})"
            return "\n".join([head, *self.notes])
        count = max(self.failed_entries, len(self.mismatches))
        head = f"{self.check} failed ({self.mode} mode)"
        if count:
            head += f": {count} gradient entr{'y' if count == 1 else 'ies'} outside the tolerance"
            if self.only_kinks:
                head += (
                    " — all of them near a kink: a slope at a kink must lie between the derivatives "
                    "from its two sides, and beside a kink it must be the derivative of its own side"
                )
        lines = [head]
        lines += [f"  - {p}" for p in self.problems]
        if self.fast is not None:
            lines.append("  " + self.fast.describe())
        shown = self.mismatches[:max_entries]
        for mismatch in shown:
            lines.append("  " + mismatch.describe().replace("\n", "\n  "))
        if count > len(shown):
            lines.append(f"  ... and {count - len(shown)} more")
        lines += [f"  note: {n}" for n in self.notes]
        if self.reproduce:
            lines.append("Reproduce with:\n" + self.reproduce)
        return "\n".join(lines)


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` / `gradgradcheck` on failure; `.result` holds the full `GradcheckResult`."""

    def __init__(self, result: GradcheckResult) -> None:
        super().__init__(result.report())
        self.result = result
