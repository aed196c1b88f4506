"""Adapters written for an older op registry, for the tests of the op surface
(`graphs.surface`).

`BeforeKeepdim` adapts minigrad's Tensor the way a user wrote it before `sum` and `mean` had
`keepdim`: it passes `dims` only, so the engine returns the reduced shape where a keepdim graph
expects size-1 dims. It names no registry release, so it gets release 1's surface and never meets
keepdim. `BeforeKeepdimClaimingRelease2` is the same adapter naming release 2: the failures the
surface spares the first. `KeepdimIgnored` follows every release, as a built-in adapter does,
with the same spelling: a gate baseline recorded before keepdim existed keeps passing on it.
`FewOpsOfBothReleases` is minigrad's Tensor adapter on a few ops of release 1 and of release 2,
every variant of them passed on: a correct engine whose campaigns are quick.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradcheck.engines.minigrad_tensor import MinigradTensor
from gradcheck.graphs.surface import LATEST


class BeforeKeepdim(MinigradTensor):
    name = "before-keepdim"
    ops = frozenset({"add", "mul", "tanh", "sum", "mean"})
    registry_release = None  # written before releases were named: release 1's forms

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        if op in ("sum", "mean"):
            return getattr(args[0], op)(dim=tuple(attrs["dims"]))  # keepdim unknown when written
        return super().apply(op, args, attrs)


class BeforeKeepdimClaimingRelease2(BeforeKeepdim):
    name = "before-keepdim-claiming-release-2"
    registry_release = 2


class KeepdimIgnored(BeforeKeepdim):
    name = "keepdim-ignored"
    registry_release = LATEST


class FewOpsOfBothReleases(MinigradTensor):
    name = "few-ops-of-both-releases"
    # release 1's (sum and mean with keepdim, matmul beyond matrices: release 2's variants) and
    # release 2's (max_dim)
    ops = frozenset({"add", "mul", "tanh", "sum", "mean", "matmul", "max_dim"})
    registry_release = LATEST
