"""PyTorch as an engine: for `gradcheck`/`gradgradcheck` on functions of torch tensors, and for
graphs (torch against itself, a check of the harness). The harness's only import of torch."""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.minigrad_names import registry_name
from gradcheck.graphs.ir import Graph
from gradcheck.graphs.registry import REGISTRY, TENSOR_OPS
from gradcheck.graphs.spellings import Spelling
from gradcheck.graphs.surface import LATEST
from gradcheck.lazy import lazy_module

# The `torch` extra: the parity check needs it, checking minigrad functions does not. Imported on
# first use (`lazy_module`): the process that writes a campaign's reports imports the modules that
# name torch, but only its workers compute with it, so only they pay torch's seconds of start-up.
# One intra-op thread: the harness works on tiny tensors, where threads only add overhead, and under
# load their spin-waiting made one 24-element softmax take 16 ms instead of 2 us (measured here).
if TYPE_CHECKING:  # the type checker reads torch's own annotations
    import torch
else:
    torch = lazy_module("torch", then=lambda torch: torch.set_num_threads(1))


def _tensor(x: Any, like: Any = None) -> Any:
    if isinstance(x, torch.Tensor):
        return x
    dtype = like.dtype if like is not None else torch.float64
    return torch.as_tensor(np.asarray(x), dtype=dtype)


def _integer_tensor(c: Any) -> Any:
    """An exponent (a number or a 0-d tensor) as a 0-d int64 tensor."""
    return torch.as_tensor(c).detach().long() if isinstance(c, torch.Tensor) else torch.tensor(int(c))


# The other spellings torch documents for the ops (aliases and functional forms), and the
# exponents `**` takes: a Python int, a 0-d integer tensor and a 0-d float64 tensor, each a
# kernel of its own.
TORCH_SPELLINGS = (
    Spelling("abs", "torch.absolute", lambda a, k: torch.absolute(a[0])),
    Spelling("abs", "torch.abs", lambda a, k: torch.abs(a[0])),
    Spelling("relu", "torch.relu", lambda a, k: torch.relu(a[0])),
    Spelling("relu", "F.relu", lambda a, k: torch.nn.functional.relu(a[0])),
    Spelling("maximum", "torch.max(x, y)", lambda a, k: torch.max(a[0], a[1])),
    Spelling("pow", "torch.pow", lambda a, k: torch.pow(a[0], a[1])),
    Spelling("pow", "x ** int tensor", lambda a, k: a[0] ** _integer_tensor(a[1]), integer_exponent=True),
    Spelling("pow_const", "torch.pow", lambda a, k: torch.pow(a[0], k["exponent"])),
    Spelling("pow_const", "Tensor.pow", lambda a, k: a[0].pow(k["exponent"])),
    Spelling("pow_const", "x ** int", lambda a, k: a[0] ** int(k["exponent"]), integer_exponent=True),
    Spelling(
        "pow_const",
        "x ** int tensor",
        lambda a, k: a[0] ** torch.tensor(int(k["exponent"])),
        integer_exponent=True,
    ),
    Spelling(
        "pow_const",
        "x ** 0-dim tensor",
        lambda a, k: a[0] ** torch.tensor(float(k["exponent"]), dtype=torch.float64),
    ),
)


class TorchAdapter(EngineAdapter):
    """torch tensors; gradients by `torch.autograd.grad`, Hessian-vector products through it twice."""

    name = "torch"
    registry_release = LATEST  # a built-in adapter handles every form of its ops
    ops = frozenset(TENSOR_OPS)
    tensor = True
    create_graph = True
    forward_mode = True  # torch.autograd.forward_ad's dual tensors
    transforms = ("torch.func.jacrev", "torch.func.jacfwd", "torch.func.vmap")
    spellings = TORCH_SPELLINGS
    value_names = "torch.Tensor"
    dtypes = ("float64", "float32")

    def leaf(self, value: Any) -> Any:
        return torch.tensor(np.asarray(value, dtype=self.dtype), requires_grad=True)

    def scalar_tensor(self, value: float) -> Any:
        """A 0-d float64 tensor in either dtype: in float32, torch's type promotion decides."""
        return torch.tensor(np.asarray(value, dtype=np.float64), requires_grad=True)

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        return REGISTRY[op].apply_torch(args, attrs)

    def value(self, node: Any) -> np.ndarray:
        return np.array(node.detach().numpy(force=True))

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        grads = self.grad(outputs, inputs, cotangent)
        return [None if g is None else self.value(g) for g in grads]

    def backward(self, output: Any) -> None:
        output.backward(retain_graph=True)  # the graph stays usable for a second backward, as checked

    def zero_grad(self, nodes: Sequence[Any]) -> None:
        for node in nodes:
            node.grad = None

    def grad_of(self, node: Any) -> Any:
        """`.grad`, or None on an interior tensor that does not retain its gradient (torch keeps none)."""
        if not (node.is_leaf or node.retains_grad):
            return None
        return node.grad

    def hvp(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        grads = self.grad(outputs, inputs, cotangent, create_graph=True)
        total = sum((g * _tensor(u, g)).sum() for g, u in zip(grads, direction))
        if not (isinstance(total, torch.Tensor) and total.requires_grad):
            return [None] * len(inputs)  # gradients that are constants (a linear graph): H·v is 0
        second = torch.autograd.grad(total, list(inputs), allow_unused=True)
        return [None if g is None else self.value(g) for g in second]

    def run_jvp(
        self, graph: Graph, values: Sequence[Any], direction: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        """The graph on dual tensors (`torch.autograd.forward_ad`): each output's primal and tangent."""
        forward_ad = torch.autograd.forward_ad  # an attribute: `from torch...` would run lazy torch twice
        with forward_ad.dual_level():
            leaves = [
                forward_ad.make_dual(
                    _tensor(np.asarray(v, dtype=self.dtype)), _tensor(np.asarray(d, dtype=self.dtype))
                )
                for v, d in zip(values, direction)
            ]
            nodes = self.program(graph).run(leaves, self.operand)
            duals = [forward_ad.unpack_dual(nodes[o]) for o in graph.outputs]
            forward = [self.value(d.primal) for d in duals]
            tangents = [
                np.zeros_like(f) if d.tangent is None else self.value(d.tangent)
                for d, f in zip(duals, forward)
            ]
        return forward, tangents

    def _weighted(self, graph: Graph) -> Any:
        """The graph as a function of its inputs, then its cotangents, to the cotangent-weighted
        sum of its outputs: what `torch.func`'s transforms differentiate."""
        program, n = self.program(graph), len(graph.inputs)

        def weighted(*args: Any) -> Any:
            nodes = program.run(list(args[:n]), self.operand)
            return sum((c * nodes[o]).sum() for c, o in zip(args[n:], graph.outputs))

        return weighted

    def _tensors(self, values: Sequence[Any]) -> list[Any]:
        return [_tensor(np.asarray(v, dtype=self.dtype)) for v in values]

    def run_transform(
        self, name: str, graph: Graph, points: Sequence[Sequence[Any]], cotangents: Sequence[Sequence[Any]]
    ) -> list[list[Any]]:
        """The gradients by `torch.func` of the cotangent-weighted outputs: their Jacobian (a
        gradient) by `jacrev` or `jacfwd` at the first point, or their `grad` mapped over every
        point in one call (`vmap`), where the check has a loop of backward passes."""
        func = torch.func  # an attribute: `from torch...` would run lazy torch twice
        weighted, argnums = self._weighted(graph), tuple(range(len(graph.inputs)))
        if name == "torch.func.vmap":
            columns = zip(*[self._tensors(p) + self._tensors(c) for p, c in zip(points, cotangents)])
            grads = func.vmap(func.grad(weighted, argnums=argnums))(*[torch.stack(c) for c in columns])
            return [[self.value(g[k]) for g in grads] for k in range(len(points))]
        jacobians = {"torch.func.jacrev": func.jacrev, "torch.func.jacfwd": func.jacfwd}
        if name not in jacobians:
            raise NotImplementedError(f"engine {self.name!r} has no transform {name!r}")
        at = self._tensors(points[0]) + self._tensors(cotangents[0])
        return [[self.value(g) for g in jacobians[name](weighted, argnums=argnums)(*at)]]

    # `hvp` is reverse over reverse (`autograd.grad` twice); this is the other order
    hvp_transforms = ("forward over reverse (forward_ad over autograd.grad)",)

    def run_hvp_transform(
        self,
        name: str,
        graph: Graph,
        values: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        """The Hessian-vector product as the tangent, along `direction`, of the gradient that
        `autograd.grad(create_graph=True)` takes of dual inputs (`torch.autograd.forward_ad`): the
        backward pass's own operations differentiated in forward mode. (`torch.func.jvp` of
        `torch.func.grad` runs the same rules, more slowly: functorch wraps every tensor.)"""
        if name not in self.hvp_transforms:
            raise NotImplementedError(f"engine {self.name!r} has no Hessian-vector product by {name!r}")
        forward_ad = torch.autograd.forward_ad  # an attribute: `from torch...` would run lazy torch twice
        with forward_ad.dual_level():
            leaves = [
                forward_ad.make_dual(x, t).requires_grad_()
                for x, t in zip(self._tensors(values), self._tensors(direction))
            ]
            nodes = self.program(graph).run(list(leaves), self.operand)
            outputs = [nodes[o] for o in graph.outputs]
            grads = torch.autograd.grad(
                outputs, leaves, self._tensors(cotangent), create_graph=True, allow_unused=True
            )
            tangents = [None if g is None else forward_ad.unpack_dual(g).tangent for g in grads]
            return [np.zeros(np.shape(v)) if t is None else self.value(t) for t, v in zip(tangents, values)]

    # --- checking any function of torch tensors ----------------------------------------------------

    def is_node(self, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor)

    def requires_grad(self, node: Any) -> bool:
        return bool(node.requires_grad)

    def like(self, template: Any, array: np.ndarray, requires_grad: bool = False) -> Any:
        data = torch.as_tensor(np.asarray(array)).to(template.dtype)
        return data.requires_grad_(requires_grad or bool(template.requires_grad))

    def no_grad(self) -> AbstractContextManager[Any]:
        return torch.no_grad()

    def enable_grad(self) -> AbstractContextManager[Any]:
        return torch.enable_grad()

    def grad(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        create_graph: bool = False,
    ) -> list[Any]:
        seeds = [_tensor(c, out).reshape(out.shape) for c, out in zip(cotangent, outputs)]
        return list(
            torch.autograd.grad(
                list(outputs),
                list(inputs),
                seeds,
                allow_unused=True,
                retain_graph=True,  # the checker differentiates one graph many times
                create_graph=create_graph,
                materialize_grads=create_graph,
            )
        )

    def op_names(self, outputs: Sequence[Any]) -> set[str]:
        """The registry names of the autograd nodes behind `outputs` ("SinBackward0" is `sin`)."""
        names, seen = set(), set()
        stack = [out.grad_fn for out in outputs if out.grad_fn is not None]
        while stack:
            fn = stack.pop()
            if fn in seen:
                continue
            seen.add(fn)
            name = re.sub(r"Backward\d*$", "", type(fn).__name__)
            if name != "AccumulateGrad":
                names.add(registry_name(name))
            stack.extend(next_fn for next_fn, _ in fn.next_functions if next_fn is not None)
        return names

    def source(self, node: Any) -> str:
        data = self.value(node)
        return f"torch.tensor({data.tolist()!r}, dtype=torch.{data.dtype}, requires_grad=True)"

    def source_imports(self, nodes: Sequence[Any]) -> list[str]:
        return ["import torch"]
