"""The registry's op surface, release by release: which ops and attribute variants each release of
the op registry added, so that an adapter meets only what it says it handles.

A *variant* is a form of an op that a later release added to an op that already existed:
`keepdim=True` on sum and mean, matmul with a 1-D operand or with batches of matrices. An adapter
written before it spells the op the old way and would fail on the new form for no fault of its
engine (an adapter that passes `dims` only returns the reduced shape where the graph expects
size-1 dims). So a variant reaches an adapter only when the adapter says it handles it: by
naming the registry release it was written for (`registry_release`, which brings that release's
variants) or by listing variants by name (`variants`). An adapter that says nothing gets release
1's surface, the registry before any variant. The built-in adapters say `LATEST`: every variant,
whatever a later registry adds.

Ops reach an adapter by name only (its `ops`): an op is never drawn for an adapter that does not
list it, so a release's new ops need no opt-in; `Release.ops` records which ops each release
added. The gate keeps a baseline to the surface it was recorded with (`campaign/regression_gate.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gradcheck.graphs.ir import Graph


@dataclass(frozen=True)
class Variant:
    """A form of `op` added by registry release `release`; `present(attrs)`: a node is of it."""

    name: str
    op: str
    release: int
    description: str
    present: Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Release:
    """A release of the registry's surface: its number, when, the ops and variants it added."""

    number: int
    date: str
    ops: tuple[str, ...]
    variants: tuple[str, ...] = ()


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _ranks(attrs: Mapping[str, Any]) -> tuple[int, ...]:
    return tuple(int(r) for r in attrs.get("ranks", (2, 2)))


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "sum.keepdim",
            "sum",
            2,
            "keepdim=True: the reduced dims stay as size 1",
            lambda a: bool(a.get("keepdim", False)),
        ),
        Variant(
            "mean.keepdim",
            "mean",
            2,
            "keepdim=True: the reduced dims stay as size 1",
            lambda a: bool(a.get("keepdim", False)),
        ),
        Variant(
            "matmul.vector",
            "matmul",
            2,
            "a 1-D operand (vector @ vector, matrix @ vector, vector @ matrix)",
            lambda a: 1 in _ranks(a),
        ),
        Variant(
            "matmul.batched",
            "matmul",
            2,
            "an operand of rank 3 (batches of matrices, batch dims broadcast)",
            lambda a: any(r > 2 for r in _ranks(a)),
        ),
    )
}

RELEASES: tuple[Release, ...] = (
    # the registry of 22 Nov 2026 (main 5c957e9): matmul of two matrices only; sum, mean, amax and
    # amin over one dim or several (a tuple of dims), without keepdim
    Release(
        1,
        "2026-11-22",
        _names(
            """add sub mul div pow pow_const neg relu tanh sigmoid exp log sin atan atan2 cos sqrt abs
            matmul sum mean amax amin clamp maximum minimum transpose reshape softmax log_softmax"""
        ),
    ),
    # 25 Nov 2026 (merges 3ac7762, 6f2f9ae, a28ac8d): nn ops, shape and indexing ops, max/min along
    # a dim, keepdim on sum and mean, matmul beyond matrices
    Release(
        2,
        "2026-11-25",
        _names(
            """max_dim min_dim index where expand permute squeeze unsqueeze flatten linear linear_no_bias
            linear_relu linear_relu_no_bias cross_entropy nll_loss mse_loss
            binary_cross_entropy_with_logits"""
        ),
        ("sum.keepdim", "mean.keepdim", "matmul.vector", "matmul.batched"),
    ),
)
BASE_RELEASE = RELEASES[0].number  # what an adapter that names no release gets
CURRENT = RELEASES[-1].number  # the newest release (a baseline records the one that wrote it)
LATEST = "latest"  # the built-in adapters' release: every variant there is, now and later


def release_variants(release: int | str) -> frozenset[str]:
    """Every variant of release `release` and the releases before it (`LATEST`: every one)."""
    if release == LATEST:
        return frozenset(VARIANTS)
    if not any(r.number == release for r in RELEASES):
        known = ", ".join(str(r.number) for r in RELEASES)
        raise ValueError(f"unknown registry release {release!r}; the releases are {known} or {LATEST!r}")
    return frozenset(v.name for v in VARIANTS.values() if v.release <= release)


def release_ops(release: int) -> frozenset[str]:
    """Every op of release `release` and the releases before it."""
    return frozenset(op for r in RELEASES if r.number <= release for op in r.ops)


def variants_of(op: str, attrs: Mapping[str, Any]) -> tuple[str, ...]:
    """The variants a node of `op` with `attrs` is of (none for the op's first form)."""
    return tuple(v.name for v in VARIANTS.values() if v.op == op and v.present(attrs))


def allows(variants: frozenset[str] | None, op: str, attrs: Mapping[str, Any]) -> bool:
    """Whether a node of `op` with `attrs` is inside a surface of `variants` (None: every one)."""
    if variants is None:
        return True
    return all(v.name in variants or v.op != op or not v.present(attrs) for v in VARIANTS.values())


def of_ops(variants: Iterable[str], ops: Iterable[str]) -> frozenset[str]:
    """The variants among `variants` that are forms of `ops` (unknown names dropped)."""
    ops = set(ops)
    return frozenset(v for v in variants if v in VARIANTS and VARIANTS[v].op in ops)


def graph_allowed(graph: Graph, variants: frozenset[str] | None) -> bool:
    """Whether every node of `graph` is inside a surface of `variants`."""
    return variants is None or all(allows(variants, n.op, n.attr) for n in graph.nodes)


def adapter_variants(adapter: Any) -> frozenset[str]:
    """The variants an adapter handles: its release's (`registry_release`; none named: release 1)
    and those it lists (`variants`). ValueError for an unknown release or variant name."""
    release = getattr(adapter, "registry_release", None)
    listed = frozenset(getattr(adapter, "variants", ()) or ())
    unknown = sorted(listed - set(VARIANTS))
    if unknown:
        raise ValueError(
            f"adapter {type(adapter).__name__} lists unknown variant(s) {unknown}; the registry's "
            f"variants are {sorted(VARIANTS)}"
        )
    try:
        return release_variants(BASE_RELEASE if release is None else release) | listed
    except ValueError as e:
        raise ValueError(f"adapter {type(adapter).__name__}: registry_release: {e}") from None


def describe(names: Iterable[str]) -> str:
    """Variants as a reader meets them: "sum.keepdim (keepdim=True: ...)"."""
    return "; ".join(f"{n} ({VARIANTS[n].description})" if n in VARIANTS else n for n in sorted(names))
